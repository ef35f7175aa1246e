import Foundation
import SQLKit
import SesameCore

/// An application that signs its people in through Sesame (OpenID Connect client).
public struct OAuthClient: Sendable, Equatable {
    public var id: String
    public var name: String
    /// SHA-256 of the client secret (secrets are 256 random bits, so a fast hash is enough); nil for public clients.
    public var secretHash: [UInt8]?
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    public var backchannelLogoutURI: String?
    /// First-party clients skip the consent page.
    public var firstParty: Bool
    /// `ES256` or `RS256`: how this client's ID tokens are signed.
    public var idTokenAlgorithm: String
    /// Whether `sub` is pairwise for this client (OpenID Connect Core §8.1): a value of its own per person, so
    /// clients of different sectors cannot match their users by it.
    public var pairwiseSubject: Bool
    /// The JWK set (JSON) of a client that authenticates with `private_key_jwt` instead of a secret.
    public var jwks: String?
    /// The slugs of the groups whose members may use the client; nil: anyone who can sign in. A person in none of
    /// them is refused at authorization (`access_denied`), at the device page and at every refresh.
    public var allowedGroups: [String]?
    /// Whether the scope claims (profile, email, groups and the groups' custom claims) go in the ID token as well as
    /// UserInfo; asked for at registration.
    public var idTokenClaims: Bool
    public var createdAt: Date

    /// Neither a secret nor registered keys: PKCE alone protects its codes.
    public var isPublic: Bool { secretHash == nil && jwks == nil }

    public init(
        id: String, name: String, secretHash: [UInt8]?, redirectURIs: [String], postLogoutRedirectURIs: [String] = [],
        backchannelLogoutURI: String? = nil, firstParty: Bool = false, idTokenAlgorithm: String = "ES256",
        pairwiseSubject: Bool = false, jwks: String? = nil, allowedGroups: [String]? = nil, idTokenClaims: Bool = false,
        createdAt: Date
    ) {
        self.allowedGroups = allowedGroups
        self.idTokenClaims = idTokenClaims
        self.id = id
        self.name = name
        self.secretHash = secretHash
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.backchannelLogoutURI = backchannelLogoutURI
        self.firstParty = firstParty
        self.idTokenAlgorithm = idTokenAlgorithm
        self.pairwiseSubject = pairwiseSubject
        self.jwks = jwks
        self.createdAt = createdAt
    }
}

/// A token-signing key as stored: the private key sealed at rest.
public struct StoredSigningKey: Sendable, Equatable {
    public var kid: String
    public var algorithm: String
    public var sealedPrivateKey: [UInt8]
    public var createdAt: Date
    /// When a newer key took over; the key stays published until every token it signed has expired.
    public var retiredAt: Date?

    package init(kid: String, algorithm: String, sealedPrivateKey: [UInt8], createdAt: Date, retiredAt: Date? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.sealedPrivateKey = sealedPrivateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// One authorization: what a person allowed a client, from one code exchange to the end of its refresh tokens.
/// Revoking it ends its refresh tokens and makes its access tokens fail introspection and UserInfo.
public struct OAuthGrant: Sendable, Equatable {
    public var id: String
    public var clientID: String
    public var userID: String
    public var scope: String
    public var nonce: String?
    /// When the person last proved who they are, and how (`SessionMethod` raw value).
    public var authTime: Date
    public var method: String
    /// The session's ``SessionRecord/passkeyBackupEligible`` when the grant was made (`hwk`/`swk` in `amr`).
    public var passkeyBackupEligible: Bool? = nil
    public var createdAt: Date
    /// The absolute end of the grant's refresh tokens.
    public var expiresAt: Date
    public var revokedAt: Date?
    /// The session (its public id) a grant without `offline_access` came from: the grant's tokens work only while
    /// that session is signed in. Nil for grants with `offline_access`, and for grants from before migration 15.
    public var sessionID: String? = nil

    package init(
        id: String, clientID: String, userID: String, scope: String, nonce: String? = nil, authTime: Date,
        method: String, passkeyBackupEligible: Bool? = nil, createdAt: Date, expiresAt: Date, revokedAt: Date? = nil,
        sessionID: String? = nil
    ) {
        self.id = id
        self.clientID = clientID
        self.userID = userID
        self.scope = scope
        self.nonce = nonce
        self.authTime = authTime
        self.method = method
        self.passkeyBackupEligible = passkeyBackupEligible
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.sessionID = sessionID
    }
}

/// An authorization code as stored (under its hash).
public struct OAuthCode: Sendable, Equatable {
    public var grantID: String
    public var redirectURI: String
    /// PKCE `code_challenge` (S256).
    public var codeChallenge: String
    public var expiresAt: Date

    package init(grantID: String, redirectURI: String, codeChallenge: String, expiresAt: Date) {
        self.grantID = grantID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.expiresAt = expiresAt
    }
}

/// What a person allowed a client on its consent page, remembered so they are not asked again.
public struct OAuthConsent: Sendable, Equatable {
    public var clientID: String
    public var scope: String
    public var grantedAt: Date
}

public enum CodeRedemption: Sendable, Equatable {
    case redeemed(OAuthCode, OAuthGrant)
    /// The code was used before: its grant is now revoked (RFC 6749 §4.1.2).
    case replayed
    /// No such code, or expired, or its grant is revoked.
    case invalid
}

public enum RefreshRotation: Sendable, Equatable {
    case rotated(OAuthGrant)
    /// A refresh token that was already exchanged: the whole grant is now revoked.
    case reused
    case invalid
}

/// Clients, signing keys, grants, codes, refresh tokens and consents of the OpenID Connect provider.
public protocol IdentityProviderStore {
    /// Stores a new client, and `audit` (the operator's or admin's event) in the same transaction.
    func createClient(_ client: OAuthClient, audit: AuditEvent?) async throws
    func client(id: String) async throws -> OAuthClient?
    func clients() async throws -> [OAuthClient]
    /// Records a client assertion's `jti` until the assertion expires; false if it was recorded before (a replay).
    func spendAssertionID(hash: [UInt8], expiresAt: Date) async throws -> Bool
    /// Replaces every field of an existing client (a declared client whose declaration changed).
    func updateClient(_ client: OAuthClient, audit: AuditEvent?) async throws
    func deleteClient(id: String, audit: AuditEvent?) async throws -> Bool
    /// False (and `audit` not written) when no confidential client has the id.
    func setClientSecret(id: String, secretHash: [UInt8], audit: AuditEvent?) async throws -> Bool

    func signingKeys() async throws -> [StoredSigningKey]
    /// Adds keys, each retiring every older unretired key of its algorithm, and `audit`, in one transaction.
    func addSigningKeys(_ keys: [StoredSigningKey], audit: AuditEvent?) async throws
    /// Inserts the key unless one of its algorithm exists (first start on several nodes at once); returns the keys.
    func ensureSigningKey(_ key: StoredSigningKey) async throws -> [StoredSigningKey]

    /// Stores a grant and its authorization code together.
    func createGrant(_ grant: OAuthGrant, codeHash: [UInt8], code: OAuthCode) async throws
    /// Spends a code once; a second use revokes what the first issued.
    func redeemCode(hash: [UInt8], now: Date) async throws -> CodeRedemption
    func grant(id: String) async throws -> OAuthGrant?
    func addRefreshToken(hash: [UInt8], grantID: String, idleExpiresAt: Date) async throws
    /// Spends a refresh token and stores its successor, in one transaction; a token spent before revokes the grant.
    func rotateRefreshToken(hash: [UInt8], newHash: [UInt8], idleExpiresAt: Date, now: Date) async throws
        -> RefreshRotation
    /// The grant of a refresh token (spent or not), for revocation.
    func grantID(refreshTokenHash: [UInt8]) async throws -> String?
    /// The grant of an unspent, unexpired refresh token whose grant is live.
    func liveRefreshTokenGrant(hash: [UInt8], now: Date) async throws -> OAuthGrant?
    func revokeGrant(id: String, at: Date) async throws
    /// Revokes every grant of the user (their refresh and access tokens stop working).
    func revokeGrants(userID: String, at: Date) async throws
    /// Grants of a user that are not revoked, not expired, and (when tied to a session) whose session is signed in,
    /// newest first.
    func grants(userID: String, now: Date) async throws -> [OAuthGrant]

    func consentedScope(userID: String, clientID: String) async throws -> String?
    /// Every consent the person gave, newest first.
    func consents(userID: String) async throws -> [OAuthConsent]
    func recordConsent(userID: String, clientID: String, scope: String, at: Date) async throws
    /// Forgets consent and revokes every grant of the client for the user ("Apps with access": remove).
    func revokeAccess(userID: String, clientID: String, at: Date) async throws
    /// When the account's profile (its display name) last changed, for the `updated_at` claim; nil until it did.
    func profileUpdatedAt(userID: String) async throws -> Date?
}

extension SQLStore: IdentityProviderStore {
    package struct ClientRow: Decodable {
        package let id: String
        package let name: String
        package let secretHash: Data?
        package let redirectUris: String
        package let postLogoutRedirectUris: String
        package let backchannelLogoutUri: String?
        package let firstParty: Int64
        package let idTokenAlg: String
        package let subjectType: String
        package let jwks: String?
        package let allowedGroups: String?
        package let idTokenClaims: Int64
        package let createdAt: Int64

        package var client: OAuthClient {
            OAuthClient(
                id: id, name: name, secretHash: secretHash.map { [UInt8]($0) }, redirectURIs: Self.list(redirectUris),
                postLogoutRedirectURIs: Self.list(postLogoutRedirectUris), backchannelLogoutURI: backchannelLogoutUri,
                firstParty: firstParty != 0, idTokenAlgorithm: idTokenAlg, pairwiseSubject: subjectType == "pairwise",
                jwks: jwks, allowedGroups: allowedGroups.map(Self.list), idTokenClaims: idTokenClaims != 0,
                createdAt: Date(milliseconds: createdAt)
            )
        }

        package static func list(_ json: String) -> [String] {
            (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
        }
        package static func json(_ list: [String]) -> String {
            String(decoding: (try? JSONEncoder().encode(list)) ?? Data("[]".utf8), as: UTF8.self)
        }
    }

    package static let clientColumns: SQLQueryString =
        "id, name, secret_hash, redirect_uris, post_logout_redirect_uris, backchannel_logout_uri, first_party, id_token_alg, subject_type, jwks, allowed_groups, id_token_claims, created_at"

    public func createClient(_ c: OAuthClient, audit: AuditEvent?) async throws {
        let insert: SQLQueryString =
            """
            INSERT INTO oauth_clients (\(Self.clientColumns)) VALUES (\(bind: c.id), \(bind: c.name), \(bind: c.secretHash.map { Data($0) }),
                \(bind: ClientRow.json(c.redirectURIs)), \(bind: ClientRow.json(c.postLogoutRedirectURIs)), \(bind: c.backchannelLogoutURI),
                \(bind: c.firstParty.column), \(bind: c.idTokenAlgorithm), \(bind: c.pairwiseSubject ? "pairwise" : "public"),
                \(bind: c.jwks), \(bind: c.allowedGroups.map(ClientRow.json)), \(bind: c.idTokenClaims.column),
                \(bind: c.createdAt.milliseconds))
            """
        do {
            try await engine.withTransaction { db in
                try await db.raw(insert).run()
                if let audit { try await db.raw(Self.auditInsert(audit)).run() }
            }
        } catch  where Self.isUniqueViolation(error) {
            throw StoreError.conflict
        }
    }

    public func client(id: String) async throws -> OAuthClient? {
        // No client's id holds a NUL (PostgreSQL's text cannot store one, and it refuses one in a bind with an
        // error): a `client_id` from a request that does is no client, on either engine.
        guard !id.utf8.contains(0) else { return nil }
        return try await db.raw("SELECT \(Self.clientColumns) FROM oauth_clients WHERE id = \(bind: id)").first()
            .map { try $0.decode(model: ClientRow.self, keyDecodingStrategy: .convertFromSnakeCase).client }
    }

    public func clients() async throws -> [OAuthClient] {
        try await db.raw("SELECT \(Self.clientColumns) FROM oauth_clients ORDER BY created_at, id").all()
            .map { try $0.decode(model: ClientRow.self, keyDecodingStrategy: .convertFromSnakeCase).client }
    }

    public func profileUpdatedAt(userID: String) async throws -> Date? {
        try await db.raw("SELECT updated_at FROM users WHERE id = \(bind: userID)").first()?
            .decode(column: "updated_at", as: Int64?.self).map(Date.init(milliseconds:))
    }

    public func spendAssertionID(hash: [UInt8], expiresAt: Date) async throws -> Bool {
        do {
            try await insert(
                "INSERT INTO oauth_assertion_ids (jti_hash, expires_at) VALUES (\(bind: Data(hash)), \(bind: expiresAt.milliseconds))"
            )
            return true
        } catch StoreError.conflict {
            return false
        }
    }

    public func updateClient(_ c: OAuthClient, audit: AuditEvent?) async throws {
        let update: SQLQueryString =
            """
            UPDATE oauth_clients SET name = \(bind: c.name), secret_hash = \(bind: c.secretHash.map { Data($0) }),
                redirect_uris = \(bind: ClientRow.json(c.redirectURIs)),
                post_logout_redirect_uris = \(bind: ClientRow.json(c.postLogoutRedirectURIs)),
                backchannel_logout_uri = \(bind: c.backchannelLogoutURI), first_party = \(bind: c.firstParty.column),
                id_token_alg = \(bind: c.idTokenAlgorithm), subject_type = \(bind: c.pairwiseSubject ? "pairwise" : "public"), jwks = \(bind: c.jwks),
                allowed_groups = \(bind: c.allowedGroups.map(ClientRow.json)), id_token_claims = \(bind: c.idTokenClaims.column)
            WHERE id = \(bind: c.id)
            """
        try await engine.withTransaction { db in
            try await db.raw(update).run()
            if let audit { try await db.raw(Self.auditInsert(audit)).run() }
        }
    }

    public func deleteClient(id: String, audit: AuditEvent?) async throws -> Bool {
        try await engine.withTransaction { db in
            guard !(try await db.raw("DELETE FROM oauth_clients WHERE id = \(bind: id) RETURNING id").all()).isEmpty
            else { return false }
            if let audit { try await db.raw(Self.auditInsert(audit)).run() }
            return true
        }
    }

    public func setClientSecret(id: String, secretHash: [UInt8], audit: AuditEvent?) async throws -> Bool {
        try await engine.withTransaction { db in
            guard
                !(try await db.raw(
                    "UPDATE oauth_clients SET secret_hash = \(bind: Data(secretHash)) WHERE id = \(bind: id) AND secret_hash IS NOT NULL RETURNING id"
                ).all()).isEmpty
            else { return false }
            if let audit { try await db.raw(Self.auditInsert(audit)).run() }
            return true
        }
    }

    package struct SigningKeyRow: Decodable {
        package let kid: String
        package let alg: String
        package let privateKey: Data
        package let createdAt: Int64
        package let retiredAt: Int64?

        package var key: StoredSigningKey {
            StoredSigningKey(
                kid: kid, algorithm: alg, sealedPrivateKey: [UInt8](privateKey),
                createdAt: Date(milliseconds: createdAt),
                retiredAt: retiredAt.map(Date.init(milliseconds:))
            )
        }
    }

    public func signingKeys() async throws -> [StoredSigningKey] {
        try await db.raw(
            "SELECT kid, alg, private_key, created_at, retired_at FROM oauth_signing_keys ORDER BY created_at, kid"
        ).all()
            .map { try $0.decode(model: SigningKeyRow.self, keyDecodingStrategy: .convertFromSnakeCase).key }
    }

    package static func signingKeyInsert(_ k: StoredSigningKey) -> SQLQueryString {
        """
        INSERT INTO oauth_signing_keys (kid, alg, private_key, created_at, retired_at) VALUES (\(bind: k.kid), \(bind: k.algorithm),
            \(bind: Data(k.sealedPrivateKey)), \(bind: k.createdAt.milliseconds), \(bind: k.retiredAt?.milliseconds))
        """
    }

    public func addSigningKeys(_ keys: [StoredSigningKey], audit: AuditEvent?) async throws {
        try await engine.withTransaction { db in
            for key in keys {
                try await db.raw(
                    "UPDATE oauth_signing_keys SET retired_at = \(bind: key.createdAt.milliseconds) WHERE alg = \(bind: key.algorithm) AND retired_at IS NULL"
                ).run()
                try await db.raw(Self.signingKeyInsert(key)).run()
            }
            if let audit { try await db.raw(Self.auditInsert(audit)).run() }
        }
    }

    public func ensureSigningKey(_ key: StoredSigningKey) async throws -> [StoredSigningKey] {
        try await engine.withTransaction { db in
            let existing = try await db.raw(
                "SELECT kid FROM oauth_signing_keys WHERE alg = \(bind: key.algorithm) AND retired_at IS NULL"
            ).all()
            if existing.isEmpty { try await db.raw(Self.signingKeyInsert(key)).run() }
        }
        return try await signingKeys()
    }

    package struct GrantRow: Decodable {
        package let id: String
        package let clientId: String
        package let userId: String
        package let scope: String
        package let nonce: String?
        package let authTime: Int64
        package let method: String
        package let createdAt: Int64
        package let expiresAt: Int64
        package let revokedAt: Int64?
        package let passkeyBackupEligible: Int64?
        package let sessionId: String?

        package var grant: OAuthGrant {
            OAuthGrant(
                id: id, clientID: clientId, userID: userId, scope: scope, nonce: nonce,
                authTime: Date(milliseconds: authTime), method: method,
                passkeyBackupEligible: passkeyBackupEligible.map { $0 != 0 },
                createdAt: Date(milliseconds: createdAt), expiresAt: Date(milliseconds: expiresAt),
                revokedAt: revokedAt.map(Date.init(milliseconds:)), sessionID: sessionId
            )
        }
    }

    package static let grantColumns: SQLQueryString =
        "id, client_id, user_id, scope, nonce, auth_time, method, created_at, expires_at, revoked_at, passkey_backup_eligible, session_id"

    package static func grant(_ row: any SQLRow) throws -> OAuthGrant {
        try row.decode(model: GrantRow.self, keyDecodingStrategy: .convertFromSnakeCase).grant
    }

    public func createGrant(_ g: OAuthGrant, codeHash: [UInt8], code: OAuthCode) async throws {
        try await engine.withTransaction { db in
            try await db.raw(
                """
                INSERT INTO oauth_grants (\(Self.grantColumns)) VALUES (\(bind: g.id), \(bind: g.clientID), \(bind: g.userID), \(bind: g.scope),
                    \(bind: g.nonce), \(bind: g.authTime.milliseconds), \(bind: g.method), \(bind: g.createdAt.milliseconds),
                    \(bind: g.expiresAt.milliseconds), NULL, \(bind: g.passkeyBackupEligible?.column), \(bind: g.sessionID))
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at, used_at) VALUES (\(bind: Data(codeHash)),
                    \(bind: g.id), \(bind: code.redirectURI), \(bind: code.codeChallenge), \(bind: code.expiresAt.milliseconds), NULL)
                """
            ).run()
        }
    }

    public func redeemCode(hash: [UInt8], now: Date) async throws -> CodeRedemption {
        try await engine.withTransaction { db in
            // Spent whether or not it turns out valid: a code is good for one attempt.
            let spent = try await db.raw(
                """
                UPDATE oauth_codes SET used_at = \(bind: now.milliseconds) WHERE code_hash = \(bind: Data(hash)) AND used_at IS NULL
                RETURNING grant_id, redirect_uri, code_challenge, expires_at
                """
            ).first()
            guard let spent else {
                // Used before: revoke what its first use issued.
                let found = "SELECT grant_id FROM oauth_codes WHERE code_hash = \(bind: Data(hash))" as SQLQueryString
                return try await Self.revokeGrant(found: found, db, at: now) ? .replayed : .invalid
            }
            let code = OAuthCode(
                grantID: try spent.decode(column: "grant_id", as: String.self),
                redirectURI: try spent.decode(column: "redirect_uri", as: String.self),
                codeChallenge: try spent.decode(column: "code_challenge", as: String.self),
                expiresAt: Date(milliseconds: try spent.decode(column: "expires_at", as: Int64.self))
            )
            guard code.expiresAt > now,
                let grant = try await Self.grant(id: code.grantID, db),
                grant.revokedAt == nil
            else { return .invalid }
            return .redeemed(code, grant)
        }
    }

    public func grant(id: String) async throws -> OAuthGrant? { try await Self.grant(id: id, db) }

    package static func grant(id: String, _ db: any SQLDatabase) async throws -> OAuthGrant? {
        try await db.raw("SELECT \(Self.grantColumns) FROM oauth_grants WHERE id = \(bind: id)").first().map(Self.grant)
    }

    public func addRefreshToken(hash: [UInt8], grantID: String, idleExpiresAt: Date) async throws {
        try await insert(
            """
            INSERT INTO oauth_refresh_tokens (token_hash, grant_id, idle_expires_at, used_at)
            VALUES (\(bind: Data(hash)), \(bind: grantID), \(bind: idleExpiresAt.milliseconds), NULL)
            """
        )
    }

    public func rotateRefreshToken(hash: [UInt8], newHash: [UInt8], idleExpiresAt: Date, now: Date) async throws
        -> RefreshRotation
    {
        try await engine.withTransaction { db in
            let spent = try await db.raw(
                """
                UPDATE oauth_refresh_tokens SET used_at = \(bind: now.milliseconds)
                WHERE token_hash = \(bind: Data(hash)) AND used_at IS NULL RETURNING grant_id, idle_expires_at
                """
            ).first()
            guard let spent else {
                // Spent before: whoever holds it now, the grant is compromised.
                let found =
                    "SELECT grant_id FROM oauth_refresh_tokens WHERE token_hash = \(bind: Data(hash))" as SQLQueryString
                return try await Self.revokeGrant(found: found, db, at: now) ? .reused : .invalid
            }
            let grantID = try spent.decode(column: "grant_id", as: String.self)
            guard try spent.decode(column: "idle_expires_at", as: Int64.self) > now.milliseconds,
                let grant = try await Self.grant(id: grantID, db),
                grant.revokedAt == nil, grant.expiresAt > now
            else { return .invalid }
            try await db.raw(
                """
                INSERT INTO oauth_refresh_tokens (token_hash, grant_id, idle_expires_at, used_at)
                VALUES (\(bind: Data(newHash)), \(bind: grantID), \(bind: min(idleExpiresAt, grant.expiresAt).milliseconds), NULL)
                """
            ).run()
            return .rotated(grant)
        }
    }

    public func grantID(refreshTokenHash: [UInt8]) async throws -> String? {
        try await db.raw("SELECT grant_id FROM oauth_refresh_tokens WHERE token_hash = \(bind: Data(refreshTokenHash))")
            .first()
            .map { try $0.decode(column: "grant_id", as: String.self) }
    }

    public func liveRefreshTokenGrant(hash: [UInt8], now: Date) async throws -> OAuthGrant? {
        try await db.raw(
            """
            SELECT g.id, g.client_id, g.user_id, g.scope, g.nonce, g.auth_time, g.method, g.created_at, g.expires_at, g.revoked_at
            FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
            WHERE r.token_hash = \(bind: Data(hash)) AND r.used_at IS NULL AND r.idle_expires_at > \(bind: now.milliseconds)
            AND g.revoked_at IS NULL AND g.expires_at > \(bind: now.milliseconds)
            """
        ).first().map(Self.grant)
    }

    public func revokeGrant(id: String, at: Date) async throws { try await Self.revokeGrant(id: id, db, at: at) }

    package static func revokeGrant(id: String, _ db: any SQLDatabase, at: Date) async throws {
        try await db.raw(
            "UPDATE oauth_grants SET revoked_at = \(bind: at.milliseconds) WHERE id = \(bind: id) AND revoked_at IS NULL"
        ).run()
    }

    public func revokeGrants(userID: String, at: Date) async throws {
        try await Self.revokeGrants(userID: userID, db, at: at)
    }

    /// Revokes every grant of the user, inside the caller's transaction (signing out everywhere, a new password,
    /// disabling the account).
    package static func revokeGrants(userID: String, _ db: any SQLDatabase, at: Date) async throws {
        try await db.raw(
            """
            UPDATE oauth_grants SET revoked_at = \(bind: at.milliseconds)
            WHERE user_id = \(bind: userID) AND revoked_at IS NULL
            """
        ).run()
    }

    /// Revokes the grant whose id `found` (a query for one `grant_id`) returns; false when it returns none.
    package static func revokeGrant(found: SQLQueryString, _ db: any SQLDatabase, at: Date) async throws -> Bool {
        guard let row = try await db.raw(found).first() else { return false }
        try await revokeGrant(id: try row.decode(column: "grant_id", as: String.self), db, at: at)
        return true
    }

    public func grants(userID: String, now: Date) async throws -> [OAuthGrant] {
        try await db.raw(
            """
            SELECT \(Self.grantColumns) FROM oauth_grants WHERE user_id = \(bind: userID) AND revoked_at IS NULL
            AND expires_at > \(bind: now.milliseconds)
            AND (session_id IS NULL OR EXISTS (
                SELECT 1 FROM sessions WHERE sessions.id = oauth_grants.session_id AND sessions.expires_at > \(bind: now.milliseconds)))
            ORDER BY created_at DESC
            """
        ).all().map(Self.grant)
    }

    public func consentedScope(userID: String, clientID: String) async throws -> String? {
        try await db.raw(
            "SELECT scope FROM oauth_consents WHERE user_id = \(bind: userID) AND client_id = \(bind: clientID)"
        ).first()
            .map { try $0.decode(column: "scope", as: String.self) }
    }

    public func consents(userID: String) async throws -> [OAuthConsent] {
        try await db.raw(
            """
            SELECT client_id, scope, granted_at FROM oauth_consents WHERE user_id = \(bind: userID)
            ORDER BY granted_at DESC
            """
        ).all().map {
            OAuthConsent(
                clientID: try $0.decode(column: "client_id", as: String.self),
                scope: try $0.decode(column: "scope", as: String.self),
                grantedAt: Date(milliseconds: try $0.decode(column: "granted_at", as: Int64.self)))
        }
    }

    public func recordConsent(userID: String, clientID: String, scope: String, at: Date) async throws {
        try await db.raw(
            """
            INSERT INTO oauth_consents (user_id, client_id, scope, granted_at) VALUES (\(bind: userID), \(bind: clientID), \(bind: scope), \(bind: at.milliseconds))
            ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at
            """
        ).run()
    }

    public func revokeAccess(userID: String, clientID: String, at: Date) async throws {
        try await engine.withTransaction { db in
            try await db.raw(
                "DELETE FROM oauth_consents WHERE user_id = \(bind: userID) AND client_id = \(bind: clientID)"
            ).run()
            try await db.raw(
                """
                UPDATE oauth_grants SET revoked_at = \(bind: at.milliseconds)
                WHERE user_id = \(bind: userID) AND client_id = \(bind: clientID) AND revoked_at IS NULL
                """
            ).run()
        }
    }
}
