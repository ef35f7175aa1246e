import Foundation
import SQLKit

/// The groups an account belongs to, by slug (`family`, `admins`). The core declares it; the groups feature
/// (`SesameGroups`) implements it and the composition root hands it to `ServerCore` (`accountGroups`), so the
/// features that read membership (forward-auth rules, the identity provider's access rules, sign-up by invitation)
/// never import the feature that stores it.
package protocol AccountGroups: Sendable {
    /// The slugs of the groups `userID` is a member of, sorted; empty for an unknown account. Read from the store on
    /// every call, so a removal takes effect on every node at once.
    func groupSlugs(userID: String) async throws -> [String]

    /// Those of `slugs` that name no group, in the order given (empty when all exist).
    func unknownSlugs(_ slugs: [String]) async throws -> [String]

    /// Puts `userID` into the groups `slugs` name, inside the transaction whose database is `db` (sign-up by
    /// invitation: the account and its memberships commit together). A slug that names no group throws and the
    /// transaction writes nothing; a membership already held is kept.
    func join(userID: String, groups slugs: [String], at: Date, in db: any SQLDatabase) async throws
}

/// No groups: a server built without the groups feature (and the store's own tests). Every account is in none, and
/// every slug is unknown.
package struct NoAccountGroups: AccountGroups {
    package init() {}

    package func groupSlugs(userID: String) async throws -> [String] { [] }

    package func unknownSlugs(_ slugs: [String]) async throws -> [String] { slugs }

    package func join(userID: String, groups slugs: [String], at: Date, in db: any SQLDatabase) async throws {
        if !slugs.isEmpty { throw NoAccountGroupsError(slugs: slugs) }
    }
}

/// Joining a group on a server without the groups feature: names the slugs only.
package struct NoAccountGroupsError: Error, CustomStringConvertible {
    package let slugs: [String]
    package var description: String { "no groups on this server: \(slugs.joined(separator: ", "))" }
}
