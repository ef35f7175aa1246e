import Foundation
import SQLKit
import SesameCore

/// A recovery link as stored (never its secret: only the secret's SHA-256).
package struct RecoveryLinkRecord: Sendable, Equatable {
    package let id: String
    package let userID: String
    package let secretHash: [UInt8]
    /// `mail` or `show`.
    package let delivery: String
    /// Who made it, as the audit log names them.
    package let createdBy: String
    package let createdAt: Date
    package let expiresAt: Date
    package var usedAt: Date?

    /// Whether it can still open a session.
    package func usable(at now: Date) -> Bool { usedAt == nil && expiresAt > now }
}

/// Recovery links (migration 21) and the writes that go with them.
package protocol RecoveryLinkStore: Sendable {
    /// The link, its audit event and (mailed) its mail in the outbox, in one transaction; the person's earlier
    /// links that were not used end with it (one live link per person).
    func createRecoveryLink(_ link: RecoveryLinkRecord, mail: OutgoingMail?, audit: AuditEvent) async throws
    func recoveryLink(id: String) async throws -> RecoveryLinkRecord?
    /// Spends the link and opens the limited session, with its audit event and notice, in one transaction; false
    /// (nothing written) when it was used or expired in the meantime (of two uses at once, one wins).
    func useRecoveryLink(
        id: String, at: Date, tokenHash: [UInt8], session: SessionRecord, audit: AuditEvent, notice: AccountNotice
    ) async throws -> Bool
}

extension SQLStore: RecoveryLinkStore {
    package func createRecoveryLink(_ link: RecoveryLinkRecord, mail: OutgoingMail?, audit: AuditEvent) async throws {
        let insertMail = try mail.map {
            try outboxInsert(
                $0, kind: EmailMails.recoveryLinkKind, id: UUID().uuidString.lowercased(), at: link.createdAt)
        }
        try await engine.withTransaction { db in
            try await db.raw(
                "DELETE FROM recovery_links WHERE user_id = \(bind: link.userID) AND used_at IS NULL"
            ).run()
            try await db.raw(
                """
                INSERT INTO recovery_links (id, user_id, secret_hash, delivery, created_by, created_at, expires_at)
                VALUES (\(bind: link.id), \(bind: link.userID), \(bind: Data(link.secretHash)), \(bind: link.delivery),
                    \(bind: link.createdBy), \(bind: link.createdAt.milliseconds), \(bind: link.expiresAt.milliseconds))
                """
            ).run()
            if let insertMail { try await db.raw(insertMail).run() }
            try await db.raw(Self.auditInsert(audit)).run()
        }
    }

    package func recoveryLink(id: String) async throws -> RecoveryLinkRecord? {
        guard
            let row = try await db.raw(
                """
                SELECT id, user_id, secret_hash, delivery, created_by, created_at, expires_at, used_at
                FROM recovery_links WHERE id = \(bind: id)
                """
            ).first()
        else { return nil }
        return RecoveryLinkRecord(
            id: try row.decode(column: "id", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            secretHash: [UInt8](try row.decode(column: "secret_hash", as: Data.self)),
            delivery: try row.decode(column: "delivery", as: String.self),
            createdBy: try row.decode(column: "created_by", as: String.self),
            createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(milliseconds: try row.decode(column: "expires_at", as: Int64.self)),
            usedAt: try row.decode(column: "used_at", as: Int64?.self).map(Date.init(milliseconds:)))
    }

    package func useRecoveryLink(
        id: String, at: Date, tokenHash: [UInt8], session: SessionRecord, audit: AuditEvent, notice: AccountNotice
    ) async throws -> Bool {
        try await engine.withTransaction { db in
            let spent = try await db.raw(
                """
                UPDATE recovery_links SET used_at = \(bind: at.milliseconds)
                WHERE id = \(bind: id) AND used_at IS NULL AND expires_at > \(bind: at.milliseconds) RETURNING id
                """
            ).first()
            guard spent != nil else { return false }
            try await db.raw(Self.sessionInsert(tokenHash: tokenHash, session)).run()
            try await db.raw(Self.auditInsert(audit)).run()
            try await notice.give(in: db)
            return true
        }
    }
}
