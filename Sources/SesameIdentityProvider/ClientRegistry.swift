import Foundation
import JWTKit
import Hummingbird
import WebAuthn
import SesameCore
import SesameBytes

/// Registering clients (`sesame clients …`) and recognising them at the endpoints: redirect URI matching and client
/// authentication. Client secrets are 256 random bits shown once; only their SHA-256 is stored, compared in
/// constant time.
package struct ClientRegistry: Sendable {
    package let store: any IdentityProviderStorage
    /// The provider's issuer and clock, which `private_key_jwt` assertions are checked against.
    package var issuer = ""
    package var clock = ServerClock.system

    package init(store: any IdentityProviderStorage, issuer: String = "", clock: ServerClock = .system) {
        self.store = store
        self.issuer = issuer
        self.clock = clock
    }

    package struct Registration: Sendable {
        package var name: String
        package var redirectURIs: [String]
        package var postLogoutRedirectURIs: [String] = []
        package var backchannelLogoutURI: String?
        package var isPublic = false
        package var firstParty = false
        package var idTokenAlgorithm: IDTokenAlgorithm = .es256
        package var pairwiseSubject = false
        /// A JWK set (JSON) for `private_key_jwt`: the client then has no secret.
        package var jwks: String?
        /// The groups whose members may use the client (`GroupSlugs`); nil: anyone.
        package var allowedGroups: [String]?
        /// The scope claims in the ID token too.
        package var idTokenClaims = false
    }

    /// Allowed groups that follow the slug rule, at least one; an `AdminError` names the first that does not.
    package static func checkAllowedGroups(_ groups: [String]?) throws -> [String]? {
        guard let groups else { return nil }
        guard !groups.isEmpty else { throw AdminError(description: "give at least one allowed group") }
        for slug in groups {
            if let problem = GroupSlugs.problem(slug) { throw AdminError(description: problem) }
        }
        var seen = Set<String>()
        return groups.filter { seen.insert($0).inserted }
    }

    /// The redirect URI a request names, if it is registered: exactly, or, for a loopback `http` URI, with any port
    /// (RFC 8252 §7.3: native apps listen on an ephemeral port).
    package static func matches(_ requested: String, client: OAuthClient) -> Bool {
        if client.redirectURIs.contains(requested) { return true }
        guard var asked = URLComponents(string: requested), asked.scheme == "http", ClientRules.isLoopback(asked.host),
            asked.port != nil
        else { return false }
        asked.port = nil
        return client.redirectURIs.contains { registered in
            guard var known = URLComponents(string: registered), known.scheme == "http",
                ClientRules.isLoopback(known.host)
            else {
                return false
            }
            known.port = nil
            return known.string == asked.string
        }
    }

    /// Registers a client; returns it and its secret (nil for a public client), which is never shown again. `audit`
    /// makes the event of the change from the new client's id, written in the same transaction.
    package func add(
        _ registration: Registration, now: Date, audit: (String) -> AuditEvent? = { _ in nil }
    ) async throws -> (OAuthClient, String?) {
        let registration = try Self.checked(registration)
        let secret =
            registration.isPublic || registration.jwks != nil
            ? nil : "sesame_cs_" + Base64URL.encode(Secrets.random(32))
        let client = OAuthClient(
            id: "sesame_" + Base64URL.encode(Secrets.random(12)), name: registration.name,
            secretHash: secret.map { Secrets.sha256($0) },
            redirectURIs: registration.redirectURIs, postLogoutRedirectURIs: registration.postLogoutRedirectURIs,
            backchannelLogoutURI: registration.backchannelLogoutURI, firstParty: registration.firstParty,
            idTokenAlgorithm: registration.idTokenAlgorithm.rawValue, pairwiseSubject: registration.pairwiseSubject,
            jwks: registration.jwks, allowedGroups: registration.allowedGroups,
            idTokenClaims: registration.idTokenClaims, createdAt: now
        )
        try await store.createClient(client, audit: audit(client.id))
        return (client, secret)
    }

    /// The registration rules, for a new client and for a change to one: a name of 1 to 64 characters (trimmed), at
    /// least one redirect URI, every URI one Sesame accepts, a pairwise client's redirect URIs on one host, a JWK
    /// set that parses, allowed groups that follow the slug rule. An `AdminError` says what is wrong.
    package static func checked(_ registration: Registration) throws -> Registration {
        var registration = registration
        let name = registration.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 64 else {
            throw AdminError(description: "give the client a name of 1 to 64 characters")
        }
        guard !registration.redirectURIs.isEmpty else {
            throw AdminError(description: "give at least one redirect URI (--redirect-uri)")
        }
        for uri in registration.redirectURIs + registration.postLogoutRedirectURIs
            + [registration.backchannelLogoutURI].compactMap({ $0 })
        where !ClientRules.registrable(uri) {
            throw AdminError(
                description:
                    "\(uri.prefix(80)) is not a redirect URI Sesame accepts: https, http on a loopback host, or a private-use scheme like com.example.app:/callback, without a fragment"
            )
        }
        if registration.pairwiseSubject, ClientRules.sector(registration.redirectURIs) == nil {
            throw AdminError(
                description:
                    "a pairwise client's redirect URIs must share one host (its sector); register one client per host"
            )
        }
        if let jwks = registration.jwks {
            guard !registration.isPublic else { throw AdminError(description: "a public client has no keys") }
            do { _ = try ClientPublicKey.parse(Array(jwks.utf8)) } catch {
                throw AdminError(description: "the JWK set is refused: \(error)")
            }
        }
        registration.allowedGroups = try Self.checkAllowedGroups(registration.allowedGroups)
        registration.name = name
        return registration
    }

    /// A new secret for a confidential client; the old one stops working at once. `audit` is written in the same
    /// transaction.
    package func rotateSecret(id: String, audit: AuditEvent? = nil) async throws -> String {
        let secret = "sesame_cs_" + Base64URL.encode(Secrets.random(32))
        guard try await store.setClientSecret(id: id, secretHash: Secrets.sha256(secret), audit: audit) else {
            throw AdminError(description: "no confidential client \(id.prefix(64))")
        }
        return secret
    }

    /// The client a token-endpoint request authenticates as: HTTP Basic (`client_secret_basic`, RFC 6749 §2.3.1:
    /// both parts form-urlencoded), `client_secret_post`, `private_key_jwt` (a client assertion, RFC 7523 §2.2 and
    /// OpenID Connect Core §9), or only `client_id` for a public client. A client with a secret must prove it, a
    /// client with keys must sign an assertion; giving two methods at once is refused.
    package func authenticate(_ request: Request, _ form: FormParameters) async throws -> OAuthClient {
        var basic: (id: String, secret: String)?
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "basic",
                let decoded = Data(base64Encoded: String(parts[1])),
                let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
                let id = FormParameters.decode(text[..<colon]),
                let secret = FormParameters.decode(text[text.index(after: colon)...])
            else { throw OAuthError.invalidClient(basic: true) }
            basic = (id, secret)
        }
        let assertion = form["client_assertion"]
        let methods = [basic != nil, form["client_secret"] != nil, assertion != nil].filter { $0 }.count
        guard methods <= 1 else { throw OAuthError(.invalidRequest, "Use one client authentication method.") }
        if let assertion { return try await authenticate(assertion: assertion, form) }
        guard let id = basic?.id ?? form["client_id"], id.count <= 128 else {
            throw OAuthError.invalidClient(basic: basic != nil)
        }
        if let basic, let formID = form["client_id"], formID != basic.id { throw OAuthError.invalidClient(basic: true) }
        guard let client = try await store.client(id: id), client.jwks == nil else {
            throw OAuthError.invalidClient(basic: basic != nil)
        }
        let secret = basic?.secret ?? form["client_secret"]
        if let expected = client.secretHash {
            guard let secret, ConstantTime.equal(Secrets.sha256(secret), expected) else {
                throw OAuthError.invalidClient(basic: basic != nil)
            }
        } else if secret != nil {
            throw OAuthError.invalidClient(basic: basic != nil)
        }
        return client
    }

    package static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// How far ahead an assertion may expire: it is meant for one request, and its `jti` is kept until then.
    package static let assertionLifetime: TimeInterval = 600

    package struct AssertionClaims: TokenClaims {
        package let iss: String
        package let sub: String
        /// A string or an array of strings (RFC 7519 §4.1.3).
        package let aud: AudienceClaim
        package let exp: Int
        package let jti: String
    }

    /// `private_key_jwt`: the assertion is signed by one of the client's registered keys (its `kid`, its
    /// algorithm; `none` and HMAC never), `iss` and `sub` are the client, `aud` names this provider (its issuer
    /// or one of its endpoints), it has not expired and does not outlive `assertionLifetime`, and its `jti` was
    /// never used before. Every failure is the same `invalid_client`.
    package func authenticate(assertion: String, _ form: FormParameters) async throws -> OAuthClient {
        guard form["client_assertion_type"] == Self.assertionType else {
            throw OAuthError(.invalidRequest, "client_assertion_type must be \(Self.assertionType)")
        }
        guard let unverified = TokenKeys.unverifiedClaims(assertion, as: AssertionClaims.self),
            unverified.iss.count <= 128, form["client_id"].map({ $0 == unverified.iss }) ?? true,
            let client = try await store.client(id: unverified.iss), let jwks = client.jwks,
            let keys = try? ClientPublicKey.parse(Array(jwks.utf8)),
            let (_, claims) = try? await TokenKeys(keys).verify(assertion, as: AssertionClaims.self),
            claims.iss == client.id, claims.sub == client.id
        else { throw OAuthError.invalidClient(basic: false) }
        let endpoints = ["", "/oauth/token", "/oauth/revoke", "/oauth/introspect", "/oauth/device_authorization"]
            .map { issuer + $0 }
        let now = clock.now()
        let expires = Date(timeIntervalSince1970: TimeInterval(claims.exp))
        guard claims.aud.value.contains(where: endpoints.contains), expires > now,
            expires <= now.addingTimeInterval(Self.assertionLifetime), (1...256).contains(claims.jti.count),
            try await store.spendAssertionID(
                hash: Secrets.sha256(client.id + "\u{0}" + claims.jti), expiresAt: expires)
        else { throw OAuthError.invalidClient(basic: false) }
        return client
    }
}
