import Foundation
import Hummingbird
import SesameCore
import SesameIdentityProvider
import SesamePasskeys
import SesameSecondFactors
import WebAuthn

/// The admin JSON API for people (`/api/admin/people…`, in the OpenAPI document), which the console's People pages
/// use: search, one person, and the operators' changes (disable, enable, sign out everywhere, remove a passkey or a
/// second factor, delete with the username typed again). Who may call it is the admin gate's rule (`AdminGate`);
/// an admin token needs the `people` scope. Every change goes through `PeopleService`, as `sesame users` does:
/// one transaction with its audit event naming the admin and the last-administrator rule. Group memberships are
/// the groups API's (`/api/admin/groups/{slug}/members/{user}`).
package struct PeopleAdminRoutes {
    package let sesame: ServerCore
    package let service: PeopleService
    package let backChannelLogout: BackChannelLogout?

    package init(sesame: ServerCore, store: SQLStore, backChannelLogout: BackChannelLogout?) {
        self.sesame = sesame
        self.service = PeopleService(
            store: store, groups: sesame.accountGroups, adminGroup: sesame.configuration.adminGroup,
            clock: sesame.clock)
        self.backChannelLogout = backChannelLogout
    }

    /// The scope an admin API token needs for these routes.
    package static let scope = AdminScope("people")

    /// The recent audit events one person's page shows.
    package static let recentEvents = 20

    package struct PersonSummary: ResponseEncodable, Sendable {
        package let id: String
        package let username: String
        package let displayName: String
        package let email: String?
        package let disabled: Bool
        package let createdAt: Date
    }

    package struct SearchBody: ResponseEncodable, Sendable {
        package let people: [PersonSummary]
        /// The cursor of the next page (`after`), absent on the last page.
        package let next: String?
    }

    package struct PasskeyBody: Encodable, Sendable {
        package let id: String
        package let name: String
        package let provider: String?
        package let icon: String?
        package let createdAt: Date
        package let lastUsedAt: Date?
        package let synced: Bool
    }

    package struct SessionBody: Encodable, Sendable {
        package let id: String
        package let method: String
        package let createdAt: Date
        package let lastSeenAt: Date
        package let userAgent: String
    }

    package struct AppBody: Encodable, Sendable {
        package let clientId: String
        package let name: String?
        package let scope: String
        package let grantedAt: Date
    }

    package struct EventBody: Encodable, Sendable {
        package let at: Date
        package let kind: String
        package let outcome: String
        package let clientAddress: String
        package let detail: String
    }

    package struct PersonBody: ResponseEncodable, Sendable {
        package let person: PersonSummary
        package let password: Bool
        package let pendingEmail: String?
        package let passkeys: [PasskeyBody]
        package let secondFactors: [String]
        package let groups: [String]
        package let sessions: [SessionBody]
        package let apps: [AppBody]
        package let events: [EventBody]
        /// Whether this person is a member of the administrators' group.
        package let administrator: Bool
    }

    package struct SignedOutBody: ResponseEncodable, Sendable { package let sessionsEnded: Int }

    package struct Confirmation: Decodable, Sendable { package let confirm: String }

    private static func summary(_ user: User, email: String?) -> PersonSummary {
        PersonSummary(
            id: user.id, username: user.username, displayName: user.displayName, email: email,
            disabled: user.disabled, createdAt: user.createdAt)
    }

    private func person(_ user: User) async throws -> PersonBody {
        let store = service.store
        let now = sesame.now
        let email = try await store.email(userID: user.id)
        let passkeys = try await store.credentials(userID: user.id).map { c in
            let aaguid = c.aaguid.flatMap(ProviderNames.uuidString)
            return PasskeyBody(
                id: Base64URL.encode(c.id), name: c.name,
                provider: aaguid.flatMap { ProviderNames.provider(for: $0, in: sesame.providers)?.name },
                icon: aaguid.flatMap { ProviderNames.iconPath(for: $0, in: sesame.providers) },
                createdAt: c.createdAt, lastUsedAt: c.lastUsedAt, synced: c.backedUp)
        }
        var apps: [AppBody] = []
        for consent in try await store.consents(userID: user.id) {
            apps.append(
                AppBody(
                    clientId: consent.clientID, name: try await store.client(id: consent.clientID)?.name,
                    scope: consent.scope, grantedAt: consent.grantedAt))
        }
        let groups = try await service.groups.groupSlugs(userID: user.id)
        return PersonBody(
            person: Self.summary(user, email: email?.address),
            password: try await store.password(userID: user.id) != nil,
            pendingEmail: email?.pending(at: now), passkeys: passkeys,
            secondFactors: try await FactorVerifier.factorsSetUp(userID: user.id, store: store).map(\.rawValue),
            groups: groups,
            sessions: try await store.sessions(userID: user.id, now: now).map {
                SessionBody(
                    id: $0.id, method: $0.method, createdAt: $0.createdAt, lastSeenAt: $0.lastSeenAt,
                    userAgent: String($0.userAgent.prefix(200)))
            },
            apps: apps,
            events: try await store.auditEvents(userID: user.id, limit: Self.recentEvents).map {
                EventBody(
                    at: $0.at, kind: $0.kind, outcome: $0.outcome, clientAddress: $0.clientAddress, detail: $0.detail)
            },
            administrator: groups.contains(sesame.configuration.adminGroup))
    }

    /// Registers the routes on the admin API's group (`/api/admin`, behind `AdminMiddleware`).
    package func register(admin: RouterGroup<AdminRequestContext>) {
        let people = admin.group("people")
        people.get("") { request, context in
            try context.admin.require(Self.scope)
            let query = request.uri.queryParameters
            let limitText = query["limit"].map(String.init) ?? "25"
            guard let limit = Int(limitText) else {
                throw APIError(.badRequest, .badRequest, "limit is a number from 1 to \(PeopleService.largestPage).")
            }
            let page = try await service.search(
                query["q"].map(String.init) ?? "", cursor: query["after"].map(String.init), limit: limit)
            return SearchBody(
                people: page.people.map {
                    PersonSummary(
                        id: $0.id, username: $0.username, displayName: $0.displayName, email: $0.email,
                        disabled: $0.disabled, createdAt: $0.createdAt)
                }, next: page.next)
        }
        people.get("{id}") { _, context in
            try context.admin.require(Self.scope)
            return try await person(try await service.account(try context.parameters.require("id")))
        }
        people.post("{id}/disable") { _, context in
            try context.admin.require(Self.scope)
            let disabled = try await service.disable(
                try context.parameters.require("id"), by: context.actor, logout: backChannelLogout)
            return try await person(disabled.user)
        }
        people.post("{id}/enable") { _, context in
            try context.admin.require(Self.scope)
            return try await person(try await service.enable(try context.parameters.require("id"), by: context.actor))
        }
        people.post("{id}/sign-out") { _, context in
            try context.admin.require(Self.scope)
            return SignedOutBody(
                sessionsEnded: try await service.signOutEverywhere(
                    try context.parameters.require("id"), by: context.actor))
        }
        people.delete("{id}/passkeys/{credential}") { _, context in
            try context.admin.require(Self.scope)
            try await service.removePasskey(
                try context.parameters.require("id"), credentialID: try context.parameters.require("credential"),
                by: context.actor)
            return Response(status: .noContent)
        }
        people.delete("{id}/factors/{factor}") { _, context in
            try context.admin.require(Self.scope)
            try await service.removeFactor(
                try context.parameters.require("id"), factor: try context.parameters.require("factor"),
                by: context.actor)
            return Response(status: .noContent)
        }
        people.delete("{id}") { request, context in
            try context.admin.require(Self.scope)
            let confirmation = try await request.decode(as: Confirmation.self, context: context)
            _ = try await service.delete(
                try context.parameters.require("id"), confirm: confirmation.confirm, by: context.actor)
            return Response(status: .noContent)
        }
    }
}
