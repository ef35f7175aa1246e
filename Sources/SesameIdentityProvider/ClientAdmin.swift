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

    public func addClient(_ options: ClientOptions) async throws -> [String] {
        guard let algorithm = IDTokenAlgorithm(rawValue: options.idTokenAlgorithm) else {
            throw AdminError(description: "--id-token-alg must be ES256 or RS256")
        }
        guard ["public", "pairwise"].contains(options.subjectType) else {
            throw AdminError(description: "--subject-type must be public or pairwise")
        }
        let registration = ClientRegistry.Registration(
            name: options.name, redirectURIs: options.redirectURIs,
            postLogoutRedirectURIs: options.postLogoutRedirectURIs,
            backchannelLogoutURI: options.backchannelLogoutURI, isPublic: options.isPublic,
            firstParty: options.firstParty, idTokenAlgorithm: algorithm,
            pairwiseSubject: options.subjectType == "pairwise", jwks: options.jwks,
            allowedGroups: try await checkedGroups(options.allowedGroups), idTokenClaims: options.idTokenClaims
        )
        let (client, secret) = try await ClientRegistry(store: store).add(registration, now: Date())
        try await store.appendAudit(AuditEvent.byOperator(.clientAdded, .success, user: nil, detail: client.id))
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

    /// What `sesame clients update` changes; nil fields are kept.
    public struct ClientChanges: Sendable {
        /// `.some(nil)`: anyone may use the application again.
        public var allowedGroups: [String]??
        public var idTokenClaims: Bool?

        public init() {}
    }

    public func updateClient(_ id: String, _ changes: ClientChanges) async throws -> String {
        guard var client = try await store.client(id: id) else {
            throw AdminError(description: "no client \(id.prefix(64))")
        }
        if let allowed = changes.allowedGroups { client.allowedGroups = try await checkedGroups(allowed) }
        if let claims = changes.idTokenClaims { client.idTokenClaims = claims }
        try await store.updateClient(client)
        try await store.appendAudit(AuditEvent.byOperator(.clientUpdated, .success, user: nil, detail: client.id))
        return "client \(client.id) updated: allowed groups "
            + (client.allowedGroups?.joined(separator: ",") ?? "anyone")
            + ", claims in the ID token \(client.idTokenClaims ? "yes" : "no")"
    }

    public func removeClient(_ id: String) async throws -> String {
        guard try await store.deleteClient(id: id) else { throw AdminError(description: "no client \(id.prefix(64))") }
        try await store.appendAudit(AuditEvent.byOperator(.clientRemoved, .success, user: nil, detail: id))
        return "client \(id) removed; its grants and tokens no longer work"
    }

    public func rotateClientSecret(_ id: String) async throws -> String {
        let secret = try await ClientRegistry(store: store).rotateSecret(id: id)
        try await store.appendAudit(AuditEvent.byOperator(.clientSecretRotated, .success, user: nil, detail: id))
        return "client_secret: \(secret)  (shown once; the old secret no longer works)"
    }

    public func rotateSigningKeys() async throws -> [String] {
        guard let sql = store as? SQLStore else { throw AdminError(description: "signing keys need the SQL store") }
        let ring = SigningKeyring(store: store, ciphers: sql.ciphers, clock: .system, longestTokenLifetime: 0)
        let made = try await ring.rotate()
        try await store.appendAudit(
            AuditEvent.byOperator(.signingKeysRotated, .success, user: nil, detail: made.joined(separator: ", ")))
        return made.map { "new signing key \($0); the previous key stays published until its tokens expire" }
    }
}
