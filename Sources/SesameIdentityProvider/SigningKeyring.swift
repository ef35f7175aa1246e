import Crypto
import CryptoExtras
import Foundation
import JWTKit
import Synchronization
import WebAuthn
import SesameCore

/// The provider's token-signing keys: one current ES256 and one current RS256 key, made on first start (the first
/// node to start wins; the others read its keys), their private keys sealed at rest like TOTP secrets. A rotated
/// key stays published in the JWKS (and accepted for the provider's own tokens) until every token it signed has
/// expired. Keys are read from the store again after `refresh` seconds, so a rotation on one node reaches all.
package final class SigningKeyring: Sendable {
    package let store: any IdentityProviderStorage
    package let ciphers: FieldCiphers
    package let clock: ServerClock
    /// The longest lifetime of a token the keys sign; a retired key is dropped this long after its retirement.
    package let longestTokenLifetime: TimeInterval
    package let refresh: TimeInterval = 60
    private let cache = Mutex<(keys: [SigningKey], tokenKeys: TokenKeys, loadedAt: Date)?>(nil)

    package init(
        store: any IdentityProviderStorage, ciphers: FieldCiphers, clock: ServerClock,
        longestTokenLifetime: TimeInterval
    ) {
        self.store = store
        self.ciphers = ciphers
        self.clock = clock
        self.longestTokenLifetime = longestTokenLifetime
    }

    /// Every key still published: current ones and retired ones whose tokens may still be live.
    package func keys() async throws -> [SigningKey] { try await loaded().keys }

    /// The published keys as jwt-kit keys, which sign the provider's tokens and read them back.
    package func tokenKeys() async throws -> TokenKeys { try await loaded().tokenKeys }

    private func loaded() async throws -> (keys: [SigningKey], tokenKeys: TokenKeys) {
        let now = clock.now()
        if let cached = cache.withLock({ $0 }), now.timeIntervalSince(cached.loadedAt) < refresh {
            return (cached.keys, cached.tokenKeys)
        }
        var stored = try await store.signingKeys()
        for algorithm in IDTokenAlgorithm.allCases
        where !stored.contains(where: { $0.algorithm == algorithm.rawValue && $0.retiredAt == nil }) {
            stored = try await store.ensureSigningKey(try seal(SigningKey.generate(algorithm, now: now)))
        }
        let keys = try stored.compactMap { row -> SigningKey? in
            if let retired = row.retiredAt, now.timeIntervalSince(retired) > longestTokenLifetime { return nil }
            guard let algorithm = IDTokenAlgorithm(rawValue: row.algorithm) else { return nil }
            let der = try ciphers.cipher(.signingKey).open(row.sealedPrivateKey, userID: row.kid)
            return try SigningKey(
                kid: row.kid, algorithm: algorithm, der: der, createdAt: row.createdAt, retiredAt: row.retiredAt)
        }
        let tokenKeys = await TokenKeys(keys)
        cache.withLock { $0 = (keys, tokenKeys, now) }
        return (keys, tokenKeys)
    }

    /// The JWK set document of the published keys (`/oauth/jwks`).
    package func jwks() async throws -> Data {
        try TokenKeys.serializer.jsonEncoder.encode(["keys": try await keys().map(\.publicJWK)])
    }

    /// The key that signs new tokens of `algorithm`.
    package func current(_ algorithm: IDTokenAlgorithm) async throws -> SigningKey {
        guard let key = try await keys().last(where: { $0.algorithm == algorithm && $0.retiredAt == nil }) else {
            throw OAuthError(.serverError, "No signing key.", status: .internalServerError)
        }
        return key
    }

    /// `claims` signed with the current key of `algorithm`, the header's `typ` being `type`.
    package func sign(_ claims: some TokenClaims, _ algorithm: IDTokenAlgorithm, type: String = "JWT") async throws
        -> String
    {
        let key = try await current(algorithm)
        return try await tokenKeys().sign(claims, kid: key.kid, type: type)
    }

    /// The `typ` and claims of a token one of the published keys signed; `IdentityProviderError.tokenRefused` for any other.
    package func verify<Claims: TokenClaims>(_ token: String, as _: Claims.Type = Claims.self) async throws -> (
        type: String?, claims: Claims
    ) {
        try await tokenKeys().verify(token, as: Claims.self)
    }

    /// `sesame signing-keys rotate` and the admin API's rotation: a new current key for each algorithm, the old
    /// ones retiring, and the audit event `audit` makes of the new keys (`ES256 <kid>, RS256 <kid>`), in one
    /// transaction.
    package func rotate(audit: (_ made: String, _ at: Date) -> AuditEvent?) async throws -> [String] {
        let now = clock.now()
        var made: [String] = []
        var sealed: [StoredSigningKey] = []
        for algorithm in IDTokenAlgorithm.allCases {
            let key = try SigningKey.generate(algorithm, now: now)
            sealed.append(try seal(key))
            made.append("\(algorithm.rawValue) \(key.kid)")
        }
        try await store.addSigningKeys(sealed, audit: audit(made.joined(separator: ", "), now))
        cache.withLock { $0 = nil }
        return made
    }

    private func seal(_ key: SigningKey) throws -> StoredSigningKey {
        StoredSigningKey(
            kid: key.kid, algorithm: key.algorithm.rawValue,
            sealedPrivateKey: try ciphers.cipher(.signingKey).seal(key.privateKeyDER, userID: key.kid),
            createdAt: key.createdAt, retiredAt: nil
        )
    }
}

/// A token-signing key pair of the provider: its jwt-kit key, and the private key's DER that the store keeps
/// sealed (PKCS#8 for P-256, PKCS#1 for RSA), as it always has.
package struct SigningKey: TokenKey {
    package let kid: String
    package let material: TokenKeyMaterial<ES256PrivateKey, JWTKit.Insecure.RSA.PrivateKey>
    package let privateKeyDER: [UInt8]
    package let createdAt: Date
    package let retiredAt: Date?

    /// A new key of `algorithm` (RSA: 2048 bits, the size RFC 7518 §3.3 requires at least).
    package static func generate(_ algorithm: IDTokenAlgorithm, now: Date) throws -> SigningKey {
        let der: [UInt8] =
            switch algorithm {
            case .es256: Array(P256.Signing.PrivateKey().derRepresentation)
            case .rs256: Array(try _RSA.Signing.PrivateKey(keySize: .bits2048).derRepresentation)
            }
        return try SigningKey(
            kid: Base64URL.encode(Secrets.random(12)), algorithm: algorithm, der: der, createdAt: now, retiredAt: nil)
    }

    /// The key from the DER the store keeps.
    package init(kid: String, algorithm: IDTokenAlgorithm, der: [UInt8], createdAt: Date, retiredAt: Date?) throws {
        switch algorithm {
        case .es256: material = .es256(try ES256PrivateKey(backing: P256.Signing.PrivateKey(derRepresentation: der)))
        case .rs256:
            material = .rs256(
                try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(derRepresentation: der)))
        }
        self.kid = kid
        self.privateKeyDER = der
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }

    /// The public key as a JWK (RFC 7517; EC members per RFC 7518 §6.2, RSA §6.3), for the JWKS.
    package var publicJWK: PublishedJWK {
        let identifier = JWKIdentifier(string: kid)
        switch material {
        case .es256(let key):
            let (x, y) = key.publicKey.parameters ?? ("", "")
            return PublishedJWK(.ecdsa(.es256, identifier: identifier, x: x, y: y, curve: .p256))
        case .rs256(let key):
            let primitives = try? key.publicKey.getKeyPrimitives()
            return PublishedJWK(
                .rsa(
                    .rs256, identifier: identifier,
                    modulus: Base64URL.encode(Array((primitives?.modulus ?? Data()).drop { $0 == 0 })),
                    exponent: Base64URL.encode(Array((primitives?.publicExponent ?? Data()).drop { $0 == 0 }))))
        }
    }
}

/// A JWK as the JWKS publishes it: jwt-kit's members and `"use": "sig"` (RFC 7517 §4.2), which jwt-kit's `JWK`
/// does not carry and relying parties may filter on.
package struct PublishedJWK: Encodable, Sendable {
    package let key: JWK

    package init(_ key: JWK) { self.key = key }

    private enum CodingKeys: String, CodingKey { case use }

    package func encode(to encoder: any Encoder) throws {
        try key.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("sig", forKey: .use)
    }
}
