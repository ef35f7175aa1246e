import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameServer
@testable import SesameCore
@testable import SesameIdentityProvider

/// The OpenID Connect provider over HTTP on both engines: the code flow with PKCE from a signed-in session, the
/// consent page, tokens checked against the JWKS, refresh rotation and reuse detection, code replay, revocation,
/// introspection, and the rules that refuse (unknown client or redirect URI never redirects, PKCE required, `plain`
/// refused, wrong secret, another client's code).
@Suite struct IdentityProviderTests {
    static let redirect = "https://app.example/callback"

    struct Registered {
        let client: OAuthClient
        let secret: String?
    }

    static func register(
        _ server: TestServer, firstParty: Bool = true, isPublic: Bool = false, alg: IDTokenAlgorithm = .es256
    ) async throws -> Registered {
        try await server.withStore { store in
            var registration = ClientRegistry.Registration(
                name: "Example App", redirectURIs: [redirect, "http://127.0.0.1/native"])
            registration.firstParty = firstParty
            registration.isPublic = isPublic
            registration.idTokenAlgorithm = alg
            registration.idTokenClaims = true
            let (client, secret) = try await ClientRegistry(store: store).add(registration, now: Date())
            return Registered(client: client, secret: secret)
        }
    }

    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  // RFC 7636 Appendix B
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    static func authorizePath(_ clientID: String, redirect: String = redirect, extra: [(String, String)] = []) -> String
    {
        "/oauth/authorize?"
            + FormParameters.encode(
                [
                    ("client_id", clientID), ("redirect_uri", redirect), ("response_type", "code"),
                    ("scope", "openid profile offline_access"),
                    ("state", "st-1"), ("nonce", "n-1"), ("code_challenge", challenge),
                    ("code_challenge_method", "S256"),
                ] + extra
            )
    }

    static func query(_ location: String?) -> [String: String] {
        guard let location, let components = URLComponents(string: location) else { return [:] }
        return Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { first, _ in first }
    }

    static func form(_ pairs: [(String, String)]) -> ByteBuffer { ByteBuffer(string: FormParameters.encode(pairs)) }

    static let formType: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    static func basic(_ id: String, _ secret: String) -> HTTPFields {
        var fields = formType
        fields[.authorization] = "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
        return fields
    }

    /// Signs in with a password and follows the authorization request to the code.
    static func code(
        _ client: some TestClientProtocol, _ session: SignedIn, clientID: String, extra: [(String, String)] = []
    ) async throws -> String {
        let response = try await client.execute(
            uri: authorizePath(clientID, extra: extra), method: .get, headers: [.cookie: session.cookie], body: nil)
        #expect(response.status == .seeOther)
        let location = try #require(response.headers[.location])
        #expect(location.hasPrefix(redirect + "?"))
        let parameters = query(location)
        #expect(parameters["state"] == "st-1")
        #expect(parameters["iss"] == "http://localhost:8080")
        return try #require(parameters["code"])
    }

    static func exchange(
        _ client: some TestClientProtocol, _ registered: Registered, code: String, verifier: String = verifier
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/oauth/token", method: .post, headers: basic(registered.client.id, registered.secret ?? ""),
            body: form([
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
                ("code_verifier", verifier),
            ])
        )
    }

    /// Verifies a JWS against the served JWKS (ES256 or RS256), independently of the provider's own reader.
    static func verifiedClaims(_ token: String, jwks: [[String: Any]]) throws -> [String: Any] {
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let header = try #require(
            try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[0]))) as? [String: Any])
        let kid = try #require(header["kid"] as? String)
        let jwk = try #require(jwks.first { $0["kid"] as? String == kid })
        let input = Data((parts[0] + "." + parts[1]).utf8)
        let signature = try Base64URL.decode(parts[2])
        switch header["alg"] as? String {
        case "ES256":
            let x = try Base64URL.decode(jwk["x"] as? String ?? ""), y = try Base64URL.decode(jwk["y"] as? String ?? "")
            let key = try P256.Signing.PublicKey(rawRepresentation: x + y)
            #expect(key.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: input))
        case "RS256":
            #expect(jwk["kty"] as? String == "RSA")
            #expect(signature.count == 256)
        default:
            Issue.record("unexpected alg \(header["alg"] ?? "none")")
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[1]))) as? [String: Any])
    }

    @Test(arguments: TestDatabase.all)
    func codeFlowWithPKCEIssuesVerifiableTokens(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        try await server.app().test(.router) { client in
            let discovery = try await client.json("/.well-known/openid-configuration").object
            #expect(discovery["issuer"] as? String == "http://localhost:8080")
            #expect((discovery["code_challenge_methods_supported"] as? [String]) == ["S256"])
            #expect((discovery["id_token_signing_alg_values_supported"] as? [String])?.contains("RS256") == true)
            let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
            #expect(Set(jwks.compactMap { $0["alg"] as? String }) == ["ES256", "RS256"])
            #expect(jwks.allSatisfy { $0["d"] == nil && $0["p"] == nil })

            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let code = try await Self.code(client, session, clientID: registered.client.id)
            let response = try await Self.exchange(client, registered, code: code)
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.headers[.cacheControl] == "no-store")
            let tokens = response.object
            let id = try Self.verifiedClaims(try #require(tokens["id_token"] as? String), jwks: jwks)
            #expect(id["iss"] as? String == "http://localhost:8080")
            #expect(id["aud"] as? String == registered.client.id)
            #expect(id["sub"] as? String == user.id)
            #expect(id["nonce"] as? String == "n-1")
            #expect(id["amr"] as? [String] == ["pwd"])
            #expect(id["acr"] == nil)
            #expect(id["preferred_username"] as? String == "ada")
            let access = try #require(tokens["access_token"] as? String)
            _ = try Self.verifiedClaims(access, jwks: jwks)

            for (method, headers, body) in [
                (
                    HTTPRequest.Method.get, [HTTPField.Name.authorization: "Bearer \(access)"] as HTTPFields,
                    nil as ByteBuffer?
                ),
                (.post, [.authorization: "Bearer \(access)"], nil),
                (.post, Self.formType, Self.form([("access_token", access)])),
            ] {
                let info = try await client.execute(
                    uri: "/oauth/userinfo", method: method, headers: headers, body: body)
                #expect(info.status == .ok)
                #expect(info.object["sub"] as? String == user.id)
                #expect(info.object["name"] as? String == "Ada")
            }

            // The code is spent: a second exchange fails and revokes what the first issued.
            let replay = try await Self.exchange(client, registered, code: code)
            #expect(replay.status == .badRequest)
            #expect(replay.errorCode == "invalid_grant")
            let after = try await client.execute(
                uri: "/oauth/userinfo", method: .get, headers: [.authorization: "Bearer \(access)"], body: nil)
            #expect(after.status == .unauthorized)
            #expect(after.headers[.wwwAuthenticate]?.contains("invalid_token") == true)
            let refresh = try await client.execute(
                uri: "/oauth/token", method: .post, headers: Self.basic(registered.client.id, registered.secret ?? ""),
                body: Self.form([
                    ("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"] as? String ?? ""),
                ])
            )
            #expect(refresh.errorCode == "invalid_grant")
        }
        let kinds = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 50) }.map(\.kind)
        #expect(kinds.contains(AuditKind.codeReplayed.rawValue))
    }

    @Test(arguments: TestDatabase.all)
    func refreshTokensRotateAndReuseRevokesTheFamily(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let first = try await Self.exchange(
                client, registered, code: try await Self.code(client, session, clientID: registered.client.id)
            ).object
            let r1 = try #require(first["refresh_token"] as? String)
            func refresh(_ token: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/oauth/token", method: .post, headers: Self.formType,
                    body: Self.form([
                        ("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", registered.client.id),
                        ("client_secret", registered.secret ?? ""),
                    ])
                )
            }
            let second = try await refresh(r1)
            #expect(second.status == .ok)
            let r2 = try #require(second.object["refresh_token"] as? String)
            #expect(r2 != r1)
            // Introspection sees the new one live and the spent one not.
            func active(_ token: String) async throws -> Bool {
                let r = try await client.execute(
                    uri: "/oauth/introspect", method: .post,
                    headers: Self.basic(registered.client.id, registered.secret ?? ""),
                    body: Self.form([("token", token)])
                )
                return r.object["active"] as? Bool ?? false
            }
            #expect(try await active(r2))
            #expect(try await !active(r1))
            #expect(try await active(second.object["access_token"] as? String ?? ""))
            // Reusing r1 revokes the whole family: r2 and its access token stop working.
            #expect(try await refresh(r1).errorCode == "invalid_grant")
            #expect(try await refresh(r2).errorCode == "invalid_grant")
            #expect(try await !active(second.object["access_token"] as? String ?? ""))
            // A tampered or unsigned token is never active.
            let access = first["access_token"] as? String ?? ""
            let parts = access.split(separator: ".")
            let unsigned = Base64URL.encode(Array(#"{"alg":"none","typ":"at+jwt"}"#.utf8)) + "." + parts[1] + "."
            #expect(try await !active(unsigned))
        }
    }

    @Test(arguments: TestDatabase.all)
    func unknownClientsAndRedirectURIsNeverRedirect(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            for path in [
                Self.authorizePath("sesame_nobody"),
                // A NUL in the client id (PostgreSQL refuses one in a bind): still no client, not a server error.
                Self.authorizePath("sesame\u{0}nobody"),
                Self.authorizePath(registered.client.id + "\u{0}"),
                Self.authorizePath(registered.client.id, redirect: "https://evil.example/callback"),
                Self.authorizePath(registered.client.id, redirect: Self.redirect + "/../x"),
                Self.authorizePath(registered.client.id, redirect: "https://app.example/callback?x=1"),
            ] {
                let r = try await client.execute(uri: path, method: .get, headers: [.cookie: session.cookie], body: nil)
                #expect(r.status == .badRequest)
                #expect(r.headers[.location] == nil)
                #expect(r.headers[.contentType]?.hasPrefix("text/html") == true)
            }
            // A loopback redirect URI matches on any port (RFC 8252 §7.3).
            let native = try await client.execute(
                uri: Self.authorizePath(registered.client.id, redirect: "http://127.0.0.1:53117/native"), method: .get,
                headers: [.cookie: session.cookie], body: nil
            )
            #expect(native.headers[.location]?.hasPrefix("http://127.0.0.1:53117/native?code=") == true)
        }
    }

    @Test(arguments: TestDatabase.all)
    func requestErrorsGoBackToTheClient(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let id = registered.client.id
            let cases: [(String, String)] = [
                (
                    "/oauth/authorize?"
                        + FormParameters.encode([
                            ("client_id", id), ("redirect_uri", Self.redirect), ("scope", "openid"), ("state", "st-1"),
                            ("code_challenge", Self.challenge), ("code_challenge_method", "S256"),
                        ]), "invalid_request"
                ),
                (
                    Self.authorizePath(id, extra: [("response_type", "token")]).replacingOccurrences(
                        of: "response_type=code&", with: ""), "unsupported_response_type"
                ),
                (
                    "/oauth/authorize?"
                        + FormParameters.encode([
                            ("client_id", id), ("redirect_uri", Self.redirect), ("response_type", "code"),
                            ("scope", "openid"), ("state", "st-1"),
                        ]), "invalid_request"
                ),
                (
                    "/oauth/authorize?"
                        + FormParameters.encode([
                            ("client_id", id), ("redirect_uri", Self.redirect), ("response_type", "code"),
                            ("scope", "openid"), ("state", "st-1"), ("code_challenge", Self.verifier),
                            ("code_challenge_method", "plain"),
                        ]), "invalid_request"
                ),
                (
                    "/oauth/authorize?"
                        + FormParameters.encode([
                            ("client_id", id), ("redirect_uri", Self.redirect), ("response_type", "code"),
                            ("scope", "profile"), ("state", "st-1"), ("code_challenge", Self.challenge),
                            ("code_challenge_method", "S256"),
                        ]), "invalid_scope"
                ),
                (Self.authorizePath(id, extra: [("request", "eyJhbGciOiJub25lIn0.e30.")]), "request_not_supported"),
                (
                    Self.authorizePath(id, extra: [("request_uri", "https://app.example/r")]),
                    "request_uri_not_supported"
                ),
            ]
            for (path, code) in cases {
                let r = try await client.execute(uri: path, method: .get, headers: [.cookie: session.cookie], body: nil)
                #expect(r.status == .seeOther, "\(code)")
                let q = Self.query(r.headers[.location])
                #expect(q["error"] == code, "\(path)")
                #expect(q["state"] == "st-1")
                #expect(q["iss"] == "http://localhost:8080")
                #expect(q["code"] == nil)
            }
            // prompt=none without a session: login_required, no page.
            let signedOut = try await client.execute(
                uri: Self.authorizePath(id, extra: [("prompt", "none")]), method: .get, headers: [:], body: nil)
            #expect(Self.query(signedOut.headers[.location])["error"] == "login_required")
            // Without a session the person is sent to Sesame's sign-in page, to come back to the request.
            let toSignIn = try await client.execute(uri: Self.authorizePath(id), method: .get, headers: [:], body: nil)
            let location = try #require(toSignIn.headers[.location])
            #expect(location.hasPrefix("/signin?return=%2Foauth%2Fauthorize%3F"))
            // prompt=login with a session also asks to sign in again, and the return link no longer says login.
            let again = try await client.execute(
                uri: Self.authorizePath(id, extra: [("prompt", "login")]), method: .get,
                headers: [.cookie: session.cookie], body: nil)
            let back = try #require(Self.query(again.headers[.location])["return"])
            #expect(!back.contains("prompt="))
            #expect(back.contains("sesame_signed_in_after="))
            // max_age=0 after a sign-in a moment ago: sign in again.
            server.clock.advance(5)
            let stale = try await client.execute(
                uri: Self.authorizePath(id, extra: [("max_age", "1")]), method: .get,
                headers: [.cookie: session.cookie], body: nil)
            #expect(stale.headers[.location]?.hasPrefix("/signin?") == true)
            // acr_values=phr after a password sign-in: a passkey is needed, never the password session.
            let phr = try await client.execute(
                uri: Self.authorizePath(id, extra: [("acr_values", "phr")]), method: .get,
                headers: [.cookie: session.cookie], body: nil)
            #expect(phr.headers[.location]?.contains("passkey=required") == true)
        }
    }

    @Test(arguments: TestDatabase.all)
    func tokenEndpointRefusesWhatItMust(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        let other = try await Self.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            // Wrong secret.
            let code1 = try await Self.code(client, session, clientID: registered.client.id)
            let wrong = try await Self.exchange(
                client, Registered(client: registered.client, secret: "sesame_cs_wrong"), code: code1)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.errorCode == "invalid_client")
            #expect(wrong.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            // Wrong verifier: the code is spent and gives nothing.
            let code2 = try await Self.code(client, session, clientID: registered.client.id)
            #expect(
                try await Self.exchange(client, registered, code: code2, verifier: String(repeating: "a", count: 43))
                    .errorCode == "invalid_grant")
            #expect(try await Self.exchange(client, registered, code: code2).errorCode == "invalid_grant")
            // Another client's code.
            let code3 = try await Self.code(client, session, clientID: registered.client.id)
            #expect(try await Self.exchange(client, other, code: code3).errorCode == "invalid_grant")
            // An expired code.
            let code4 = try await Self.code(client, session, clientID: registered.client.id)
            server.clock.advance(TokenIssuer.codeLifetime + 1)
            #expect(try await Self.exchange(client, registered, code: code4).errorCode == "invalid_grant")
            // Unknown grant type, JSON body.
            let implicit = try await client.execute(
                uri: "/oauth/token", method: .post, headers: Self.basic(registered.client.id, registered.secret ?? ""),
                body: Self.form([("grant_type", "password")])
            )
            #expect(implicit.errorCode == "unsupported_grant_type")
            let json = try await client.json("/oauth/token", .post, body: #"{"grant_type":"authorization_code"}"#)
            #expect(json.errorCode == "invalid_request")
        }
    }

    @Test(arguments: TestDatabase.all)
    func consentIsAskedOnceAndNeedsTheSessionsCSRFToken(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server, firstParty: false, alg: .rs256)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let page = try await client.execute(
                uri: Self.authorizePath(registered.client.id), method: .get, headers: [.cookie: session.cookie],
                body: nil)
            #expect(page.status == .ok)
            #expect(page.text.contains("Allow Example App to sign you in?"))
            #expect(page.headers[.contentSecurityPolicy]?.contains("form-action 'self' https://app.example") == true)
            let request = try #require(page.text.firstMatch(of: #/name="request" value="([^"]*)"/#)).1
            let csrf = try #require(page.text.firstMatch(of: #/name="csrf_token" value="([^"]*)"/#)).1
            let unescaped = String(request).replacingOccurrences(of: "&amp;", with: "&")
            func answer(csrf: String, _ decision: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/oauth/consent", method: .post,
                    headers: [.cookie: session.cookie, .contentType: "application/x-www-form-urlencoded"],
                    body: Self.form([("request", unescaped), ("csrf_token", csrf), ("decision", decision)])
                )
            }
            // Without the page's token nothing is granted.
            let forged = try await answer(csrf: "forged", "allow")
            #expect(forged.status == .badRequest)
            #expect(forged.headers[.location] == nil)
            let denied = try await answer(csrf: String(csrf), "deny")
            #expect(Self.query(denied.headers[.location])["error"] == "access_denied")
            let allowed = try await answer(csrf: String(csrf), "allow")
            let code = try #require(Self.query(allowed.headers[.location])["code"])
            let tokens = try await Self.exchange(client, registered, code: code).object
            let idToken = try #require(tokens["id_token"] as? String)
            let header =
                try JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(idToken.split(separator: ".")[0]))))
                as? [String: Any]
            #expect(header?["alg"] as? String == "RS256")
            // Remembered: the next request goes straight back with a code; prompt=consent asks again.
            _ = try await Self.code(client, session, clientID: registered.client.id)
            let ask = try await client.execute(
                uri: Self.authorizePath(registered.client.id, extra: [("prompt", "consent")]), method: .get,
                headers: [.cookie: session.cookie], body: nil)
            #expect(ask.status == .ok)
            let none = try await client.execute(
                uri: Self.authorizePath(registered.client.id, extra: [("prompt", "none"), ("scope", "openid")])
                    .replacingOccurrences(of: "scope=openid%20profile%20offline_access&", with: ""),
                method: .get, headers: [.cookie: session.cookie], body: nil
            )
            #expect(Self.query(none.headers[.location])["code"] != nil)
        }
    }

    @Test(arguments: TestDatabase.all)
    func revocationEndsTheGrant(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let tokens = try await Self.exchange(
                client, registered, code: try await Self.code(client, session, clientID: registered.client.id)
            ).object
            let revoke = try await client.execute(
                uri: "/oauth/revoke", method: .post, headers: Self.basic(registered.client.id, registered.secret ?? ""),
                body: Self.form([("token", tokens["refresh_token"] as? String ?? "")])
            )
            #expect(revoke.status == .ok)
            let info = try await client.execute(
                uri: "/oauth/userinfo", method: .get,
                headers: [.authorization: "Bearer \(tokens["access_token"] as? String ?? "")"], body: nil)
            #expect(info.status == .unauthorized)
        }
    }

    /// A passkey sign-in's ID token says `hwk` for a device-bound passkey and `swk` for a synced one (its BE flag),
    /// through sign-in, the grant and the token; a password re-authentication in the same session then says `pwd`.
    @Test(arguments: TestDatabase.all)
    func passkeySignInsSayWhetherTheKeyWasDeviceBoundOrSynced(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let registered = try await Self.register(server)
        let journey = PasskeyJourneyTests()
        try await server.app().test(.router) { (client) async throws -> Void in
            let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
            for (name, synced) in [("bound", false), ("synced", true)] {
                let authenticator = VirtualAuthenticator(
                    configuration: .init(backupEligible: synced, backedUp: synced))
                let signedUp = try await journey.signUp(client, authenticator, name)
                #expect(signedUp.status == .created)
                // Sign-up, then a fresh passkey sign-in: both sessions carry the flag.
                for response in [signedUp, try await journey.signIn(client, authenticator, username: nil)] {
                    let session = SignedIn(
                        cookie: response.cookie(named: "sesame_session") ?? "", csrf: "", token: "")
                    let tokens = try await Self.exchange(
                        client, registered, code: try await Self.code(client, session, clientID: registered.client.id)
                    ).object
                    let id = try Self.verifiedClaims(try #require(tokens["id_token"] as? String), jwks: jwks)
                    #expect(id["amr"] as? [String] == ["pop", synced ? "swk" : "hwk", "user", "mfa"], "\(name)")
                    #expect(id["acr"] as? String == "phr")
                }
            }
        }
    }

    @Test func amrAndAcrSayHowThePersonSignedIn() {
        let factors = Vocabulary.server.factors
        #expect(IDTokenClaims.amr("password+recovery", factors: factors) == ["pwd", "otp", "mfa"])
        #expect(IDTokenClaims.amr("passkey", factors: factors) == ["pop", "user", "mfa"])
        #expect(
            IDTokenClaims.amr("passkey", passkeyBackupEligible: false, factors: factors) == [
                "pop", "hwk", "user", "mfa",
            ])
        #expect(
            IDTokenClaims.amr("passkey", passkeyBackupEligible: true, factors: factors) == [
                "pop", "swk", "user", "mfa",
            ])
        #expect(IDTokenClaims.amr("passkey-up", passkeyBackupEligible: false, factors: factors) == ["pop", "hwk"])
        #expect(IDTokenClaims.amr("passkey-up", factors: factors) == ["pop"])
        #expect(IDTokenClaims.amr("password", factors: factors) == ["pwd"])
        #expect(IDTokenClaims.amr("password+sms", factors: factors) == ["pwd", "sms", "mfa"])
        #expect(IDTokenClaims.amr("password+totp", factors: factors) == ["pwd", "otp", "mfa"])
        #expect(IDTokenClaims.acr("passkey") == "phr")
        #expect(IDTokenClaims.acr("password+totp") == nil)
    }

    struct ForgeryClaims: TokenClaims { var sub = "x" }

    @Test func theProvidersTokenReaderRefusesForgeries() async throws {
        let key = try SigningKey.generate(.es256, now: Date())
        let other = try SigningKey.generate(.es256, now: Date())
        let keys = await TokenKeys([key])
        let token = try await keys.sign(ForgeryClaims(), kid: key.kid)
        await #expect(throws: Never.self) { try await keys.verify(token, as: ForgeryClaims.self) }
        await expectExactly(IdentityProviderError.tokenRefused()) {
            try await TokenKeys([other]).verify(token, as: ForgeryClaims.self)
        }
        let parts = token.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + Base64URL.encode(Array(#"{"sub":"y"}"#.utf8)) + "." + parts[2]
        await expectExactly(IdentityProviderError.tokenRefused()) {
            try await keys.verify(tampered, as: ForgeryClaims.self)
        }
        let none = Base64URL.encode(Array(#"{"alg":"none","kid":"\#(key.kid)"}"#.utf8)) + "." + parts[1] + "."
        await expectExactly(IdentityProviderError.tokenRefused()) {
            try await keys.verify(none, as: ForgeryClaims.self)
        }
        let rsa = try SigningKey.generate(.rs256, now: Date())
        let swapped =
            Base64URL.encode(Array(#"{"alg":"RS256","kid":"\#(key.kid)"}"#.utf8)) + "." + parts[1] + "." + parts[2]
        await expectExactly(IdentityProviderError.tokenRefused()) {
            try await TokenKeys([key, rsa]).verify(swapped, as: ForgeryClaims.self)
        }
        let rsaKeys = await TokenKeys([rsa])
        await #expect(throws: Never.self) {
            try await rsaKeys.verify(
                try await rsaKeys.sign(ForgeryClaims(sub: "a"), kid: rsa.kid), as: ForgeryClaims.self)
        }
    }

    /// Peers read the header and claims as the provider always wrote them: sorted members, slashes unescaped.
    @Test func theProvidersTokensKeepTheirBytes() async throws {
        struct Claims: TokenClaims { var iss = "https://id.example/" }
        for algorithm in IDTokenAlgorithm.allCases {
            let key = try SigningKey.generate(algorithm, now: Date())
            let token = try await TokenKeys([key]).sign(Claims(), kid: key.kid, type: "logout+jwt")
            let parts = token.split(separator: ".").map(String.init)
            #expect(
                String(decoding: try Base64URL.decode(parts[0]), as: UTF8.self)
                    == #"{"alg":"\#(algorithm.rawValue)","kid":"\#(key.kid)","typ":"logout+jwt"}"#)
            #expect(
                String(decoding: try Base64URL.decode(parts[1]), as: UTF8.self) == #"{"iss":"https://id.example/"}"#)
            let jwk = try JSONSerialization.jsonObject(with: JSONEncoder().encode(key.publicJWK)) as? [String: String]
            #expect(jwk?["kid"] == key.kid && jwk?["alg"] == algorithm.rawValue && jwk?["use"] == "sig")
            #expect(jwk?["d"] == nil && jwk?["p"] == nil)
        }
    }
}
