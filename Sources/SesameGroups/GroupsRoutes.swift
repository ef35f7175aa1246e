import Foundation
import Hummingbird
import SesameCore
import WebAuthn

/// The admin JSON API for groups and memberships (`/api/admin/groups…`, in the OpenAPI document), which the
/// operators' console will use. Only members of the `adminGroup` group may call it (403 `not_an_admin` for anyone
/// else signed in); reads need a session, writes a recent sign-in and, with a cookie, the CSRF header, as every
/// other write. Each change is audited naming the admin (`GroupsActor.admin`).
package struct GroupsRoutes {
    package let sesame: ServerCore
    package let service: GroupsService

    package init(sesame: ServerCore, store: any GroupsStore & AccountStore) {
        self.sesame = sesame
        self.service = GroupsService(store: store, clock: sesame.clock)
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

    /// The admin's account, or 403 `not_an_admin` (membership read now: taking someone out of the admin group
    /// ends their access at once).
    package func requireAdmin(_ user: User) async throws {
        guard try await sesame.accountGroups.groupSlugs(userID: user.id).contains(sesame.configuration.adminGroup)
        else {
            throw APIError(.forbidden, .notAnAdmin, "Only members of the administrators' group may do this.")
        }
    }

    private func body(_ group: GroupRecord) async throws -> GroupBody {
        GroupBody(
            slug: group.slug, name: group.name, claims: group.claims,
            memberCount: try await service.store.groupMembers(slug: group.slug)?.count ?? 0,
            createdAt: group.createdAt, updatedAt: group.updatedAt)
    }

    /// Claims as the request sent them (a JSON object), checked by the same rules as the command line's.
    private static func claimsText(_ claims: JSONValue?) -> String? { claims.map { $0.rendered() } }

    package func register(on router: Router<SesameRequestContext>) {
        let reads = router.group("/api/admin/groups", context: SignedInRequestContext.self)
        let writes = router.group("/api/admin/groups", context: RecentlySignedInRequestContext.self)

        reads.get("") { _, context in
            try await requireAdmin(context.user)
            var groups: [GroupBody] = []
            for group in try await service.store.groups() { groups.append(try await body(group)) }
            return GroupListBody(groups: groups)
        }
        reads.get("/{slug}") { _, context in
            try await requireAdmin(context.user)
            let group = try await service.group(try context.parameters.require("slug"))
            let members = try await service.members(slug: group.slug).map {
                MemberBody(userId: $0.userID, username: $0.username, addedAt: $0.addedAt)
            }
            return GroupDetailBody(group: try await body(group), members: members)
        }
        writes.post("") { request, context in
            try await requireAdmin(context.user)
            let new = try await request.decode(as: NewGroup.self, context: context)
            let group = try await service.add(
                slug: new.slug, name: new.name, claims: Self.claimsText(new.claims),
                by: .admin(context.user, clientAddress: context.clientAddress))
            return EditedResponse(status: .created, response: try await body(group))
        }
        writes.patch("/{slug}") { request, context in
            try await requireAdmin(context.user)
            let change = try await request.decode(as: GroupChange.self, context: context)
            let group = try await service.update(
                slug: try context.parameters.require("slug"), name: change.name,
                claims: Self.claimsText(change.claims), by: .admin(context.user, clientAddress: context.clientAddress))
            return try await body(group)
        }
        writes.delete("/{slug}") { _, context in
            try await requireAdmin(context.user)
            try await service.remove(
                slug: try context.parameters.require("slug"),
                by: .admin(context.user, clientAddress: context.clientAddress))
            return Response(status: .noContent)
        }
        writes.put("/{slug}/members/{user}") { _, context in
            try await requireAdmin(context.user)
            let slug = try context.parameters.require("slug")
            let user = try await service.addMember(
                try context.parameters.require("user"), to: slug,
                by: .admin(context.user, clientAddress: context.clientAddress))
            return EditedResponse(
                status: .created, response: MemberBody(userId: user.id, username: user.username, addedAt: sesame.now))
        }
        writes.delete("/{slug}/members/{user}") { _, context in
            try await requireAdmin(context.user)
            _ = try await service.removeMember(
                try context.parameters.require("user"), from: try context.parameters.require("slug"),
                by: .admin(context.user, clientAddress: context.clientAddress))
            return Response(status: .noContent)
        }
    }
}
