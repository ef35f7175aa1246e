import Foundation
import Hummingbird
import SesameCore

/// "Apps with access" on the account page: the applications that sign this person in through Sesame (a consent
/// given, or a live grant of a first-party client), and removing one. Removing revokes the consent and every grant
/// (so its refresh tokens stop working and its access tokens fail introspection and UserInfo) and tells the app
/// over back-channel logout when it registered for it. It adds no way in, so it needs no recent sign-in.
package struct AppAccessRoutes {
    package let sesame: ServerCore
    package let store: any IdentityProviderStorage
    package let backChannelLogout: BackChannelLogout

    package init(sesame: ServerCore, store: any IdentityProviderStorage, backChannelLogout: BackChannelLogout) {
        self.sesame = sesame
        self.store = store
        self.backChannelLogout = backChannelLogout
    }

    package struct AppBody: Codable, Sendable {
        package let clientId: String
        package let name: String
        /// The scopes the person allowed, space-separated values as a list.
        package let scopes: [String]
        /// The earliest of the consent and the live grants.
        package let since: Date
        package let firstParty: Bool
    }

    /// An application the person may use: open to anyone, or allowing one of their groups.
    package struct AvailableApp: Codable, Sendable {
        package let clientId: String
        package let name: String
    }

    package struct AppList: ResponseEncodable, Sendable {
        package let apps: [AppBody]
        package let available: [AvailableApp]
    }

    /// The applications `userID` may use (`OAuthClient.allowedGroups` absent, or naming one of their groups), by name.
    package func available(userID: String) async throws -> [AvailableApp] {
        var apps: [AvailableApp] = []
        for client in try await store.clients()
        where try await IdentityProviderRoutes.mayUse(client, userID: userID, groups: sesame.accountGroups) {
            apps.append(AvailableApp(clientId: client.id, name: client.name))
        }
        return apps.sorted { ($0.name, $0.clientId) < ($1.name, $1.clientId) }
    }

    package func register(on router: Router<SesameRequestContext>) {
        let apps = router.group("/api/account/apps", context: SignedInRequestContext.self)

        apps.get("") { _, context in
            AppList(
                apps: try await list(userID: context.user.id), available: try await available(userID: context.user.id))
        }

        apps.delete("/{clientId}") { _, context in
            let clientID = try context.parameters.require("clientId")
            guard clientID.utf8.count <= 128,
                try await list(userID: context.user.id).contains(where: { $0.clientId == clientID })
            else { throw APIError.notFound }
            try await store.revokeAccess(userID: context.user.id, clientID: clientID, at: sesame.now)
            await sesame.audit.record(
                .appAccessRevoked, .success, user: context.user, context: context, detail: clientID, client: clientID)
            if let client = try await store.client(id: clientID) {
                backChannelLogout.send(to: [client], userID: context.user.id)
            }
            return Status(status: "revoked")
        }
    }

    /// One entry per client: its consent and live grants merged; clients removed by an operator are left out.
    package func list(userID: String) async throws -> [AppBody] {
        var scopes: [String: Set<String>] = [:]
        var since: [String: Date] = [:]
        func add(_ clientID: String, _ scope: String, _ at: Date) {
            scopes[clientID, default: []].formUnion(scope.split(separator: " ").map(String.init))
            since[clientID] = min(since[clientID] ?? at, at)
        }
        for consent in try await store.consents(userID: userID) {
            add(consent.clientID, consent.scope, consent.grantedAt)
        }
        for grant in try await store.grants(userID: userID, now: sesame.now) {
            add(grant.clientID, grant.scope, grant.createdAt)
        }
        var apps: [AppBody] = []
        for (clientID, allowed) in scopes {
            guard let client = try await store.client(id: clientID), let first = since[clientID] else {
                continue
            }
            apps.append(
                AppBody(
                    clientId: clientID, name: client.name, scopes: allowed.sorted(), since: first,
                    firstParty: client.firstParty))
        }
        return apps.sorted { ($0.name, $0.clientId) < ($1.name, $1.clientId) }
    }
}
