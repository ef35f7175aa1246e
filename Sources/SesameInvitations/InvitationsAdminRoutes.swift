import Foundation
import Hummingbird
import SesameCore

/// The admin JSON API for invitations (`/api/admin/invitations…`, scope `invitations`), in the OpenAPI document;
/// the console's Invitations page calls it. It goes through `InvitationAdmin`, as `sesame invites` does: the same
/// rules, the mail written to the outbox in the invitation's transaction, audit events naming the admin. The link
/// is in the creation's answer only when no mail carries it, and never again.
package struct InvitationsAdminRoutes: Sendable {
    package let sesame: ServerCore
    package let admin: InvitationAdmin

    package init(sesame: ServerCore, store: any InvitationStore) {
        self.sesame = sesame
        self.admin = InvitationAdmin(store: store, groups: sesame.accountGroups, configuration: sesame.configuration)
    }

    package static let scope = AdminScope("invitations")

    package struct InvitationBody: ResponseEncodable, Sendable {
        package let id: String
        /// `usable`, `used`, `revoked` or `expired`.
        package let state: String
        package let email: String?
        package let groups: [String]
        package let createdAt: Date
        package let expiresAt: Date
        package let usedAt: Date?
        package let revokedAt: Date?
    }

    package struct InvitationListBody: ResponseEncodable, Sendable { package let invitations: [InvitationBody] }

    package struct CreatedBody: ResponseEncodable, Sendable {
        package let id: String
        package let expiresAt: Date
        package let mailed: Bool
        /// The sign-up link, when no mail carries it; shown this once.
        package let link: String?
    }

    package struct NewInvitation: Decodable, Sendable {
        package let email: String?
        package let groups: [String]?
        /// `7d`, `12h`, `30m` or seconds; 5 minutes to 90 days (default 7 days).
        package let expires: String?
        /// The mail's language (a catalog tag); without it, the request's (`ui_locales`, `Accept-Language`), else
        /// the default.
        package let language: String?
    }

    private func body(_ invitation: InvitationRecord, now: Date) -> InvitationBody {
        InvitationBody(
            id: invitation.id, state: invitation.state(at: now), email: invitation.email, groups: invitation.groups,
            createdAt: invitation.createdAt, expiresAt: invitation.expiresAt, usedAt: invitation.usedAt,
            revokedAt: invitation.revokedAt)
    }

    /// Registers the routes on the admin API's group (`/api/admin`, behind `AdminMiddleware`).
    package func register(admin group: RouterGroup<AdminRequestContext>) {
        let invitations = group.group("invitations")
        invitations.get("") { _, context in
            try context.admin.require(Self.scope)
            let now = sesame.now
            return InvitationListBody(
                invitations: try await admin.store.invitations().map { body($0, now: now) })
        }
        invitations.post("") { request, context in
            try context.admin.require(Self.scope)
            let new = try await request.decode(as: NewInvitation.self, context: context)
            guard let lifetime = InvitationAdmin.lifetime(new.expires ?? "7d") else {
                throw APIError(
                    .badRequest, .invitationRefused,
                    "An invitation lasts between 5 minutes and 90 days: give 30m, 12h, 7d or seconds.")
            }
            let email = new.email?.trimmingCharacters(in: .whitespaces)
            let created: InvitationAdmin.Created
            do {
                created = try await admin.create(
                    email: email?.isEmpty == true ? nil : email, groups: new.groups ?? [], lifetime: lifetime,
                    at: sesame.now, by: context.actor, language: sesame.languages.tag(for: request, saved: new.language)
                )
            } catch let error as AdminError {
                let message =
                    error.message.hasPrefix("--email") ? "That is not an address mail can be sent to." : error.message
                throw APIError(.badRequest, .invitationRefused, message)
            }
            return EditedResponse(
                status: .created,
                response: CreatedBody(
                    id: created.id, expiresAt: created.expiresAt, mailed: created.mailed,
                    link: created.mailed ? nil : created.link))
        }
        invitations.delete("{id}") { _, context in
            try context.admin.require(Self.scope)
            do {
                try await admin.revoke(id: try context.parameters.require("id"), at: sesame.now, by: context.actor)
            } catch is AdminError {
                throw APIError(.notFound, .invitationNotFound, "There is no usable invitation with that id.")
            }
            return Response(status: .noContent)
        }
    }
}
