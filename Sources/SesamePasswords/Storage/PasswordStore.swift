import Foundation
import SQLKit
import SesameCore

/// An scrypt password hash with the parameters it was made with.
public struct PasswordRecord: Sendable, Equatable {
    public var hash: [UInt8]
    public var salt: [UInt8]
    public var logN: Int
    public var r: Int
    public var p: Int

    package init(hash: [UInt8], salt: [UInt8], logN: Int, r: Int, p: Int) {
        self.hash = hash
        self.salt = salt
        self.logN = logN
        self.r = r
        self.p = p
    }
}

/// Password hashes.
public protocol PasswordStore {
    /// An account made by an operator (`sesame users create`): the account, its password and the audit event, in one
    /// transaction; `StoreError.conflict` when the username is taken.
    func createUser(_ user: User, password: PasswordRecord, audit: AuditEvent) async throws

    func password(userID: String) async throws -> PasswordRecord?
    func setPassword(userID: String, _ record: PasswordRecord, at: Date) async throws
    /// Sets or changes the password, ends the account's other sessions (all but `keepingSession`) and revokes every
    /// OAuth grant of the account, in one transaction; returns how many sessions ended.
    func replacePassword(userID: String, _ record: PasswordRecord, at: Date, keepingSession: String) async throws -> Int
    /// Refused (`lastWayIn`) when the account has no passkey.
    func deletePassword(userID: String) async throws -> RemovalOutcome
}

/// The password changes the account's owner is told about by mail: each gives its notice (`AccountNotice`) in the
/// change's own transaction, so a refused or rolled-back change mails nothing.
package protocol NoticedPasswordChanges {
    /// As `PasswordStore.replacePassword`, with the notice in the same transaction.
    func replacePassword(
        userID: String, _ record: PasswordRecord, at: Date, keepingSession: String, notice: AccountNotice?
    ) async throws -> Int
    /// As `PasswordStore.deletePassword`; the notice only when the password was removed.
    func deletePassword(userID: String, notice: AccountNotice?) async throws -> RemovalOutcome
}

extension SQLStore: PasswordStore {
    public func createUser(_ user: User, password: PasswordRecord, audit: AuditEvent) async throws {
        try await engine.withTransaction { db in
            do { try await db.raw(Self.userInsert(user)).run() } catch  where Self.isUniqueViolation(error) {
                throw StoreError.conflict
            }
            try await db.raw(Self.passwordUpsert(userID: user.id, password, at: user.createdAt)).run()
            try await db.raw(Self.auditInsert(audit)).run()
        }
    }

    package struct PasswordRow: Decodable {
        /// Column names spelled out: a key strategy converts every name again for every row (a few per cent of a sign-in).
        package enum CodingKeys: String, CodingKey {
            case hash, salt, logN = "log_n", r, p
        }

        package let hash: Data
        package let salt: Data
        package let logN: Int
        package let r: Int
        package let p: Int
    }

    package static func passwordUpsert(userID: String, _ record: PasswordRecord, at: Date) -> SQLQueryString {
        """
        INSERT INTO passwords (user_id, hash, salt, log_n, r, p, updated_at)
        VALUES (\(bind: userID), \(bind: Data(record.hash)), \(bind: Data(record.salt)), \(bind: record.logN), \(bind: record.r),
                \(bind: record.p), \(bind: at.milliseconds))
        ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, salt = excluded.salt, log_n = excluded.log_n,
            r = excluded.r, p = excluded.p, updated_at = excluded.updated_at
        """
    }

    public func password(userID: String) async throws -> PasswordRecord? {
        guard
            let row = try await db.raw("SELECT hash, salt, log_n, r, p FROM passwords WHERE user_id = \(bind: userID)")
                .first()
        else {
            return nil
        }
        let r = try row.decode(model: PasswordRow.self)
        return PasswordRecord(hash: [UInt8](r.hash), salt: [UInt8](r.salt), logN: r.logN, r: r.r, p: r.p)
    }

    public func setPassword(userID: String, _ record: PasswordRecord, at: Date) async throws {
        try await db.raw(Self.passwordUpsert(userID: userID, record, at: at)).run()
    }

    public func replacePassword(userID: String, _ record: PasswordRecord, at: Date, keepingSession: String) async throws
        -> Int
    {
        try await replacePassword(userID: userID, record, at: at, keepingSession: keepingSession, notice: nil)
    }

    public func deletePassword(userID: String) async throws -> RemovalOutcome {
        try await deletePassword(userID: userID, notice: nil)
    }
}

extension SQLStore: NoticedPasswordChanges {
    package func replacePassword(
        userID: String, _ record: PasswordRecord, at: Date, keepingSession: String, notice: AccountNotice?
    ) async throws -> Int {
        try await engine.withTransaction { db in
            try await db.raw(Self.passwordUpsert(userID: userID, record, at: at)).run()
            // Whoever knew the old password may hold an app's tokens too: those end with the other sessions.
            try await schema.sessionsEnded(userID: userID, db, at: at)
            let ended = try await db.raw(
                "DELETE FROM sessions WHERE user_id = \(bind: userID) AND id <> \(bind: keepingSession) RETURNING id"
            ).all().count
            try await notice.give(in: db)
            return ended
        }
    }

    package func deletePassword(userID: String, notice: AccountNotice?) async throws -> RemovalOutcome {
        try await engine.withTransaction { [self] db in
            try await lockUser(db, userID)
            let deleted = try await db.raw(
                """
                DELETE FROM passwords WHERE user_id = \(bind: userID)
                    AND EXISTS (SELECT 1 FROM credentials WHERE user_id = \(bind: userID))
                RETURNING user_id
                """
            ).all()
            if !deleted.isEmpty {
                try await notice.give(in: db)
                return .removed
            }
            let exists = try await db.raw("SELECT user_id FROM passwords WHERE user_id = \(bind: userID)").first()
            return exists == nil ? .notFound : .lastWayIn
        }
    }
}
