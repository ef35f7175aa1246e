import Foundation
import SQLKit
import SesameCore
import SesameIdentityProvider
import WebAuthn

/// The groups feature's answer to the core's `AccountGroups` (forward-auth rules, clients' allowed groups, sign-up
/// by invitation) and to the identity provider's `GroupClaimsLookup` (the `groups` scope): read from the store on
/// every call, so a removal takes effect at once on every node.
package struct StoredAccountGroups: AccountGroups, GroupClaimsLookup {
    package let store: any GroupsStore
    /// Runs between the last-administrator rule's second count and the transaction's commit: tests hold two
    /// transactions there to show that the second cannot count before the first commits. Nil in the server.
    package let afterCounting: (@Sendable () async -> Void)?

    package init(store: any GroupsStore, afterCounting: (@Sendable () async -> Void)? = nil) {
        self.store = store
        self.afterCounting = afterCounting
    }

    package func groupSlugs(userID: String) async throws -> [String] {
        try await store.memberGroups(userID: userID).map(\.slug).sorted()
    }

    package func unknownSlugs(_ slugs: [String]) async throws -> [String] {
        try await store.unknownGroupSlugs(slugs)
    }

    package func join(userID: String, groups slugs: [String], at: Date, in db: any SQLDatabase) async throws {
        let ids = try await SQLStore.groupIDs(slugs, db)
        if let unknown = slugs.first(where: { ids[$0] == nil }) {
            throw APIError(.notFound, .groupNotFound, "no group \(unknown.prefix(64))")
        }
        for slug in Set(slugs).sorted() {
            guard let id = ids[slug] else { continue }
            try await db.raw(
                """
                INSERT INTO group_members (group_id, user_id, added_at) VALUES (\(bind: id), \(bind: userID),
                    \(bind: at.milliseconds))
                ON CONFLICT (group_id, user_id) DO NOTHING
                """
            ).run()
        }
    }

    package func keepingAnAdministrator<T: Sendable>(
        of adminGroup: String, in db: any SQLDatabase, _ change: () async throws -> T
    ) async throws -> T {
        if db.dialect.name == "postgresql" {
            // Every such change takes the group's row first: the second waits for the first to commit, then counts
            // what it left. NO KEY UPDATE: memberships' foreign keys (KEY SHARE) are not held up.
            try await db.raw("SELECT id FROM account_groups WHERE slug = \(bind: adminGroup) FOR NO KEY UPDATE").run()
        }
        let before = try await Self.administrators(of: adminGroup, in: db)
        let result = try await change()
        if before > 0, try await Self.administrators(of: adminGroup, in: db) == 0 {
            throw AdministratorRule.refusal(adminGroup)
        }
        await afterCounting?()
        return result
    }

    /// How many members of `adminGroup` could open the console: enabled, with at least one passkey.
    package static func administrators(of adminGroup: String, in db: any SQLDatabase) async throws -> Int {
        try await db.raw(
            """
            SELECT COUNT(*) AS n FROM group_members m
            JOIN account_groups g ON g.id = m.group_id
            JOIN users u ON u.id = m.user_id
            WHERE g.slug = \(bind: adminGroup) AND u.disabled = 0
                AND EXISTS (SELECT 1 FROM credentials c WHERE c.user_id = u.id)
            """
        ).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    package func groupClaims(userID: String) async throws -> (slugs: [String], claims: [String: JSONValue]) {
        let groups = try await store.memberGroups(userID: userID)
        return (groups.map(\.slug).sorted(), GroupClaims.merged(groups))
    }
}
