import Foundation
import SQLKit
import SesameCore

/// Recovery codes: a set's salt and the salted hashes of its codes (never the codes).
public protocol RecoveryCodeStore {
    /// Replaces the account's set, in one transaction.
    func replaceRecoveryCodes(userID: String, salt: [UInt8], hashes: [[UInt8]], at: Date) async throws
    /// The set's salt and the hashes of the codes not used yet.
    func recoveryCodes(userID: String) async throws -> (salt: [UInt8], unused: [[UInt8]])?
    /// Marks the code used; false if it does not exist or was used already.
    func useRecoveryCode(userID: String, hash: [UInt8], at: Date) async throws -> Bool
    func unusedRecoveryCodeCount(userID: String) async throws -> Int
}

extension SQLStore: RecoveryCodeStore {
    public func replaceRecoveryCodes(userID: String, salt: [UInt8], hashes: [[UInt8]], at: Date) async throws {
        try await replaceRecoveryCodes(userID: userID, salt: salt, hashes: hashes, at: at, notice: nil)
    }

    package func replaceRecoveryCodes(
        userID: String, salt: [UInt8], hashes: [[UInt8]], at: Date, notice: AccountNotice?
    ) async throws {
        try await engine.withTransaction { db in
            try await db.raw("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)").run()
            try await db.raw(
                """
                INSERT INTO recovery_code_sets (user_id, salt, created_at) VALUES (\(bind: userID), \(bind: Data(salt)), \(bind: at.milliseconds))
                ON CONFLICT (user_id) DO UPDATE SET salt = excluded.salt, created_at = excluded.created_at
                """
            ).run()
            for hash in hashes {
                try await db.raw(
                    "INSERT INTO recovery_codes (user_id, code_hash) VALUES (\(bind: userID), \(bind: Data(hash)))"
                ).run()
            }
            try await notice.give(in: db)
        }
    }

    public func recoveryCodes(userID: String) async throws -> (salt: [UInt8], unused: [[UInt8]])? {
        guard let set = try await db.raw("SELECT salt FROM recovery_code_sets WHERE user_id = \(bind: userID)").first()
        else { return nil }
        let rows = try await db.raw(
            "SELECT code_hash FROM recovery_codes WHERE user_id = \(bind: userID) AND used_at IS NULL"
        ).all()
        return (
            [UInt8](try set.decode(column: "salt", as: Data.self)),
            try rows.map { [UInt8](try $0.decode(column: "code_hash", as: Data.self)) }
        )
    }

    public func useRecoveryCode(userID: String, hash: [UInt8], at: Date) async throws -> Bool {
        try await useRecoveryCode(userID: userID, hash: hash, at: at, notice: nil)
    }

    package func useRecoveryCode(userID: String, hash: [UInt8], at: Date, notice: AccountNotice?) async throws -> Bool {
        try await engine.withTransaction { db in
            let used =
                !(try await db.raw(
                    """
                    UPDATE recovery_codes SET used_at = \(bind: at.milliseconds)
                    WHERE user_id = \(bind: userID) AND code_hash = \(bind: Data(hash)) AND used_at IS NULL RETURNING user_id
                    """
                ).all()).isEmpty
            if used { try await notice.give(in: db) }
            return used
        }
    }

    public func unusedRecoveryCodeCount(userID: String) async throws -> Int {
        let row = try await db.raw(
            "SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = \(bind: userID) AND used_at IS NULL"
        ).first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }
}
