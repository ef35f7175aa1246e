import Foundation
import WebAuthn
import SesameCore

/// The claims the identity provider gives, in one table: those every ID token carries, and those each scope adds
/// from the account. The ID token (`IDTokenClaims`: the scope claims only for clients registered with
/// `idTokenClaims`), UserInfo, discovery's `scopes_supported` and `claims_supported`, and the names a group's custom
/// claims may not use all read this table.
package enum ScopeClaims {
    /// What a scope's claims are read from: the account, its verified email address (none when addresses are off or
    /// the account has no verified one), whether addresses are on (`keepsAddresses`, the `email` setting), when its
    /// profile last changed, its groups with their custom claims, and the language the person saved.
    package struct Source: Sendable {
        package let user: User
        package let verifiedEmail: String?
        package let keepsAddresses: Bool
        /// When the display name last changed; nil: the account's creation.
        package let updatedAt: Date?
        package let groups: [String]
        package let groupClaims: [String: JSONValue]
        /// The language the person saved on their account page (a BCP 47 tag of the catalog); nil: none saved.
        package let locale: String?

        package init(
            user: User, verifiedEmail: String? = nil, keepsAddresses: Bool? = nil, updatedAt: Date? = nil,
            groups: [String] = [], groupClaims: [String: JSONValue] = [:], locale: String? = nil
        ) {
            self.locale = locale
            self.user = user
            self.verifiedEmail = verifiedEmail
            self.keepsAddresses = keepsAddresses ?? (verifiedEmail != nil)
            self.updatedAt = updatedAt
            self.groups = groups
            self.groupClaims = groupClaims
        }
    }

    /// A claim's value, as JSON.
    package typealias Value = JSONValue

    /// Every ID token's claims (OpenID Connect Core 1.0 §2).
    package static let always = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "amr", "acr", "azp"]
    /// The claims a scope adds, each with its value from the account, or nil when the account has none (§5.4:
    /// `profile`, whose `locale` (§5.1, a BCP 47 tag) is the language the person saved, absent when none is; `email`;
    /// and `groups`, the slugs of the account's groups, always a list). `email` gives only a
    /// verified address, so `email_verified` is true whenever it is given; while addresses are on and the account has
    /// none verified yet (`email` `required`, before the code is typed), `email_verified` is false and `email` absent,
    /// so an app can tell "not yet" from "not kept".
    package static let byScope: [(scope: String, claims: [(name: String, value: @Sendable (Source) -> Value?)])] = [
        (
            "profile",
            [
                ("preferred_username", { .string($0.user.username) }), ("name", { .string($0.user.displayName) }),
                ("updated_at", { .int(Int(($0.updatedAt ?? $0.user.createdAt).timeIntervalSince1970)) }),
                ("locale", { $0.locale.map(Value.string) }),
            ]
        ),
        (
            "email",
            [
                ("email", { $0.verifiedEmail.map(Value.string) }),
                (
                    "email_verified",
                    { $0.verifiedEmail != nil ? .bool(true) : $0.keepsAddresses ? .bool(false) : nil }
                ),
            ]
        ),
        ("groups", [("groups", { .array($0.groups.map(Value.string)) })]),
    ]

    /// What discovery lists as `scopes_supported`, and every scope a request may ask for (others are ignored at
    /// authorization, refused at device authorization).
    package static var scopes: [String] { ["openid"] + byScope.map(\.scope) + ["offline_access"] }

    /// The names a group's custom claims may not use: every claim the provider gives itself (the ID token's own,
    /// every scope's), the other registered JWT and OpenID Connect claims (RFC 7519 §4.1, OpenID Connect Core
    /// §5.1), and those of Sesame's access and logout tokens. A custom claim under one of these names could make a
    /// group's members someone else to the app (`sub`, `email`) or extend a token (`exp`).
    package static let reserved: Set<String> = Set(
        always + byScope.flatMap { $0.claims.map(\.name) } + registered)

    /// Registered claim names that no scope gives today.
    private static let registered = [
        "jti", "nbf", "typ", "cnf", "sid", "at_hash", "c_hash", "s_hash", "client_id", "scope", "gid", "events",
        "given_name", "family_name", "middle_name", "nickname", "profile", "picture", "website", "gender", "birthdate",
        "zoneinfo", "phone_number", "phone_number_verified", "address",
    ]

    /// What discovery lists as `claims_supported`.
    package static var supported: [String] { always + byScope.flatMap { $0.claims.map(\.name) } }

    private static func grantedScopes(_ scope: String) -> Set<String> {
        Set(scope.split(separator: " ").map(String.init))
    }

    /// The scope-given claims for a granted scope (space-separated) and an account. Under `groups`, the groups'
    /// custom claims join them (merged by slug ascending, a later group winning; never a name of the table).
    package static func claims(scope: String, source: Source) -> [String: Value] {
        let granted = grantedScopes(scope)
        var claims: [String: Value] = [:]
        if granted.contains("groups") {
            let names = Self.reserved
            for (name, value) in source.groupClaims where !names.contains(name) { claims[name] = value }
        }
        for (name, given) in byScope where granted.contains(name) {
            for claim in given { claims[claim.name] = claim.value(source) }
        }
        return claims
    }

    /// The source for a granted scope: the address, the profile's time and the groups are read only when the scope
    /// gives them.
    package static func source(
        scope: String, user: User, emails: any VerifiedEmailLookup, groups: any GroupClaimsLookup,
        store: any IdentityProviderStorage, languages: any LanguagePreferences = NoLanguagePreferences()
    ) async throws -> Source {
        let granted = grantedScopes(scope)
        var email: String?
        var updatedAt: Date?
        var memberships: (slugs: [String], claims: [String: JSONValue]) = ([], [:])
        let needsEmail = granted.contains("email")
        if needsEmail { email = try await emails.verifiedEmail(userID: user.id) }
        var locale: String?
        if granted.contains("profile") {
            updatedAt = try await store.profileUpdatedAt(userID: user.id)
            locale = try await languages.savedLanguage(of: user.id)
        }
        if granted.contains("groups") { memberships = try await groups.groupClaims(userID: user.id) }
        return Source(
            user: user, verifiedEmail: email, keepsAddresses: needsEmail && emails.keepsAddresses, updatedAt: updatedAt,
            groups: memberships.slugs, groupClaims: memberships.claims, locale: locale)
    }
}

/// Where the identity provider reads the groups an account is in (the `groups` scope): their slugs, sorted, and their
/// custom claims merged into one object (groups by slug ascending, a later group's value winning). The composition
/// root passes the groups feature's (`StoredAccountGroups`); without it, `NoGroupClaims`.
package protocol GroupClaimsLookup: Sendable {
    func groupClaims(userID: String) async throws -> (slugs: [String], claims: [String: JSONValue])
}

/// No groups: the `groups` scope gives an empty list and no custom claims.
package struct NoGroupClaims: GroupClaimsLookup {
    package init() {}
    package func groupClaims(userID: String) async throws -> (slugs: [String], claims: [String: JSONValue]) {
        ([], [:])
    }
}

/// Where the identity provider (and forward auth) read an account's verified email address; the composition root
/// passes the address feature's store, or `NoVerifiedEmail` when addresses are off.
package protocol VerifiedEmailLookup: Sendable {
    func verifiedEmail(userID: String) async throws -> String?
    /// Whether accounts keep addresses at all (the `email` setting is not `off`).
    var keepsAddresses: Bool { get }
}

/// No addresses: the `email` scope gives nothing.
package struct NoVerifiedEmail: VerifiedEmailLookup {
    package init() {}
    package func verifiedEmail(userID: String) async throws -> String? { nil }
    package var keepsAddresses: Bool { false }
}

/// The claims of ID tokens (OpenID Connect Core 1.0 §2): those every token carries (`ScopeClaims.always`), then
/// the scope claims (`scopeClaims`: for clients registered with `idTokenClaims`, else none; the names never clash,
/// `ScopeClaims.reserved` holds the fixed ones).
package struct IDTokenClaims: TokenClaims {
    package let iss: String
    package let sub: String
    package let aud: String
    package let exp: Int
    package let iat: Int
    package let auth_time: Int
    package let nonce: String?
    package let amr: [String]
    package let acr: String?
    package let azp: String
    package let scopeClaims: [String: JSONValue]

    package init(
        iss: String, sub: String, aud: String, exp: Int, iat: Int, auth_time: Int, nonce: String?, amr: [String],
        acr: String?, azp: String, scopeClaims: [String: JSONValue] = [:]
    ) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.exp = exp
        self.iat = iat
        self.auth_time = auth_time
        self.nonce = nonce
        self.amr = amr
        self.acr = acr
        self.azp = azp
        self.scopeClaims = scopeClaims
    }

    private struct Key: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        iss = try c.decode(String.self, forKey: Key("iss"))
        sub = try c.decode(String.self, forKey: Key("sub"))
        aud = try c.decode(String.self, forKey: Key("aud"))
        exp = try c.decode(Int.self, forKey: Key("exp"))
        iat = try c.decode(Int.self, forKey: Key("iat"))
        auth_time = try c.decode(Int.self, forKey: Key("auth_time"))
        nonce = try c.decodeIfPresent(String.self, forKey: Key("nonce"))
        amr = try c.decode([String].self, forKey: Key("amr"))
        acr = try c.decodeIfPresent(String.self, forKey: Key("acr"))
        azp = try c.decode(String.self, forKey: Key("azp"))
        let fixed = Set(ScopeClaims.always)
        var rest: [String: JSONValue] = [:]
        for key in c.allKeys where !fixed.contains(key.stringValue) {
            rest[key.stringValue] = try c.decode(JSONValue.self, forKey: key)
        }
        scopeClaims = rest
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(iss, forKey: Key("iss"))
        try c.encode(sub, forKey: Key("sub"))
        try c.encode(aud, forKey: Key("aud"))
        try c.encode(exp, forKey: Key("exp"))
        try c.encode(iat, forKey: Key("iat"))
        try c.encode(auth_time, forKey: Key("auth_time"))
        try c.encodeIfPresent(nonce, forKey: Key("nonce"))
        try c.encode(amr, forKey: Key("amr"))
        try c.encodeIfPresent(acr, forKey: Key("acr"))
        try c.encode(azp, forKey: Key("azp"))
        let fixed = Set(ScopeClaims.always)
        for (name, value) in scopeClaims.sorted(by: { $0.key < $1.key }) where !fixed.contains(name) {
            try c.encode(value, forKey: Key(name))
        }
    }

    package static func isPasskey(_ method: String) -> Bool {
        method == SessionMethod.passkey.rawValue || method == SessionMethod.passkeyPresence.rawValue
    }

    /// Authentication methods (RFC 8176) for how the session's holder proved who they are, said truthfully: a
    /// passkey is proof of possession of a key, `hwk` when it was not backup-eligible (bound to its device) and
    /// `swk` when it was (a synced passkey whose key is software-held somewhere), or only `pop` when that is not
    /// known (sessions from before it was kept); plus `user` and `mfa` when the authenticator verified the user. A
    /// password is `pwd`, with the second factor's own method (`Factor.amr`: `otp` for TOTP or a recovery code,
    /// `sms`) and `mfa`. `factors` are the ones the server's features declare; a method naming another is claimed
    /// as nothing.
    package static func amr(_ method: String, passkeyBackupEligible: Bool? = nil, factors: [Factor]) -> [String] {
        let key = passkeyBackupEligible.map { $0 ? ["pop", "swk"] : ["pop", "hwk"] } ?? ["pop"]
        return switch SessionMethod(rawValue: method, factors: factors) {
        case .passkey?: key + ["user", "mfa"]
        case .passkeyPresence?: key
        case .password?: ["pwd"]
        case .passwordAnd(let factor)?: ["pwd", factor.amr, "mfa"]
        // A limited session never reaches the identity provider (`SessionLimitation`); were it to, it claims nothing.
        case .emailCode?, .recoveryLink?, nil: []
        }
    }

    /// `phr` (phishing-resistant, OpenID EAP ACR values) for a passkey sign-in; nothing is claimed otherwise.
    package static func acr(_ method: String) -> String? { isPasskey(method) ? "phr" : nil }
}

package struct AccessTokenClaims: TokenClaims {
    package let iss: String
    package let sub: String
    package let aud: String
    package let exp: Int
    package let iat: Int
    package let jti: String
    package let client_id: String
    package let scope: String
    package let auth_time: Int
    /// The grant the token belongs to: revoking the grant ends the token at UserInfo and introspection.
    package let gid: String
}

/// What the token endpoint answers (RFC 6749 §5.1, OpenID Connect Core 1.0 §3.1.3.3).
package struct TokenResponse: Encodable, Sendable {
    package let access_token: String
    package let token_type = "Bearer"
    package let expires_in: Int
    package let id_token: String
    package let refresh_token: String?
    package let scope: String
}

/// Signs the tokens of a grant.
package struct TokenIssuer: Sendable {
    package let keyring: SigningKeyring
    package let issuer: String
    package let store: any IdentityProviderStorage
    package let clock: ServerClock
    package let subjects: SubjectIdentifiers
    /// The verified addresses the `email` scope gives.
    package let emails: any VerifiedEmailLookup
    /// The second factors the server's features declare, for the `amr` of a password sign-in.
    package let factors: [Factor]
    /// The groups and custom claims the `groups` scope gives.
    package let groups: any GroupClaimsLookup
    /// The languages people saved, for the `profile` scope's `locale`.
    package let languages: any LanguagePreferences

    package init(
        keyring: SigningKeyring, issuer: String, store: any IdentityProviderStorage, clock: ServerClock,
        subjects: SubjectIdentifiers, factors: [Factor], emails: any VerifiedEmailLookup = NoVerifiedEmail(),
        groups: any GroupClaimsLookup = NoGroupClaims(), languages: any LanguagePreferences = NoLanguagePreferences()
    ) {
        self.languages = languages
        self.factors = factors
        self.keyring = keyring
        self.issuer = issuer
        self.store = store
        self.clock = clock
        self.subjects = subjects
        self.emails = emails
        self.groups = groups
    }

    /// The scope claims of a grant's scope for an account (UserInfo's body beside `sub`; the ID token's, for
    /// clients that asked).
    package func scopeClaims(scope: String, user: User) async throws -> [String: JSONValue] {
        ScopeClaims.claims(
            scope: scope,
            source: try await ScopeClaims.source(
                scope: scope, user: user, emails: emails, groups: groups, store: store, languages: languages)
        )
    }

    package static let accessTokenLifetime = 600
    package static let idTokenLifetime = 600
    package static let codeLifetime: TimeInterval = 60
    package static let refreshIdleLifetime: TimeInterval = 14 * 24 * 3600
    package static let grantLifetime: TimeInterval = 30 * 24 * 3600

    /// Tokens for a grant; `rotatedRefreshToken` is the successor the store already holds after a refresh, else
    /// a refresh token is made when the grant has `offline_access`.
    package func tokens(for grant: OAuthGrant, client: OAuthClient, user: User, rotatedRefreshToken: String? = nil)
        async throws
        -> TokenResponse
    {
        let now = clock.now()
        let iat = Int(now.timeIntervalSince1970)
        let given = client.idTokenClaims ? try await scopeClaims(scope: grant.scope, user: user) : [:]
        let subject = subjects.subject(userID: user.id, client: client)
        let idClaims = IDTokenClaims(
            iss: issuer, sub: subject, aud: client.id, exp: iat + Self.idTokenLifetime, iat: iat,
            auth_time: Int(grant.authTime.timeIntervalSince1970), nonce: grant.nonce,
            amr: IDTokenClaims.amr(grant.method, passkeyBackupEligible: grant.passkeyBackupEligible, factors: factors),
            acr: IDTokenClaims.acr(grant.method), azp: client.id, scopeClaims: given
        )
        let idAlgorithm = IDTokenAlgorithm(rawValue: client.idTokenAlgorithm) ?? .es256
        let accessClaims = AccessTokenClaims(
            iss: issuer, sub: subject, aud: issuer, exp: iat + Self.accessTokenLifetime, iat: iat,
            jti: Base64URL.encode(Secrets.random(16)),
            client_id: client.id, scope: grant.scope, auth_time: Int(grant.authTime.timeIntervalSince1970),
            gid: grant.id
        )
        var refresh = rotatedRefreshToken
        if refresh == nil, grant.scope.split(separator: " ").contains("offline_access") {
            let token = "sesame_rt_" + Base64URL.encode(Secrets.random(32))
            try await store.addRefreshToken(
                hash: Secrets.sha256(token), grantID: grant.id,
                idleExpiresAt: min(now.addingTimeInterval(Self.refreshIdleLifetime), grant.expiresAt)
            )
            refresh = token
        }
        return TokenResponse(
            access_token: try await keyring.sign(accessClaims, .es256, type: "at+jwt"),
            expires_in: Self.accessTokenLifetime, id_token: try await keyring.sign(idClaims, idAlgorithm),
            refresh_token: refresh, scope: grant.scope
        )
    }

    /// A new refresh token in place of a spent one (the caller stores it with `rotateRefreshToken`).
    package static func newRefreshToken() -> String { "sesame_rt_" + Base64URL.encode(Secrets.random(32)) }

    /// Who an ID token used as a hint (`id_token_hint` at authorization and logout) names, if Sesame signed it with
    /// one of its published keys for itself as issuer. Its expiry is not checked: a hint may be old.
    package struct Hint: TokenClaims {
        package let iss: String
        package let sub: String
        package let aud: String
    }

    package func idTokenHint(_ token: String) async throws -> Hint? {
        guard let (type, hint) = try? await keyring.verify(token, as: Hint.self),
            type != "at+jwt" && type != "logout+jwt", hint.iss == issuer
        else { return nil }
        return hint
    }

    /// The claims of one of the provider's access tokens, if it is genuine, unexpired and its grant is live.
    package func validAccessToken(_ token: String) async throws -> (AccessTokenClaims, OAuthGrant)? {
        guard let (type, claims) = try? await keyring.verify(token, as: AccessTokenClaims.self), type == "at+jwt",
            claims.iss == issuer,
            claims.exp > Int(clock.now().timeIntervalSince1970),
            let grant = try await store.grant(id: claims.gid), grant.revokedAt == nil,
            grant.clientID == claims.client_id, let client = try await store.client(id: grant.clientID),
            subjects.subject(userID: grant.userID, client: client) == claims.sub,
            try await sessionLive(of: grant)
        else { return nil }
        return (claims, grant)
    }

    /// The session a grant is tied to: a grant without `offline_access` lives only as long as the session that
    /// made it (signing out of that session, or "Sign out everywhere", ends its tokens); one with `offline_access`
    /// is the person's choice to stay connected while away and is tied to none (it ends when they sign out
    /// everywhere, change the password, remove the app, or the account is disabled).
    package static func tiedSession(scope: String, _ session: SessionRecord) -> String? {
        scope.split(separator: " ").contains("offline_access") ? nil : session.id
    }

    /// Whether the session a grant is tied to (if any) is still signed in.
    package func sessionLive(of grant: OAuthGrant) async throws -> Bool {
        guard let sessionID = grant.sessionID else { return true }
        return try await store.sessionExists(id: sessionID, now: clock.now())
    }

    /// The `sub` the client of `clientID` knows the account by (the account id when the client is gone).
    package func subject(userID: String, clientID: String) async throws -> String {
        guard let client = try await store.client(id: clientID) else { return userID }
        return subjects.subject(userID: userID, client: client)
    }
}
