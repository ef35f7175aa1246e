import Foundation
import SQLKit
import SesameCore

/// An invitation as stored (never its secret: only the secret's SHA-256).
package struct InvitationRecord: Sendable, Equatable {
    package let id: String
    package let secretHash: [UInt8]
    package let email: String?
    package let groups: [String]
    package let createdAt: Date
    package let expiresAt: Date
    package var usedAt: Date?
    package var usedBy: String?
    package var revokedAt: Date?

    /// Whether it can still make an account.
    package func usable(at now: Date) -> Bool { usedAt == nil && revokedAt == nil && expiresAt > now }

    /// `usable`, `used`, `revoked` or `expired`, for `sesame invites list`.
    package func state(at now: Date) -> String {
        if usedAt != nil { return "used" }
        if revokedAt != nil { return "revoked" }
        return expiresAt > now ? "usable" : "expired"
    }
}

/// Invitations and the writes that go with them.
package protocol InvitationStore: Sendable {
    /// The invitation, its audit events and (with an address) its mail in the outbox, in one transaction.
    func createInvitation(_ invitation: InvitationRecord, mail: OutgoingMail?, mailKind: String, audit: [AuditEvent])
        async throws
    func invitation(id: String) async throws -> InvitationRecord?
    /// Every invitation the purge has not removed yet, newest first.
    func invitations() async throws -> [InvitationRecord]
    /// Revokes a usable invitation with its audit event, in one transaction; false (nothing written) when there is
    /// none with that id or it was used or revoked already.
    func revokeInvitation(id: String, at: Date, audit: AuditEvent) async throws -> Bool
}

extension SQLStore: InvitationStore {
    static let invitationColumns: SQLQueryString = """
        id, secret_hash, email, group_slugs, created_at, expires_at, used_at, used_by, revoked_at
        """

    package func createInvitation(
        _ invitation: InvitationRecord, mail: OutgoingMail?, mailKind: String, audit: [AuditEvent]
    ) async throws {
        let insertMail = try mail.map {
            try outboxInsert($0, kind: mailKind, id: UUID().uuidString.lowercased(), at: invitation.createdAt)
        }
        try await engine.withTransaction { db in
            try await db.raw(
                """
                INSERT INTO invitations (id, secret_hash, email, group_slugs, created_at, expires_at)
                VALUES (\(bind: invitation.id), \(bind: Data(invitation.secretHash)), \(bind: invitation.email),
                    \(bind: invitation.groups.joined(separator: ",")), \(bind: invitation.createdAt.milliseconds),
                    \(bind: invitation.expiresAt.milliseconds))
                """
            ).run()
            if let insertMail { try await db.raw(insertMail).run() }
            for event in audit { try await db.raw(Self.auditInsert(event)).run() }
        }
    }

    package func invitation(id: String) async throws -> InvitationRecord? {
        try await db.raw("SELECT \(Self.invitationColumns) FROM invitations WHERE id = \(bind: id)").first()
            .map(Self.invitationRecord)
    }

    package func invitations() async throws -> [InvitationRecord] {
        try await db.raw("SELECT \(Self.invitationColumns) FROM invitations ORDER BY created_at DESC, id").all()
            .map(Self.invitationRecord)
    }

    package func revokeInvitation(id: String, at: Date, audit: AuditEvent) async throws -> Bool {
        try await engine.withTransaction { db in
            let revoked = try await db.raw(
                """
                UPDATE invitations SET revoked_at = \(bind: at.milliseconds)
                WHERE id = \(bind: id) AND used_at IS NULL AND revoked_at IS NULL RETURNING id
                """
            ).first()
            guard revoked != nil else { return false }
            try await db.raw(Self.auditInsert(audit)).run()
            return true
        }
    }

    /// Spends the invitation inside the caller's transaction `db` (sign-up's): its groups when it was usable at
    /// `at`, nil (nothing written) when it was used, revoked or expired. One statement, so two sign-ups racing
    /// with one invitation cannot both spend it.
    package static func spendInvitation(id: String, userID: String, at: Date, in db: any SQLDatabase) async throws
        -> [String]?
    {
        try await db.raw(
            """
            UPDATE invitations SET used_at = \(bind: at.milliseconds), used_by = \(bind: userID)
            WHERE id = \(bind: id) AND used_at IS NULL AND revoked_at IS NULL AND expires_at > \(bind: at.milliseconds)
            RETURNING group_slugs
            """
        ).first().map { try slugs($0.decode(column: "group_slugs", as: String.self)) }
    }

    static func slugs(_ text: String) -> [String] { text.split(separator: ",").map(String.init) }

    static func invitationRecord(_ row: any SQLRow) throws -> InvitationRecord {
        InvitationRecord(
            id: try row.decode(column: "id", as: String.self),
            secretHash: [UInt8](try row.decode(column: "secret_hash", as: Data.self)),
            email: try row.decode(column: "email", as: String?.self),
            groups: slugs(try row.decode(column: "group_slugs", as: String.self)),
            createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(milliseconds: try row.decode(column: "expires_at", as: Int64.self)),
            usedAt: try row.decode(column: "used_at", as: Int64?.self).map(Date.init(milliseconds:)),
            usedBy: try row.decode(column: "used_by", as: String?.self),
            revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map(Date.init(milliseconds:)))
    }
}
