import Foundation
import WebAuthn
import SesameCore

/// The claims the identity provider gives, in one place: those every ID token carries, and those each scope adds from
/// the account. The ID token (`IDTokenClaims`), UserInfo and discovery's `claims_supported` all read this list.
package enum ScopeClaims {
    /// What a scope's claims are read from: the account, and its verified email address (none when addresses are
    /// off or the account has no verified one); `keepsAddresses`: whether addresses are on (the `email` setting).
    package struct Source: Sendable {
        package let user: User
        package let verifiedEmail: String?
        package let keepsAddresses: Bool

        package init(user: User, verifiedEmail: String? = nil, keepsAddresses: Bool? = nil) {
            self.user = user
            self.verifiedEmail = verifiedEmail
            self.keepsAddresses = keepsAddresses ?? (verifiedEmail != nil)
        }
    }

    /// A claim's value: a string, or a boolean (`email_verified`).
    package enum Value: Sendable, Equatable {
        case string(String)
        case bool(Bool)

        package var string: String? { if case .string(let text) = self { text } else { nil } }
        package var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
        /// The value for a JSON body.
        package var json: any Sendable {
            switch self {
            case .string(let text): text
            case .bool(let flag): flag
            }
        }
    }

    /// Every ID token's claims (OpenID Connect Core 1.0 §2).
    package static let always = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "amr", "acr", "azp"]
    /// The claims a scope adds, each with its value from the account, or nil when the account has none (§5.4:
    /// `profile`, `email`). `email` gives only a verified address, so `email_verified` is true whenever it is given;
    /// while addresses are on and the account has none verified yet (`email` `required`, before the code is typed),
    /// `email_verified` is false and `email` absent, so an app can tell "not yet" from "not kept".
    package static let byScope: [(scope: String, claims: [(name: String, value: @Sendable (Source) -> Value?)])] = [
        (
            "profile",
            [("preferred_username", { .string($0.user.username) }), ("name", { .string($0.user.displayName) })]
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
    ]
    /// What discovery lists as `claims_supported`.
    package static var supported: [String] { always + byScope.flatMap { $0.claims.map(\.name) } }

    /// Whether a granted scope (space-separated) gives the email claims, so the address must be read.
    package static func needsEmail(scope: String) -> Bool {
        scope.split(separator: " ").contains("email")
    }

    /// The scope-given claims for a granted scope (space-separated) and an account.
    package static func claims(scope: String, source: Source) -> [String: Value] {
        let granted = Set(scope.split(separator: " ").map(String.init))
        var claims: [String: Value] = [:]
        for (name, given) in byScope where granted.contains(name) {
            for claim in given { claims[claim.name] = claim.value(source) }
        }
        return claims
    }

    /// The source for a granted scope: the verified address is read only when the scope gives it.
    package static func source(scope: String, user: User, emails: any VerifiedEmailLookup) async throws -> Source {
        let needed = needsEmail(scope: scope)
        return Source(
            user: user, verifiedEmail: needed ? try await emails.verifiedEmail(userID: user.id) : nil,
            keepsAddresses: needed && emails.keepsAddresses)
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

/// The claims of ID tokens (OpenID Connect Core 1.0 §2) and of access tokens (RFC 9068 §2.2).
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
    package let preferred_username: String?
    package let name: String?
    package let email: String?
    package let email_verified: Bool?

    package static func isPasskey(_ method: String) -> Bool {
        method == SessionMethod.passkey.rawValue || method == SessionMethod.passkeyPresence.rawValue
    }

    /// Authentication methods (RFC 8176) for how the session's holder proved who they are, said truthfully: a
    /// passkey is proof of possession of a key, `hwk` when it was not backup-eligible (bound to its device) and
    /// `swk` when it was (a synced passkey whose key is software-held somewhere), or only `pop` when that is not
    /// known (sessions from before it was kept); plus `user` and `mfa` when the authenticator verified the user. A
    /// password is `pwd`, with `otp` (TOTP or a recovery code) or `sms` and `mfa` for a second factor.
    package static func amr(_ method: String, passkeyBackupEligible: Bool? = nil) -> [String] {
        let key = passkeyBackupEligible.map { $0 ? ["pop", "swk"] : ["pop", "hwk"] } ?? ["pop"]
        return switch SessionMethod(rawValue: method) {
        case .passkey?: key + ["user", "mfa"]
        case .passkeyPresence?: key
        case .password?: ["pwd"]
        case .passwordAnd(.totp)?, .passwordAnd(.recovery)?: ["pwd", "otp", "mfa"]
        case .passwordAnd(.sms)?: ["pwd", "sms", "mfa"]
        // A limited session never reaches the identity provider (`SessionLimitation`); were it to, it claims nothing.
        case .emailCode?, nil: []
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

    package init(
        keyring: SigningKeyring, issuer: String, store: any IdentityProviderStorage, clock: ServerClock,
        subjects: SubjectIdentifiers, emails: any VerifiedEmailLookup = NoVerifiedEmail()
    ) {
        self.keyring = keyring
        self.issuer = issuer
        self.store = store
        self.clock = clock
        self.subjects = subjects
        self.emails = emails
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
        let given = ScopeClaims.claims(
            scope: grant.scope, source: try await ScopeClaims.source(scope: grant.scope, user: user, emails: emails))
        let subject = subjects.subject(userID: user.id, client: client)
        let idClaims = IDTokenClaims(
            iss: issuer, sub: subject, aud: client.id, exp: iat + Self.idTokenLifetime, iat: iat,
            auth_time: Int(grant.authTime.timeIntervalSince1970), nonce: grant.nonce,
            amr: IDTokenClaims.amr(grant.method, passkeyBackupEligible: grant.passkeyBackupEligible),
            acr: IDTokenClaims.acr(grant.method), azp: client.id,
            preferred_username: given["preferred_username"]?.string,
            name: given["name"]?.string, email: given["email"]?.string, email_verified: given["email_verified"]?.bool
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
