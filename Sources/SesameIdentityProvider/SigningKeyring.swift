import Foundation
import Synchronization
import SesameCore

/// The provider's token-signing keys: one current ES256 and one current RS256 key, made on first start (the first
/// node to start wins; the others read its keys), their private keys sealed at rest like TOTP secrets. A rotated
/// key stays published in the JWKS (and accepted for the provider's own tokens) until every token it signed has
/// expired. Keys are read from the store again after `refresh` seconds, so a rotation on one node reaches all.
package final class SigningKeyring: Sendable {
    package let store: any Store
    package let ciphers: FieldCiphers
    package let clock: ServerClock
    /// The longest lifetime of a token the keys sign; a retired key is dropped this long after its retirement.
    package let longestTokenLifetime: TimeInterval
    package let refresh: TimeInterval = 60
    private let cache = Mutex<(keys: [SigningKey], loadedAt: Date)?>(nil)

    package init(store: any Store, ciphers: FieldCiphers, clock: ServerClock, longestTokenLifetime: TimeInterval) {
        self.store = store
        self.ciphers = ciphers
        self.clock = clock
        self.longestTokenLifetime = longestTokenLifetime
    }

    /// Every key still published: current ones and retired ones whose tokens may still be live.
    package func keys() async throws -> [SigningKey] {
        let now = clock.now()
        if let cached = cache.withLock({ $0 }), now.timeIntervalSince(cached.loadedAt) < refresh { return cached.keys }
        var stored = try await store.signingKeys()
        for algorithm in JSONWebToken.Algorithm.allCases
        where !stored.contains(where: { $0.algorithm == algorithm.rawValue && $0.retiredAt == nil }) {
            stored = try await store.ensureSigningKey(try seal(SigningKey.generate(algorithm, now: now)))
        }
        let keys = try stored.compactMap { row -> SigningKey? in
            if let retired = row.retiredAt, now.timeIntervalSince(retired) > longestTokenLifetime { return nil }
            guard let algorithm = IDTokenAlgorithm(rawValue: row.algorithm) else { return nil }
            let der = try ciphers.signingKey.open(row.sealedPrivateKey, userID: row.kid)
            return try SigningKey(
                kid: row.kid, algorithm: algorithm, der: der, createdAt: row.createdAt, retiredAt: row.retiredAt)
        }
        cache.withLock { $0 = (keys, now) }
        return keys
    }

    /// The key that signs new tokens of `algorithm`.
    package func current(_ algorithm: JSONWebToken.Algorithm) async throws -> SigningKey {
        guard let key = try await keys().last(where: { $0.algorithm == algorithm && $0.retiredAt == nil }) else {
            throw OAuthError(.serverError, "No signing key.", status: .internalServerError)
        }
        return key
    }

    /// `sesame signing-keys rotate`: a new current key for each algorithm; the old ones retire.
    package func rotate() async throws -> [String] {
        let now = clock.now()
        var made: [String] = []
        for algorithm in JSONWebToken.Algorithm.allCases {
            let key = try SigningKey.generate(algorithm, now: now)
            try await store.addSigningKey(try seal(key))
            made.append("\(algorithm.rawValue) \(key.kid)")
        }
        cache.withLock { $0 = nil }
        return made
    }

    private func seal(_ key: SigningKey) throws -> StoredSigningKey {
        StoredSigningKey(
            kid: key.kid, algorithm: key.algorithm.rawValue,
            sealedPrivateKey: try ciphers.signingKey.seal(key.privateKeyDER, userID: key.kid),
            createdAt: key.createdAt, retiredAt: nil
        )
    }
}
