import Foundation
import SQLKit
import SesameCore
import WebAuthn

/// Who changes groups: an operator at the command line (`sesame groups`), or an admin through the admin API.
package typealias GroupsActor = AdminActor

/// The rules for groups and memberships, before the store: slugs checked (`GroupSlugs`), names 1 to 64 characters,
/// custom claims checked (`GroupClaims`), accounts found by username or id; every change audited with its actor.
/// Errors are `APIError`s with the groups' codes (the command line prints their message).
package struct GroupsService: Sendable {
    package let store: any GroupsStore & AccountStore
    package let clock: ServerClock
    /// Nobody can lock everyone out: removing a member of the administrators' group, or the group, is checked by
    /// the one rule (`AccountGroups.keepingAnAdministrator`) in the change's transaction.
    package let administrators: AdministratorRule

    package init(store: any GroupsStore & AccountStore, clock: ServerClock = .system, adminGroup: String) {
        self.store = store
        self.clock = clock
        self.administrators = AdministratorRule(groups: StoredAccountGroups(store: store), adminGroup: adminGroup)
    }

    /// A slug that follows the rule, or `invalid_group_slug`.
    package static func checkedSlug(_ slug: String) throws -> String {
        if let problem = GroupSlugs.problem(slug) { throw APIError(.badRequest, .invalidGroupSlug, problem) }
        return slug
    }

    package static func checkedName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(trimmed.count),
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw APIError(.badRequest, .invalidGroupName, "a group's name has 1 to 64 characters") }
        return trimmed
    }

    private func event(
        _ kind: AuditKind, _ actor: GroupsActor, member: User?, slug: String, now: Date
    ) -> AuditEvent {
        actor.event(kind, subject: member, detail: slug, at: now)
    }

    /// Finds an account by username (any case) or id, or `account_not_found`.
    package func account(_ reference: String) async throws -> User {
        if let user = try await store.user(usernameKey: Usernames.key(reference)) { return user }
        if let user = try await store.user(id: reference) { return user }
        throw APIError(.notFound, .accountNotFound, "no account \"\(reference.prefix(64))\"")
    }

    package func group(_ slug: String) async throws -> GroupRecord {
        guard let group = try await store.group(slug: try Self.checkedSlug(slug)) else {
            throw APIError(.notFound, .groupNotFound, "no group \(slug)")
        }
        return group
    }

    @discardableResult
    package func add(slug: String, name: String?, claims: String?, by actor: GroupsActor) async throws -> GroupRecord {
        let slug = try Self.checkedSlug(slug)
        let name = try Self.checkedName(name ?? slug)
        let claims = try claims.map(GroupClaims.parse) ?? GroupClaims.none
        let now = clock.now()
        let group = GroupRecord(
            id: UUID().uuidString.lowercased(), slug: slug, name: name, claims: claims, createdAt: now, updatedAt: now)
        do {
            try await store.createGroup(group, audit: event(.groupAdded, actor, member: nil, slug: slug, now: now))
        } catch StoreError.conflict {
            throw APIError(.conflict, .groupExists, "a group \(slug) exists already")
        }
        return group
    }

    /// Changes a group's name, its claims, or both (nil: kept).
    @discardableResult
    package func update(slug: String, name: String?, claims: String?, by actor: GroupsActor) async throws
        -> GroupRecord
    {
        let current = try await group(slug)
        let name = try name.map(Self.checkedName) ?? current.name
        let claims = try claims.map(GroupClaims.parse) ?? current.claims
        let now = clock.now()
        guard
            let updated = try await store.updateGroup(
                slug: current.slug, name: name, claims: claims, at: now,
                audit: event(.groupChanged, actor, member: nil, slug: current.slug, now: now))
        else { throw APIError(.notFound, .groupNotFound, "no group \(slug)") }
        return updated
    }

    package func remove(slug: String, by actor: GroupsActor) async throws {
        let slug = try Self.checkedSlug(slug)
        let now = clock.now()
        guard
            try await store.removeGroup(
                slug: slug, audit: event(.groupRemoved, actor, member: nil, slug: slug, now: now),
                rule: administrators)
        else { throw APIError(.notFound, .groupNotFound, "no group \(slug)") }
    }

    package func members(slug: String) async throws -> [GroupMember] {
        guard let members = try await store.groupMembers(slug: try Self.checkedSlug(slug)) else {
            throw APIError(.notFound, .groupNotFound, "no group \(slug)")
        }
        return members
    }

    @discardableResult
    package func addMember(_ reference: String, to slug: String, by actor: GroupsActor) async throws -> User {
        let slug = try Self.checkedSlug(slug)
        let user = try await account(reference)
        let now = clock.now()
        switch try await store.addGroupMember(
            slug: slug, userID: user.id, at: now,
            audit: event(.groupMemberAdded, actor, member: user, slug: slug, now: now))
        {
        case .added: return user
        case .alreadyMember:
            throw APIError(.conflict, .membershipUnchanged, "\(user.username) is in \(slug) already")
        case .noGroup: throw APIError(.notFound, .groupNotFound, "no group \(slug)")
        }
    }

    @discardableResult
    package func removeMember(_ reference: String, from slug: String, by actor: GroupsActor) async throws -> User {
        let slug = try Self.checkedSlug(slug)
        let user = try await account(reference)
        guard try await store.group(slug: slug) != nil else {
            throw APIError(.notFound, .groupNotFound, "no group \(slug)")
        }
        let now = clock.now()
        guard
            try await store.removeGroupMember(
                slug: slug, userID: user.id,
                audit: event(.groupMemberRemoved, actor, member: user, slug: slug, now: now), rule: administrators)
        else { throw APIError(.conflict, .membershipUnchanged, "\(user.username) is not in \(slug)") }
        return user
    }
}
