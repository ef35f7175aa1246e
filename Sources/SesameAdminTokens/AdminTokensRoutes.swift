import Foundation
import Hummingbird
import SesameCore

/// The admin JSON API for admin tokens (`/api/admin/tokens…`, scope `tokens`): list, make (a person only: a
/// token never mints another) and revoke, through the same rules as `sesame admin-tokens` (`AdminTokens`), each
/// change audited naming the admin.
package struct AdminTokensRoutes: Sendable {
    package let tokens: AdminTokens

    package init(tokens: AdminTokens) { self.tokens = tokens }

    package struct TokenBody: ResponseEncodable, Sendable {
        package let id: String
        package let name: String
        package let scopes: [String]
        package let createdAt: Date
        package let expiresAt: Date
        package let createdBy: String
        package let lastUsedAt: Date?
        package let revokedAt: Date?
        /// `active`, `expired` or `revoked`.
        package let state: String

        init(_ record: AdminTokenRecord, now: Date) {
            id = record.id
            name = record.name
            scopes = record.scopes.map(\.rawValue)
            createdAt = record.createdAt
            expiresAt = record.expiresAt
            createdBy = record.createdBy
            lastUsedAt = record.lastUsedAt
            revokedAt = record.revokedAt
            state = record.state(at: now)
        }
    }

    package struct TokenListBody: ResponseEncodable, Sendable {
        package let tokens: [TokenBody]
        /// Every scope a token may hold.
        package let scopes: [String]
    }

    package struct CreatedBody: ResponseEncodable, Sendable {
        /// The token itself: shown in this answer only.
        package let token: String
        package let adminToken: TokenBody
    }

    package struct NewToken: Decodable, Sendable {
        package let name: String
        package let scopes: [String]
        package let expiresInDays: Int?
    }

    package func register(admin: RouterGroup<AdminRequestContext>) {
        let group = admin.group("tokens")
        group.get("") { _, context in
            try context.admin.require(.tokens)
            let now = tokens.clock.now()
            return TokenListBody(
                tokens: try await tokens.store.adminTokens().map { TokenBody($0, now: now) },
                scopes: AdminScope.all.map(\.rawValue))
        }
        group.post("") { request, context in
            try context.admin.require(.tokens)
            let new = try await request.decode(as: NewToken.self, context: context)
            let created = try await tokens.create(
                name: new.name, scopes: new.scopes, days: new.expiresInDays, by: context.actor)
            return EditedResponse(
                status: .created,
                response: CreatedBody(
                    token: created.token, adminToken: TokenBody(created.record, now: tokens.clock.now())))
        }
        group.delete("{id}") { _, context in
            try context.admin.require(.tokens)
            _ = try await tokens.revoke(id: try context.parameters.require("id"), by: context.actor)
            return Response(status: .noContent)
        }
    }
}
