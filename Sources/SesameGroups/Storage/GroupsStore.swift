import Foundation
import SQLKit
import SesameCore
import WebAuthn

/// A group as stored.
package struct GroupRecord: Sendable, Equatable {
    package let id: String
    package let slug: String
    package var name: String
    /// The custom claims the group adds under the `groups` scope: a JSON object (`GroupClaims` checked it).
    package var claims: JSONValue
    package let createdAt: Date
    package var updatedAt: Date

    package init(id: String, slug: String, name: String, claims: JSONValue, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.slug = slug
        self.name = name
        self.claims = claims
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A member of a group, as listed.
package struct GroupMember: Sendable, Equatable {
    package let userID: String
    package let username: String
    package let addedAt: Date
}

/// What adding a member did.
package enum MembershipChange: Sendable, Equatable {
    case added
    /// The account was a member already; nothing was written.
    case alreadyMember
    /// No group has that slug.
    case noGroup
}

/// Groups and their memberships. Every change writes its audit event in its own transaction.
package protocol GroupsStore: Sendable {
    /// Stores a new group; `StoreError.conflict` when its slug is taken.
    func createGroup(_ group: GroupRecord, audit: AuditEvent) async throws
    func group(slug: String) async throws -> GroupRecord?
    /// Every group, by slug.
    func groups() async throws -> [GroupRecord]
    /// Sets a group's name and claims; nil when no group has the slug.
    func updateGroup(slug: String, name: String, claims: JSONValue, at: Date, audit: AuditEvent) async throws
        -> GroupRecord?
    /// Removes a group and its memberships; false when no group has the slug. With `rule`, refused (409
    /// `last_administrator`, nothing written) when it would leave nobody able to open the console.
    func removeGroup(slug: String, audit: AuditEvent, rule: AdministratorRule?) async throws -> Bool
    /// The members of the group, by username; nil when no group has the slug.
    func groupMembers(slug: String) async throws -> [GroupMember]?
    func addGroupMember(slug: String, userID: String, at: Date, audit: AuditEvent) async throws -> MembershipChange
    /// False when the account was not a member (or no group has the slug). With `rule`, refused as `removeGroup`.
    func removeGroupMember(slug: String, userID: String, audit: AuditEvent, rule: AdministratorRule?) async throws
        -> Bool
    /// The groups the account is in, by slug.
    func memberGroups(userID: String) async throws -> [GroupRecord]
    /// Those of `slugs` that name no group, in the order given.
    func unknownGroupSlugs(_ slugs: [String]) async throws -> [String]
}

extension SQLStore: GroupsStore {
    private static let groupColumns: SQLQueryString = "g.id, g.slug, g.name, g.claims, g.created_at, g.updated_at"

    private static func group(_ row: any SQLRow) throws -> GroupRecord {
        let claims = try row.decode(column: "claims", as: String.self)
        return GroupRecord(
            id: try row.decode(column: "id", as: String.self), slug: try row.decode(column: "slug", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            claims: JSONReader.read(Array(claims.utf8)) ?? .object([(String, JSONValue)]()),
            createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            updatedAt: Date(milliseconds: try row.decode(column: "updated_at", as: Int64.self)))
    }

    package func createGroup(_ group: GroupRecord, audit: AuditEvent) async throws {
        do {
            try await engine.withTransaction { db in
                try await db.raw(
                    """
                    INSERT INTO account_groups (id, slug, name, claims, created_at, updated_at)
                    VALUES (\(bind: group.id), \(bind: group.slug), \(bind: group.name), \(bind: group.claims.rendered()),
                        \(bind: group.createdAt.milliseconds), \(bind: group.updatedAt.milliseconds))
                    """
                ).run()
                try await db.raw(Self.auditInsert(audit)).run()
            }
        } catch  where Self.isUniqueViolation(error) {
            throw StoreError.conflict
        }
    }

    package func group(slug: String) async throws -> GroupRecord? {
        try await db.raw("SELECT \(Self.groupColumns) FROM account_groups g WHERE g.slug = \(bind: slug)").first()
            .map(Self.group)
    }

    package func groups() async throws -> [GroupRecord] {
        try await db.raw("SELECT \(Self.groupColumns) FROM account_groups g ORDER BY g.slug").all().map(Self.group)
    }

    package func updateGroup(slug: String, name: String, claims: JSONValue, at: Date, audit: AuditEvent) async throws
        -> GroupRecord?
    {
        try await engine.withTransaction { db in
            guard
                let row = try await db.raw(
                    """
                    UPDATE account_groups SET name = \(bind: name), claims = \(bind: claims.rendered()),
                        updated_at = \(bind: at.milliseconds)
                    WHERE slug = \(bind: slug)
                    RETURNING id, slug, name, claims, created_at, updated_at
                    """
                ).first()
            else { return nil }
            try await db.raw(Self.auditInsert(audit)).run()
            return try Self.group(row)
        }
    }

    package func removeGroup(slug: String, audit: AuditEvent, rule: AdministratorRule?) async throws -> Bool {
        try await engine.withTransaction { db in
            try await Self.guarded(rule, db) {
                guard
                    let id = try await db.raw("SELECT id FROM account_groups WHERE slug = \(bind: slug)").first()?
                        .decode(column: "id", as: String.self)
                else { return false }
                try await db.raw("DELETE FROM group_members WHERE group_id = \(bind: id)").run()
                try await db.raw("DELETE FROM account_groups WHERE id = \(bind: id)").run()
                try await db.raw(Self.auditInsert(audit)).run()
                return true
            }
        }
    }

    /// `change` under the last-administrator rule when there is one.
    private static func guarded<T: Sendable>(
        _ rule: AdministratorRule?, _ db: any SQLDatabase, _ change: () async throws -> T
    ) async throws -> T {
        guard let rule else { return try await change() }
        return try await rule.guarding(db, change)
    }

    package func groupMembers(slug: String) async throws -> [GroupMember]? {
        guard let group = try await group(slug: slug) else { return nil }
        return try await db.raw(
            """
            SELECT m.user_id, u.username, m.added_at FROM group_members m JOIN users u ON u.id = m.user_id
            WHERE m.group_id = \(bind: group.id) ORDER BY u.username_key
            """
        ).all().map {
            GroupMember(
                userID: try $0.decode(column: "user_id", as: String.self),
                username: try $0.decode(column: "username", as: String.self),
                addedAt: Date(milliseconds: try $0.decode(column: "added_at", as: Int64.self)))
        }
    }

    package func addGroupMember(slug: String, userID: String, at: Date, audit: AuditEvent) async throws
        -> MembershipChange
    {
        try await engine.withTransaction { db in
            guard
                let id = try await db.raw("SELECT id FROM account_groups WHERE slug = \(bind: slug)").first()?
                    .decode(column: "id", as: String.self)
            else { return .noGroup }
            let added = try await db.raw(
                """
                INSERT INTO group_members (group_id, user_id, added_at) VALUES (\(bind: id), \(bind: userID),
                    \(bind: at.milliseconds))
                ON CONFLICT (group_id, user_id) DO NOTHING RETURNING user_id
                """
            ).all()
            guard !added.isEmpty else { return .alreadyMember }
            try await db.raw(Self.auditInsert(audit)).run()
            return .added
        }
    }

    package func removeGroupMember(slug: String, userID: String, audit: AuditEvent, rule: AdministratorRule?)
        async throws -> Bool
    {
        try await engine.withTransaction { db in
            try await Self.guarded(rule, db) {
                let removed = try await db.raw(
                    """
                    DELETE FROM group_members WHERE user_id = \(bind: userID)
                        AND group_id = (SELECT id FROM account_groups WHERE slug = \(bind: slug))
                    RETURNING user_id
                    """
                ).all()
                guard !removed.isEmpty else { return false }
                try await db.raw(Self.auditInsert(audit)).run()
                return true
            }
        }
    }

    package func memberGroups(userID: String) async throws -> [GroupRecord] {
        try await db.raw(
            """
            SELECT \(Self.groupColumns) FROM group_members m JOIN account_groups g ON g.id = m.group_id
            WHERE m.user_id = \(bind: userID) ORDER BY g.slug
            """
        ).all().map(Self.group)
    }

    package func unknownGroupSlugs(_ slugs: [String]) async throws -> [String] {
        guard !slugs.isEmpty else { return [] }
        let known = Set(try await Self.existingSlugs(slugs, db))
        return slugs.filter { !known.contains($0) }
    }

    /// The ids of the groups `slugs` name, by slug.
    package static func groupIDs(_ slugs: [String], _ db: any SQLDatabase) async throws -> [String: String] {
        var ids: [String: String] = [:]
        for slug in Set(slugs) {
            if let id = try await db.raw("SELECT id FROM account_groups WHERE slug = \(bind: slug)").first()?
                .decode(column: "id", as: String.self)
            {
                ids[slug] = id
            }
        }
        return ids
    }

    private static func existingSlugs(_ slugs: [String], _ db: any SQLDatabase) async throws -> [String] {
        Array(try await groupIDs(slugs, db).keys)
    }
}
