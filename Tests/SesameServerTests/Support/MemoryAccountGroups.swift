import Foundation
import SQLKit
import Synchronization

@testable import SesameCore

/// Groups held in memory, for the features that read membership through `AccountGroups` (forward-auth rules,
/// sign-up by invitation) without the feature that stores groups. `join` reads the new account's row in the
/// transaction it is given (so it runs inside sign-up's) and refuses unknown groups as the real one does.
final class MemoryAccountGroups: AccountGroups, Sendable {
    private let state: Mutex<(groups: Set<String>, members: [String: Set<String>])>

    init(groups: [String]) { state = Mutex((Set(groups), [:])) }

    func add(_ userID: String, to slug: String) { state.withLock { _ = $0.members[userID, default: []].insert(slug) } }
    func remove(_ userID: String, from slug: String) { state.withLock { _ = $0.members[userID]?.remove(slug) } }
    func removeGroup(_ slug: String) { state.withLock { _ = $0.groups.remove(slug) } }

    func groupSlugs(userID: String) async throws -> [String] {
        state.withLock { $0.members[userID].map { $0.sorted() } ?? [] }
    }

    func unknownSlugs(_ slugs: [String]) async throws -> [String] {
        state.withLock { state in slugs.filter { !state.groups.contains($0) } }
    }

    func join(userID: String, groups slugs: [String], at: Date, in db: any SQLDatabase) async throws {
        let unknown = try await unknownSlugs(slugs)
        if !unknown.isEmpty { throw AccountGroupsError.unknownGroups(unknown) }
        // Within the transaction: the account row must be there already.
        guard try await db.raw("SELECT id FROM users WHERE id = \(bind: userID)").first() != nil else {
            throw AccountGroupsError.unknownGroups(slugs)
        }
        for slug in slugs { add(userID, to: slug) }
    }

    /// Held in memory, these groups are no part of any transaction: the rule is the stored groups' (`PeopleTests`).
    func keepingAnAdministrator<T: Sendable>(
        of adminGroup: String, in db: any SQLDatabase, _ change: () async throws -> T
    ) async throws -> T { try await change() }
}
