import Foundation
import SQLKit
import SesameBytes

/// One line of `sesame seal-keys status`: how many values of a purpose are sealed under a key.
public struct SealedSecretCount: Sendable, Equatable {
    public enum KeyState: String, Sendable, Equatable {
        /// New values are sealed under it.
        case sealing
        /// In the key file (or the database key) but not first: opens values, seals none.
        case openOnly = "open only"
        /// A file key id that is not in the key file: these values cannot be opened.
        case missing = "missing"
        /// Not a sealed value this version knows.
        case unrecognised
    }

    public let purpose: String
    /// `database` or a file key id.
    public let key: String
    public let state: KeyState
    public let count: Int
}

/// What `sesame seal-keys rotate` did.
public struct ResealReport: Sendable, Equatable {
    /// Values sealed again under the sealing key.
    public var resealed = 0
    /// Values already under the sealing key.
    public var current = 0
    /// Rows written by someone else between the read and the update (left as they were).
    public var changedMeanwhile = 0
    /// Rows that could not be opened: purpose, user id and the reason (no secret material).
    public var failures: [String] = []
}

/// TOTP secrets and phone numbers sealed at rest: how many are under each key, and sealing them again under the
/// sealing key (`sesame seal-keys`).
public protocol SealedSecretStore {
    /// How many stored TOTP secrets and phone numbers are sealed under each key.
    func sealedSecretCounts() async throws -> [SealedSecretCount]
    /// Seals every stored TOTP secret and phone number that is not under the sealing key again under it; each
    /// row is replaced only if it still holds the value that was read (a concurrent write wins).
    func resealSecrets() async throws -> ResealReport
}

extension SQLStore: SealedSecretStore {
    /// One page of sealed values: (user id, sealed bytes), ordered by user id, after `after`.
    private func sealedPage(_ purpose: FieldCipher.Purpose, after: String, limit: Int) async throws -> [(
        String, [UInt8]
    )] {
        switch purpose {
        case .totp:
            return try await db.raw(
                "SELECT user_id, secret FROM totp WHERE user_id > \(bind: after) ORDER BY user_id LIMIT \(bind: limit)"
            ).all().map {
                (
                    try $0.decode(column: "user_id", as: String.self),
                    [UInt8](try $0.decode(column: "secret", as: Data.self))
                )
            }
        case .sms:
            return try await db.raw(
                "SELECT user_id, phone FROM sms WHERE user_id > \(bind: after) ORDER BY user_id LIMIT \(bind: limit)"
            ).all().map {
                (
                    try $0.decode(column: "user_id", as: String.self),
                    Array(try $0.decode(column: "phone", as: String.self).utf8)
                )
            }
        case .signingKey:
            return try await db.raw(
                "SELECT kid, private_key FROM oauth_signing_keys WHERE kid > \(bind: after) ORDER BY kid LIMIT \(bind: limit)"
            ).all().map {
                (
                    try $0.decode(column: "kid", as: String.self),
                    [UInt8](try $0.decode(column: "private_key", as: Data.self))
                )
            }
        }
    }

    /// Calls `body` with every sealed value of a purpose (bytes as stored: the phone column's base64url text as UTF-8),
    /// reading a page at a time.
    private func forEachSealed(_ purpose: FieldCipher.Purpose, _ body: (String, [UInt8]) async throws -> Void)
        async throws
    {
        var after = ""
        while true {
            let page = try await sealedPage(purpose, after: after, limit: 500)
            for (userID, stored) in page { try await body(userID, stored) }
            guard let last = page.last, page.count == 500 else { return }
            after = last.0
        }
    }

    private func cipher(_ purpose: FieldCipher.Purpose) -> FieldCipher { ciphers.cipher(purpose) }

    private func sealedUnder(_ purpose: FieldCipher.Purpose, _ stored: [UInt8]) -> FieldCipher.SealedUnder {
        purpose == .sms
            ? ciphers.sms.sealedUnder(text: String(decoding: stored, as: UTF8.self))
            : cipher(purpose).sealedUnder(stored)
    }

    public func sealedSecretCounts() async throws -> [SealedSecretCount] {
        var counts: [SealedSecretCount] = []
        for purpose in FieldCipher.Purpose.allCases {
            var byKey: [FieldCipher.SealedUnder: Int] = [:]
            try await forEachSealed(purpose) { _, stored in byKey[sealedUnder(purpose, stored), default: 0] += 1 }
            for (key, count) in byKey {
                let name: String
                switch key {
                case .database: name = "database"
                case .file(let id): name = Hex.encode(id)
                case .unrecognised: name = "unrecognised"
                }
                counts.append(
                    SealedSecretCount(
                        purpose: purpose.rawValue, key: name, state: cipher(purpose).state(of: key), count: count))
            }
        }
        return counts.sorted { ($0.purpose, $0.key) < ($1.purpose, $1.key) }
    }

    public func resealSecrets() async throws -> ResealReport {
        var report = ResealReport()
        for purpose in FieldCipher.Purpose.allCases {
            try await forEachSealed(purpose) { userID, stored in
                do {
                    let updated: Bool
                    switch purpose {
                    case .totp:
                        guard let new = try ciphers.totp.resealed(stored, userID: userID) else {
                            report.current += 1; return
                        }
                        updated =
                            !(try await db.raw(
                                "UPDATE totp SET secret = \(bind: Data(new)) WHERE user_id = \(bind: userID) AND secret = \(bind: Data(stored)) RETURNING user_id"
                            ).all()).isEmpty
                    case .sms:
                        let text = String(decoding: stored, as: UTF8.self)
                        guard let new = try ciphers.sms.resealedText(text, userID: userID) else {
                            report.current += 1; return
                        }
                        updated =
                            !(try await db.raw(
                                "UPDATE sms SET phone = \(bind: new) WHERE user_id = \(bind: userID) AND phone = \(bind: text) RETURNING user_id"
                            ).all()).isEmpty
                    case .signingKey:
                        guard let new = try ciphers.signingKey.resealed(stored, userID: userID) else {
                            report.current += 1; return
                        }
                        updated =
                            !(try await db.raw(
                                "UPDATE oauth_signing_keys SET private_key = \(bind: Data(new)) WHERE kid = \(bind: userID) AND private_key = \(bind: Data(stored)) RETURNING kid"
                            ).all()).isEmpty
                    }
                    if updated { report.resealed += 1 } else { report.changedMeanwhile += 1 }
                } catch StoreError.unknownSealingKey(_, let keyID) {
                    report.failures.append(
                        "\(purpose.rawValue) of user \(userID): sealed under file key \(keyID), which is not in the key file"
                    )
                } catch StoreError.undecryptable {
                    report.failures.append(
                        "\(purpose.rawValue) of user \(userID): fails authentication (damaged or moved)")
                }
            }
        }
        return report
    }
}
