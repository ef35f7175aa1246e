import Foundation
import SQLKit
import SesameCore

/// One account as the people search lists it.
package struct PersonRow: Sendable, Equatable {
    package let id: String
    package let username: String
    package let usernameKey: String
    package let displayName: String
    package let email: String?
    package let disabled: Bool
    package let createdAt: Date
}

/// The people search (`PeopleService.search`): accounts whose username, display name or verified email address
/// starts with a prefix, compared without regard to case, in username order, one page after a keyset cursor (the
/// last username key of the page before). Each of the three prefixes is an index range (`PeopleSchema`), each
/// bounded by the page's size, so a page costs the same at 100,000 accounts as at 100.
extension SQLStore {
    /// The highest code point: `prefix + end` bounds every string that starts with `prefix` from above.
    private static let end = "\u{10FFFF}"

    package func searchPeople(prefix: String, after: String?, limit: Int) async throws -> [PersonRow] {
        let postgres = engine.kind == .postgres
        // Bytes compared: PostgreSQL's collation is set aside so a prefix is one range of its "C" indexes.
        let c: SQLQueryString = postgres ? #" COLLATE "C""# : ""
        let after = after ?? ""
        let candidates: SQLQueryString
        if prefix.isEmpty {
            candidates = """
                SELECT id FROM users WHERE username_key\(c) > \(bind: after)
                ORDER BY username_key\(c) LIMIT \(literal: limit)
                """
        } else {
            let key = Usernames.key(prefix)
            let upper = key + Self.end
            let lowered = prefix.lowercased()
            let loweredEnd = lowered + Self.end
            // Display names and addresses are read from their own index, every match of the prefix, and sorted
            // by username: the cost is the number of matches. `|| ''` keeps both planners off the username index,
            // which its order tempts them to walk from the cursor, filtering, through every account when few
            // match (a prefix nobody's display name has).
            let names: SQLQueryString = "lower(display_name)"
            let namesOrder: SQLQueryString = "(username_key || '')"
            let addresses: SQLQueryString = "e.address_key"
            let addressesOrder: SQLQueryString = "(u.username_key || '')"
            candidates = """
                SELECT id FROM (SELECT id FROM users
                    WHERE username_key\(c) >= \(bind: key) AND username_key\(c) < \(bind: upper)
                        AND username_key\(c) > \(bind: after)
                    ORDER BY username_key\(c) LIMIT \(literal: limit)) by_username
                UNION
                SELECT id FROM (SELECT id FROM users
                    WHERE \(names)\(c) >= \(bind: lowered) AND \(names)\(c) < \(bind: loweredEnd)
                        AND \(namesOrder)\(c) > \(bind: after)
                    ORDER BY \(namesOrder)\(c) LIMIT \(literal: limit)) by_display_name
                UNION
                SELECT id FROM (SELECT u.id FROM email_addresses e JOIN users u ON u.id = e.user_id
                    WHERE \(addresses)\(c) >= \(bind: lowered) AND \(addresses)\(c) < \(bind: loweredEnd)
                        AND \(addressesOrder)\(c) > \(bind: after)
                    ORDER BY \(addressesOrder)\(c) LIMIT \(literal: limit)) by_email
                """
        }
        return try await db.raw(
            """
            SELECT u.id, u.username, u.username_key, u.display_name, u.disabled, u.created_at, e.address
            FROM users u LEFT JOIN email_addresses e ON e.user_id = u.id
            WHERE u.id IN (\(candidates))
            ORDER BY u.username_key\(c) LIMIT \(literal: limit)
            """
        ).all().map { row in
            PersonRow(
                id: try row.decode(column: "id", as: String.self),
                username: try row.decode(column: "username", as: String.self),
                usernameKey: try row.decode(column: "username_key", as: String.self),
                displayName: try row.decode(column: "display_name", as: String.self),
                email: try row.decode(column: "address", as: String?.self),
                disabled: try row.decode(column: "disabled", as: Int64.self) != 0,
                createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
        }
    }

    /// Runs an operator's change to one account in one transaction: `change` (nil: nothing to change, nothing
    /// written), its audit event, and the last-administrator rule around both.
    package func peopleChange<T: Sendable>(
        rule: AdministratorRule, audit: AuditEvent,
        _ change: @escaping @Sendable (any SQLDatabase) async throws -> T?
    ) async throws -> T? {
        try await engine.withTransaction { db in
            try await rule.guarding(db) {
                guard let result = try await change(db) else { return nil }
                try await db.raw(Self.auditInsert(audit)).run()
                return result
            }
        }
    }
}
