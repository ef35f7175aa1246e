import Foundation
import SesameCore

/// `sesame clients …` and `sesame signing-keys rotate`: registering the applications that sign their people in
/// through Sesame, and rotating the keys their tokens are signed with. Every change is an audit event; a client
/// secret is printed once, at registration or rotation, and never stored in clear.
public struct ClientAdmin: Sendable {
    package let store: any IdentityProviderStorage
    /// Where allowed groups are checked to exist (nil: not checked).
    package let groups: (any AccountGroups)?

    package init(store: any IdentityProviderStorage, groups: (any AccountGroups)? = nil) {
        self.store = store
        self.groups = groups
    }

    /// Allowed groups checked: the slug rule, then that each names a group.
    private func checkedGroups(_ slugs: [String]?) async throws -> [String]? {
        guard let slugs = try ClientRegistry.checkAllowedGroups(slugs) else { return nil }
        if let unknown = try await groups?.unknownSlugs(slugs), !unknown.isEmpty {
            throw AdminError(
                description: "no group \(unknown.joined(separator: ", ")); add it first with sesame groups add")
        }
        return slugs
    }

    public struct ClientOptions: Sendable {
        public var name: String
        public var redirectURIs: [String]
        public var postLogoutRedirectURIs: [String] = []
        public var backchannelLogoutURI: String?
        public var isPublic = false
        public var firstParty = false
        public var idTokenAlgorithm = "ES256"
        /// `public` or `pairwise`.
        public var subjectType = "public"
        /// A JWK set (JSON) for `private_key_jwt`.
        public var jwks: String?
        /// The groups whose members may use the application; nil: anyone.
        public var allowedGroups: [String]?
        /// The scope claims in the ID token too.
        public var idTokenClaims = false

        public init(name: String, redirectURIs: [String]) {
            self.name = name
            self.redirectURIs = redirectURIs
        }
    }

    /// Runs `body`, a refusal of the rules (`APIError`) becoming the command's `AdminError`.
    private func refusing<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as APIError { throw AdminError(description: error.message) }
    }

    /// Runs `body`, a refusal of the registration rules (`AdminError`) becoming `invalid_app`.
    private static func typed<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as AdminError {
            throw APIError(.badRequest, .invalidApp, error.message)
        }
    }

    package static func notFound(_ id: String) -> APIError {
        APIError(.notFound, .appNotFound, "There is no app \(id.prefix(64)).")
    }

    /// Registers an application, the change audited with `actor` in the same transaction; its secret (nil for a
    /// public client or one with keys) is never shown again. Refusals are `APIError`s (`invalid_app`).
    package func create(_ options: ClientOptions, by actor: AdminActor, at now: Date = Date()) async throws
        -> (client: OAuthClient, secret: String?)
    {
        try await Self.typed {
            guard let algorithm = IDTokenAlgorithm(rawValue: options.idTokenAlgorithm) else {
                throw AdminError(description: "the ID token algorithm must be ES256 or RS256")
            }
            guard ["public", "pairwise"].contains(options.subjectType) else {
                throw AdminError(description: "the subject type must be public or pairwise")
            }
            let registration = ClientRegistry.Registration(
                name: options.name, redirectURIs: options.redirectURIs,
                postLogoutRedirectURIs: options.postLogoutRedirectURIs,
                backchannelLogoutURI: options.backchannelLogoutURI, isPublic: options.isPublic,
                firstParty: options.firstParty, idTokenAlgorithm: algorithm,
                pairwiseSubject: options.subjectType == "pairwise", jwks: options.jwks,
                allowedGroups: try await checkedGroups(options.allowedGroups), idTokenClaims: options.idTokenClaims
            )
            return try await ClientRegistry(store: store).add(registration, now: now) { id in
                actor.event(.clientAdded, subject: nil, detail: id, at: now, client: id)
            }
        }
    }

    public func addClient(_ options: ClientOptions) async throws -> [String] {
        let (client, secret) = try await refusing { try await create(options, by: .commandLine) }
        var lines = ["client_id: \(client.id)"]
        if let secret {
            lines.append("client_secret: \(secret)  (shown once; store it now)")
        } else if client.jwks != nil {
            lines.append("private_key_jwt: the application signs client assertions with its registered keys")
        } else {
            lines.append("public client: no secret (PKCE only)")
        }
        return lines
    }

    public func listClients() async throws -> [String] {
        try await store.clients().map { client in
            "\(client.id)  \(client.name)  \(client.isPublic ? "public" : "confidential")\(client.firstParty ? ", first-party" : "")  \(client.redirectURIs.joined(separator: " "))"
        }
    }

    public func showClient(_ id: String) async throws -> String {
        guard let client = try await store.client(id: id) else {
            throw AdminError(description: "no client \(id.prefix(64))")
        }
        var lines = [
            "client_id: \(client.id)", "name: \(client.name)",
            "type: \(client.isPublic ? "public" : client.jwks != nil ? "confidential (private_key_jwt)" : "confidential")",
            "first-party: \(client.firstParty ? "yes (no consent page)" : "no")",
            "id token algorithm: \(client.idTokenAlgorithm)",
            "subject type: \(client.pairwiseSubject ? "pairwise" : "public")",
        ]
        lines += client.redirectURIs.map { "redirect URI: \($0)" }
        lines += client.postLogoutRedirectURIs.map { "post-logout redirect URI: \($0)" }
        if let uri = client.backchannelLogoutURI { lines.append("back-channel logout URI: \(uri)") }
        lines.append("allowed groups: \(client.allowedGroups?.joined(separator: ", ") ?? "anyone who can sign in")")
        lines.append("claims in the ID token: \(client.idTokenClaims ? "yes" : "no (UserInfo only)")")
        return lines.joined(separator: "\n")
    }

    /// What `sesame clients update` and the admin API change; nil fields are kept.
    public struct ClientChanges: Sendable {
        public var name: String?
        public var redirectURIs: [String]?
        public var postLogoutRedirectURIs: [String]?
        /// `.some(nil)`: no back-channel logout any more.
        public var backchannelLogoutURI: String??
        /// `.some(nil)`: anyone may use the application again.
        public var allowedGroups: [String]??
        public var idTokenClaims: Bool?

        public init() {}
    }

    /// Changes an application by the registration rules (`ClientRegistry.checked`), audited with `actor` in the
    /// same transaction. Refusals are `APIError`s (`app_not_found`, `invalid_app`).
    package func update(_ id: String, _ changes: ClientChanges, by actor: AdminActor, at now: Date = Date())
        async throws -> OAuthClient
    {
        guard var client = try await store.client(id: id) else { throw Self.notFound(id) }
        return try await Self.typed {
            // Allowed groups are checked to exist when they change (a group removed since stays named).
            var allowedGroups = client.allowedGroups
            if let changed = changes.allowedGroups { allowedGroups = try await checkedGroups(changed) }
            let registration = try ClientRegistry.checked(
                ClientRegistry.Registration(
                    name: changes.name ?? client.name, redirectURIs: changes.redirectURIs ?? client.redirectURIs,
                    postLogoutRedirectURIs: changes.postLogoutRedirectURIs ?? client.postLogoutRedirectURIs,
                    backchannelLogoutURI: changes.backchannelLogoutURI ?? client.backchannelLogoutURI,
                    isPublic: client.isPublic, firstParty: client.firstParty,
                    idTokenAlgorithm: IDTokenAlgorithm(rawValue: client.idTokenAlgorithm) ?? .es256,
                    pairwiseSubject: client.pairwiseSubject, jwks: client.jwks,
                    allowedGroups: allowedGroups,
                    idTokenClaims: changes.idTokenClaims ?? client.idTokenClaims))
            client.name = registration.name
            client.redirectURIs = registration.redirectURIs
            client.postLogoutRedirectURIs = registration.postLogoutRedirectURIs
            client.backchannelLogoutURI = registration.backchannelLogoutURI
            client.allowedGroups = registration.allowedGroups
            client.idTokenClaims = registration.idTokenClaims
            try await store.updateClient(
                client, audit: actor.event(.clientUpdated, subject: nil, detail: client.id, at: now, client: client.id))
            return client
        }
    }

    public func updateClient(_ id: String, _ changes: ClientChanges) async throws -> String {
        let client = try await refusing { try await update(id, changes, by: .commandLine) }
        return "client \(client.id) updated: allowed groups "
            + (client.allowedGroups?.joined(separator: ",") ?? "anyone")
            + ", claims in the ID token \(client.idTokenClaims ? "yes" : "no")"
    }

    /// Removes an application (its grants and tokens go with it), audited with `actor` in the same transaction.
    package func remove(_ id: String, by actor: AdminActor, at now: Date = Date()) async throws {
        guard
            try await store.deleteClient(
                id: id, audit: actor.event(.clientRemoved, subject: nil, detail: id, at: now, client: id))
        else { throw Self.notFound(id) }
    }

    public func removeClient(_ id: String) async throws -> String {
        try await refusing { try await remove(id, by: .commandLine) }
        return "client \(id) removed; its grants and tokens no longer work"
    }

    /// A new secret for a confidential application, shown once; the old one stops working at once. Audited with
    /// `actor` in the same transaction. A public client or one with keys has no secret (`app_not_found` names
    /// "no confidential app").
    package func rotateSecret(_ id: String, by actor: AdminActor, at now: Date = Date()) async throws -> String {
        do {
            return try await ClientRegistry(store: store).rotateSecret(
                id: id, audit: actor.event(.clientSecretRotated, subject: nil, detail: id, at: now, client: id))
        } catch is AdminError {
            throw APIError(.notFound, .appNotFound, "There is no app \(id.prefix(64)) with a secret.")
        }
    }

    public func rotateClientSecret(_ id: String) async throws -> String {
        let secret = try await refusing { try await rotateSecret(id, by: .commandLine) }
        return "client_secret: \(secret)  (shown once; the old secret no longer works)"
    }

    /// A new current signing key for each algorithm, the old ones retiring; audited with `actor` in the same
    /// transaction. Returns `<alg> <kid>` of each new key.
    package func rotateSigningKeys(ring: SigningKeyring, by actor: AdminActor) async throws -> [String] {
        try await ring.rotate { made, at in actor.event(.signingKeysRotated, subject: nil, detail: made, at: at) }
    }

    public func rotateSigningKeys() async throws -> [String] {
        guard let sql = store as? SQLStore else { throw AdminError(description: "signing keys need the SQL store") }
        let ring = SigningKeyring(store: store, ciphers: sql.ciphers, clock: .system, longestTokenLifetime: 0)
        let made = try await rotateSigningKeys(ring: ring, by: .commandLine)
        return made.map { "new signing key \($0); the previous key stays published until its tokens expire" }
    }
}
