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

    package init(store: any GroupsStore) { self.store = store }

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

    package func groupClaims(userID: String) async throws -> (slugs: [String], claims: [String: JSONValue]) {
        let groups = try await store.memberGroups(userID: userID)
        return (groups.map(\.slug).sorted(), GroupClaims.merged(groups))
    }
}
