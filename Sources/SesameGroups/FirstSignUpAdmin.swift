import Foundation
import SQLKit
import SesameCore

/// The core's `SignUpFirstAdmin` (`firstSignUpAdmin`): the first account made by sign-up joins `adminGroup`.
///
/// In the sign-up's transaction, after its account row: when another account is visible the answer is no at once
/// (every later sign-up takes this path and locks nothing). Otherwise the claim is serialised: PostgreSQL takes a
/// transaction-scoped advisory lock and looks again (under READ COMMITTED the new statement sees an account another
/// sign-up committed while this one waited); SQLite has one writer at a time, so the first look is final. The group
/// is created when missing, and the membership and audit events are written in the same transaction.
package struct FirstSignUpAdmin: SignUpFirstAdmin {
    /// The advisory lock's key ("sesame-first-admin"'s first bytes; the migrations' lock has a key of its own).
    static let lockKey: Int64 = 0x7365_7361_6D66_6131

    package let adminGroup: String

    package init(adminGroup: String) { self.adminGroup = adminGroup }

    private static func anotherAccount(than id: String, in db: any SQLDatabase) async throws -> Bool {
        try await db.raw("SELECT id FROM users WHERE id <> \(bind: id) LIMIT 1").first() != nil
    }

    package func claim(user: User, clientAddress: String, at: Date, in db: any SQLDatabase) async throws -> Bool {
        if try await Self.anotherAccount(than: user.id, in: db) { return false }
        if db.dialect.name == "postgresql" {
            try await db.raw("SELECT pg_advisory_xact_lock(\(literal: Self.lockKey))").run()
            if try await Self.anotherAccount(than: user.id, in: db) { return false }
        }
        var events: [AuditEvent] = []
        let groupID: String
        if let id = try await db.raw("SELECT id FROM account_groups WHERE slug = \(bind: adminGroup)").first()?
            .decode(column: "id", as: String.self)
        {
            groupID = id
        } else {
            groupID = UUID().uuidString.lowercased()
            try await db.raw(
                """
                INSERT INTO account_groups (id, slug, name, claims, created_at, updated_at)
                VALUES (\(bind: groupID), \(bind: adminGroup), \(bind: adminGroup), \(bind: "{}"),
                    \(bind: at.milliseconds), \(bind: at.milliseconds))
                """
            ).run()
            events.append(
                AuditEvent(
                    at: at, kind: AuditKind.groupAdded.rawValue, outcome: AuditOutcome.success.rawValue,
                    userID: user.id, username: user.username, clientAddress: clientAddress,
                    detail: "\(adminGroup) for the first account"))
        }
        try await db.raw(
            """
            INSERT INTO group_members (group_id, user_id, added_at) VALUES (\(bind: groupID), \(bind: user.id),
                \(bind: at.milliseconds))
            """
        ).run()
        events.append(
            AuditEvent(
                at: at, kind: AuditKind.firstSignUpAdmin.rawValue, outcome: AuditOutcome.success.rawValue,
                userID: user.id, username: user.username, clientAddress: clientAddress, detail: adminGroup))
        for event in events { try await db.raw(SQLStore.auditInsert(event)).run() }
        return true
    }
}
