import Foundation
import Hummingbird
import SesameCore

/// The admin JSON API for applications (`/api/admin/apps…`, scope `apps`) and the provider's signing keys
/// (`/api/admin/signing-keys…`, scope `keys`), in the OpenAPI document; the console's Apps and Signing keys pages
/// call it. It goes through `ClientAdmin`, as `sesame clients` and `sesame signing-keys` do, so the rules and the
/// audit events (naming the admin, in the change's transaction) are the command line's. A client secret is in the
/// answer of its creation or rotation only; nothing reads it back.
package struct AppsAdminRoutes: Sendable {
    package let sesame: ServerCore
    package let admin: ClientAdmin
    package let signingKeys: SigningKeyring

    package init(sesame: ServerCore, store: any IdentityProviderStorage, signingKeyring: SigningKeyring) {
        self.sesame = sesame
        self.admin = ClientAdmin(store: store, groups: sesame.accountGroups)
        self.signingKeys = signingKeyring
    }

    package static let appsScope = AdminScope("apps")
    package static let keysScope = AdminScope("keys")

    package struct AppBody: ResponseEncodable, Sendable {
        package let id: String
        package let name: String
        /// `confidential` (a secret), `private_key_jwt` (registered keys) or `public` (PKCE only).
        package let type: String
        package let redirectUris: [String]
        package let postLogoutRedirectUris: [String]
        package let backchannelLogoutUri: String?
        /// nil: anyone who can sign in.
        package let allowedGroups: [String]?
        package let idTokenClaims: Bool
        package let firstParty: Bool
        package let idTokenAlgorithm: String
        package let subjectType: String
        package let createdAt: Date

        init(_ client: OAuthClient) {
            id = client.id
            name = client.name
            type = client.isPublic ? "public" : client.jwks != nil ? "private_key_jwt" : "confidential"
            redirectUris = client.redirectURIs
            postLogoutRedirectUris = client.postLogoutRedirectURIs
            backchannelLogoutUri = client.backchannelLogoutURI
            allowedGroups = client.allowedGroups
            idTokenClaims = client.idTokenClaims
            firstParty = client.firstParty
            idTokenAlgorithm = client.idTokenAlgorithm
            subjectType = client.pairwiseSubject ? "pairwise" : "public"
            createdAt = client.createdAt
        }
    }

    package struct AppListBody: ResponseEncodable, Sendable { package let apps: [AppBody] }

    /// An application and, once, its secret (nil for a public one).
    package struct AppSecretBody: ResponseEncodable, Sendable {
        package let app: AppBody
        package let secret: String?
    }

    package struct NewApp: Decodable, Sendable {
        package let name: String
        package let redirectUris: [String]
        package let postLogoutRedirectUris: [String]?
        package let backchannelLogoutUri: String?
        package let allowedGroups: [String]?
        package let idTokenClaims: Bool?
        package let `public`: Bool?
        package let firstParty: Bool?
    }

    /// A change: absent members are kept; `backchannelLogoutUri` and `allowedGroups` given as null are cleared.
    package struct AppChange: Decodable, Sendable {
        package var changes = ClientAdmin.ClientChanges()

        private enum Keys: String, CodingKey {
            case name, redirectUris, postLogoutRedirectUris, backchannelLogoutUri, allowedGroups, idTokenClaims
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            changes.name = try container.decodeIfPresent(String.self, forKey: .name)
            changes.redirectURIs = try container.decodeIfPresent([String].self, forKey: .redirectUris)
            changes.postLogoutRedirectURIs = try container.decodeIfPresent(
                [String].self, forKey: .postLogoutRedirectUris)
            if container.contains(.backchannelLogoutUri) {
                changes.backchannelLogoutURI = .some(
                    try container.decodeIfPresent(String.self, forKey: .backchannelLogoutUri))
            }
            if container.contains(.allowedGroups) {
                changes.allowedGroups = .some(try container.decodeIfPresent([String].self, forKey: .allowedGroups))
            }
            changes.idTokenClaims = try container.decodeIfPresent(Bool.self, forKey: .idTokenClaims)
        }
    }

    package struct SigningKeyBody: ResponseEncodable, Sendable {
        package let kid: String
        package let algorithm: String
        /// `current` (signs new tokens), `published` (retired, still in the JWKS until its tokens expire) or
        /// `retired`.
        package let state: String
        package let createdAt: Date
        package let retiredAt: Date?
        package let ageSeconds: Int
    }

    package struct SigningKeyListBody: ResponseEncodable, Sendable {
        package let keys: [SigningKeyBody]
        /// After a rotation: the new keys, `<alg> <kid>`.
        package let rotated: [String]?
    }

    private func signingKeyList(rotated: [String]?) async throws -> SigningKeyListBody {
        let now = sesame.now
        let keys = try await admin.store.signingKeys().reversed().map { key in
            let state =
                key.retiredAt.map {
                    now.timeIntervalSince($0) <= signingKeys.longestTokenLifetime ? "published" : "retired"
                }
                ?? "current"
            return SigningKeyBody(
                kid: key.kid, algorithm: key.algorithm, state: state, createdAt: key.createdAt,
                retiredAt: key.retiredAt, ageSeconds: max(0, Int(now.timeIntervalSince(key.createdAt))))
        }
        return SigningKeyListBody(keys: keys, rotated: rotated)
    }

    /// Registers the routes on the admin API's group (`/api/admin`, behind `AdminMiddleware`).
    package func register(admin group: RouterGroup<AdminRequestContext>) {
        let apps = group.group("apps")
        apps.get("") { _, context in
            try context.admin.require(Self.appsScope)
            return AppListBody(apps: try await admin.store.clients().map(AppBody.init))
        }
        apps.get("{id}") { _, context in
            try context.admin.require(Self.appsScope)
            let id = try context.parameters.require("id")
            guard let client = try await admin.store.client(id: id) else { throw ClientAdmin.notFound(id) }
            return AppBody(client)
        }
        apps.post("") { request, context in
            try context.admin.require(Self.appsScope)
            let new = try await request.decode(as: NewApp.self, context: context)
            var options = ClientAdmin.ClientOptions(name: new.name, redirectURIs: new.redirectUris)
            options.postLogoutRedirectURIs = new.postLogoutRedirectUris ?? []
            options.backchannelLogoutURI = new.backchannelLogoutUri
            options.allowedGroups = new.allowedGroups
            options.idTokenClaims = new.idTokenClaims ?? false
            options.isPublic = new.public ?? false
            options.firstParty = new.firstParty ?? false
            let (client, secret) = try await admin.create(options, by: context.actor, at: sesame.now)
            return EditedResponse(status: .created, response: AppSecretBody(app: AppBody(client), secret: secret))
        }
        apps.patch("{id}") { request, context in
            try context.admin.require(Self.appsScope)
            let change = try await request.decode(as: AppChange.self, context: context)
            return AppBody(
                try await admin.update(
                    try context.parameters.require("id"), change.changes, by: context.actor, at: sesame.now))
        }
        apps.post("{id}/secret") { _, context in
            try context.admin.require(Self.appsScope)
            let id = try context.parameters.require("id")
            let secret = try await admin.rotateSecret(id, by: context.actor, at: sesame.now)
            guard let client = try await admin.store.client(id: id) else { throw ClientAdmin.notFound(id) }
            return AppSecretBody(app: AppBody(client), secret: secret)
        }
        apps.delete("{id}") { _, context in
            try context.admin.require(Self.appsScope)
            try await admin.remove(try context.parameters.require("id"), by: context.actor, at: sesame.now)
            return Response(status: .noContent)
        }

        let keys = group.group("signing-keys")
        keys.get("") { _, context in
            try context.admin.require(Self.keysScope)
            _ = try await signingKeys.keys()  // makes the first keys if none exist yet
            return try await signingKeyList(rotated: nil)
        }
        keys.post("rotate") { _, context in
            try context.admin.require(Self.keysScope)
            let made = try await admin.rotateSigningKeys(ring: signingKeys, by: context.actor)
            return try await signingKeyList(rotated: made)
        }
    }
}
