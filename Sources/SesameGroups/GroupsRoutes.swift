import Foundation
import Hummingbird
import SesameCore
import WebAuthn

/// The admin JSON API for groups and memberships (`/api/admin/groups…`, in the OpenAPI document), which the
/// operators' console uses. Who may call it is the admin gate's rule (`AdminGate`: an administrator signed in with
/// a passkey recently, or an admin API token with the `groups` scope). Each change is audited naming the admin.
package struct GroupsRoutes {
    package let sesame: ServerCore
    package let service: GroupsService

    package init(sesame: ServerCore, store: any GroupsStore & AccountStore) {
        self.sesame = sesame
        self.service = GroupsService(
            store: store, clock: sesame.clock, adminGroup: sesame.configuration.adminGroup)
    }

    package struct GroupBody: ResponseEncodable, Sendable {
        package let slug: String
        package let name: String
        package let claims: JSONValue
        package let memberCount: Int
        package let createdAt: Date
        package let updatedAt: Date
    }

    package struct MemberBody: ResponseEncodable, Sendable {
        package let userId: String
        package let username: String
        package let addedAt: Date
    }

    package struct GroupDetailBody: ResponseEncodable, Sendable {
        package let group: GroupBody
        package let members: [MemberBody]
    }

    package struct GroupListBody: ResponseEncodable, Sendable { package let groups: [GroupBody] }

    package struct NewGroup: Decodable, Sendable {
        package let slug: String
        package let name: String?
        package let claims: JSONValue?
    }

    package struct GroupChange: Decodable, Sendable {
        package let name: String?
        package let claims: JSONValue?
    }

    private func body(_ group: GroupRecord) async throws -> GroupBody {
        GroupBody(
            slug: group.slug, name: group.name, claims: group.claims,
            memberCount: try await service.store.groupMembers(slug: group.slug)?.count ?? 0,
            createdAt: group.createdAt, updatedAt: group.updatedAt)
    }

    /// Claims as the request sent them (a JSON object), checked by the same rules as the command line's.
    private static func claimsText(_ claims: JSONValue?) -> String? { claims.map { $0.rendered() } }

    /// The scope an admin API token needs for these routes.
    package static let scope = AdminScope.groups

    /// Registers the routes on the admin API's group (`/api/admin`, behind `AdminMiddleware`).
    package func register(admin: RouterGroup<AdminRequestContext>) {
        let groups = admin.group("groups")
        groups.get("") { _, context in
            try context.admin.require(Self.scope)
            var groups: [GroupBody] = []
            for group in try await service.store.groups() { groups.append(try await body(group)) }
            return GroupListBody(groups: groups)
        }
        groups.get("{slug}") { _, context in
            try context.admin.require(Self.scope)
            let group = try await service.group(try context.parameters.require("slug"))
            let members = try await service.members(slug: group.slug).map {
                MemberBody(userId: $0.userID, username: $0.username, addedAt: $0.addedAt)
            }
            return GroupDetailBody(group: try await body(group), members: members)
        }
        groups.post("") { request, context in
            try context.admin.require(Self.scope)
            let new = try await request.decode(as: NewGroup.self, context: context)
            let group = try await service.add(
                slug: new.slug, name: new.name, claims: Self.claimsText(new.claims), by: context.actor)
            return EditedResponse(status: .created, response: try await body(group))
        }
        groups.patch("{slug}") { request, context in
            try context.admin.require(Self.scope)
            let change = try await request.decode(as: GroupChange.self, context: context)
            let group = try await service.update(
                slug: try context.parameters.require("slug"), name: change.name,
                claims: Self.claimsText(change.claims), by: context.actor)
            return try await body(group)
        }
        groups.delete("{slug}") { _, context in
            try context.admin.require(Self.scope)
            try await service.remove(slug: try context.parameters.require("slug"), by: context.actor)
            return Response(status: .noContent)
        }
        groups.put("{slug}/members/{user}") { _, context in
            try context.admin.require(Self.scope)
            let slug = try context.parameters.require("slug")
            let user = try await service.addMember(try context.parameters.require("user"), to: slug, by: context.actor)
            return EditedResponse(
                status: .created, response: MemberBody(userId: user.id, username: user.username, addedAt: sesame.now))
        }
        groups.delete("{slug}/members/{user}") { _, context in
            try context.admin.require(Self.scope)
            _ = try await service.removeMember(
                try context.parameters.require("user"), from: try context.parameters.require("slug"),
                by: context.actor)
            return Response(status: .noContent)
        }
    }
}
