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

    /// Nobody can lock everyone out: runs `change` inside the transaction `db` and refuses it (409
    /// `last_administrator`, so the transaction writes nothing) when before it some enabled member of `adminGroup`
    /// with a passkey could open the console and after it none can. Two such changes at once are taken one after
    /// the other (the group's row is locked first on PostgreSQL; SQLite's writers are one at a time), so two
    /// admins acting together cannot both succeed.
    func keepingAnAdministrator<T: Sendable>(
        of adminGroup: String, in db: any SQLDatabase, _ change: () async throws -> T
    ) async throws -> T
}

/// The last-administrator rule for one server: its `adminGroup` and the groups that hold it. Every change that can
/// take someone out of the administrators (disabling, deleting, leaving the group, removing the group, removing a
/// passkey) runs through `guarding` inside its own transaction.
package struct AdministratorRule: Sendable {
    package let groups: any AccountGroups
    package let adminGroup: String

    package init(groups: any AccountGroups, adminGroup: String) {
        self.groups = groups
        self.adminGroup = adminGroup
    }

    package func guarding<T: Sendable>(_ db: any SQLDatabase, _ change: () async throws -> T) async throws -> T {
        try await groups.keepingAnAdministrator(of: adminGroup, in: db, change)
    }

    /// The refusal, with the reason.
    package static func refusal(_ adminGroup: String) -> APIError {
        APIError(
            .conflict, .lastAdministrator,
            "This would leave nobody in \(adminGroup) able to open the console (an enabled account with a passkey); "
                + "make someone else an administrator first.")
    }
}

/// No groups: a server built without the groups feature (and the store's own tests). Every account is in none, and
/// every slug is unknown.
package struct NoAccountGroups: AccountGroups {
    package init() {}

    package func groupSlugs(userID: String) async throws -> [String] { [] }

    package func unknownSlugs(_ slugs: [String]) async throws -> [String] { slugs }

    package func join(userID: String, groups slugs: [String], at: Date, in db: any SQLDatabase) async throws {
        if !slugs.isEmpty { throw AccountGroupsError.unknownGroups(slugs) }
    }

    package func keepingAnAdministrator<T: Sendable>(
        of adminGroup: String, in db: any SQLDatabase, _ change: () async throws -> T
    ) async throws -> T { try await change() }
}

/// A membership the groups cannot give. The server's error shape (`ServerError`); the message names the slugs only.
package typealias AccountGroupsError = ServerError<AccountGroupsErrorCode>

/// The codes of `AccountGroupsError`.
package struct AccountGroupsErrorCode: ServerErrorCode {
    package let name: String
    private init(_ name: String) { self.name = name }
    package var description: String { name }

    /// A slug names no group (or the server has no groups).
    package static let unknownGroup = AccountGroupsErrorCode("unknownGroup")
}

extension ServerError where Code == AccountGroupsErrorCode {
    /// `unknownGroup`, naming the slugs.
    package static func unknownGroups(_ slugs: [String], file: String = #fileID, line: Int = #line)
        -> AccountGroupsError
    {
        AccountGroupsError(
            code: .unknownGroup, message: "no such group: \(slugs.joined(separator: ", "))", file: file, line: line)
    }
}
