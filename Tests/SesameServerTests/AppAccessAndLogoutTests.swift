import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesameIdentityProvider
@testable import SesameOperations

/// "Apps with access" (list, remove, nobody else's), RP-initiated logout (no open redirect, a hint or a confirmed
/// form, never a cross-site sign-out) and back-channel logout tokens (sent on sign out everywhere, on removing an
/// app, on RP-initiated logout and when an operator disables the account), over HTTP on both engines.
@Suite struct AppAccessAndLogoutTests {
    typealias IdP = IdentityProviderTests
    static let logoutReturn = "https://app.example/signed-out"
    static let backchannel = "https://app.example/backchannel"

    /// A third-party client (consent page) that registered a post-logout redirect and a back-channel logout URI.
    static func register(_ server: TestServer, name: String = "Example App") async throws -> IdP.Registered {
        try await server.withStore { store in
            var registration = ClientRegistry.Registration(name: name, redirectURIs: [IdP.redirect])
            registration.postLogoutRedirectURIs = [logoutReturn]
            registration.backchannelLogoutURI = backchannel
            let (client, secret) = try await ClientRegistry(store: store).add(registration, now: Date())
            return IdP.Registered(client: client, secret: secret)
        }
    }

    /// Consents on the consent page and exchanges the code: the app then holds tokens.
    static func connect(_ client: some TestClientProtocol, _ session: SignedIn, _ registered: IdP.Registered)
        async throws -> [String: Any]
    {
        let page = try await client.execute(
            uri: IdP.authorizePath(registered.client.id), method: .get, headers: [.cookie: session.cookie], body: nil)
        #expect(page.status == .ok, "the consent page")
        let request = try #require(
            page.text.firstMatch(of: /name="request" value="([^"]*)"/).map { String($0.1) }
        ).replacingOccurrences(of: "&amp;", with: "&")
        var headers = IdP.formType
        headers[.cookie] = session.cookie
        let allowed = try await client.execute(
            uri: "/oauth/consent", method: .post, headers: headers,
            body: IdP.form([("request", request), ("csrf_token", session.csrf), ("decision", "allow")]))
        let code = try #require(IdP.query(allowed.headers[.location])["code"])
        let tokens = try await IdP.exchange(client, registered, code: code)
        #expect(tokens.status == .ok)
        return tokens.object
    }

    static func logoutClaims(_ token: String, _ client: some TestClientProtocol) async throws -> [String: Any] {
        let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
        let header = try #require(
            try JSONSerialization.jsonObject(
                with: Data(Base64URL.decode(String(token.split(separator: ".")[0])))) as? [String: Any])
        #expect(header["typ"] as? String == "logout+jwt")
        return try IdP.verifiedClaims(token, jwks: jwks)
    }

    static func unverifiedClaims(_ token: String) -> [String: Any] {
        let payload = token.split(separator: ".").dropFirst().first.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(Base64URL.decode(payload)))) as? [String: Any] ?? [:]
    }

    @Test(arguments: TestDatabase.all)
    func appsWithAccessAreListedAndRemovable(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada", password: "correct horse battery")
        try await server.seedUser("bob", password: "correct horse battery")
        let registered = try await Self.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            #expect(
                (try await client.json("/api/account/apps", headers: session.bearerHeaders).object["apps"] as? [Any])?
                    .isEmpty == true)
            let tokens = try await Self.connect(client, session, registered)

            let apps = try #require(
                try await client.json("/api/account/apps", headers: session.bearerHeaders).object["apps"]
                    as? [[String: Any]])
            #expect(apps.count == 1)
            #expect(apps.first?["clientId"] as? String == registered.client.id)
            #expect(apps.first?["name"] as? String == "Example App")
            #expect(apps.first?["scopes"] as? [String] == ["offline_access", "openid", "profile"])
            #expect(apps.first?["firstParty"] as? Bool == false)

            // Another account sees none of it and cannot remove it: the answer is the same as for no such app.
            let bob = try await signInWithPassword(client, "bob", "correct horse battery")
            #expect(
                (try await client.json("/api/account/apps", headers: bob.bearerHeaders).object["apps"] as? [Any])?
                    .isEmpty == true)
            let path = "/api/account/apps/\(registered.client.id)"
            #expect(try await client.json(path, .delete, headers: bob.bearerHeaders).status == .notFound)
            #expect(
                try await client.json("/api/account/apps/sesame_nobody", .delete, headers: session.bearerHeaders).status
                    == .notFound)
            // A cookie without the CSRF header does not remove it.
            let forged = try await client.json(path, .delete, headers: [.cookie: session.cookie])
            #expect(forged.status == .forbidden || forged.status == .unauthorized)
            #expect(server.logouts.all.isEmpty)

            let removed = try await client.json(path, .delete, headers: session.cookieHeaders)
            #expect(removed.status == .ok, "\(removed.text)")
            #expect(
                (try await client.json("/api/account/apps", headers: session.bearerHeaders).object["apps"] as? [Any])?
                    .isEmpty == true)
            // Its tokens stop working and the next authorization asks for consent again.
            let refresh = try await client.execute(
                uri: "/oauth/token", method: .post, headers: IdP.basic(registered.client.id, registered.secret ?? ""),
                body: IdP.form([
                    ("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"] as? String ?? ""),
                ]))
            #expect(refresh.errorCode == "invalid_grant")
            let info = try await client.execute(
                uri: "/oauth/userinfo", method: .get,
                headers: [.authorization: "Bearer \(tokens["access_token"] as? String ?? "")"], body: nil)
            #expect(info.status == .unauthorized)
            let again = try await client.execute(
                uri: IdP.authorizePath(registered.client.id), method: .get, headers: [.cookie: session.cookie],
                body: nil)
            #expect(again.status == .ok && again.text.contains("consent-form"))

            // The app was told, with a logout token it can verify against the JWKS.
            let sent = try await server.logouts.awaiting(1)
            #expect(sent.count == 1)
            #expect(sent.first?.uri == Self.backchannel)
            let claims = try await Self.logoutClaims(try #require(sent.first?.token), client)
            #expect(claims["sub"] as? String == ada.id)
            #expect(claims["aud"] as? String == registered.client.id)
            #expect(claims["iss"] as? String == "http://localhost:8080")
            #expect(claims["nonce"] == nil)
            #expect((claims["events"] as? [String: Any])?["http://schemas.openid.net/event/backchannel-logout"] != nil)
        }
        let kinds = try await server.withStore { try await $0.auditEvents(userID: ada.id, limit: 50) }.map(\.kind)
        #expect(kinds.contains(AuditKind.appAccessRevoked.rawValue))
    }

    @Test(arguments: TestDatabase.all)
    func signOutEverywhereReachesTheApps(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        let other = try await Self.register(server, name: "Other App")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            _ = try await Self.connect(client, session, registered)
            _ = try await Self.connect(client, session, other)
            #expect(
                try await client.json("/api/account/sessions", .delete, headers: session.cookieHeaders).status == .ok)
            let sent = try await server.logouts.awaiting(2)
            #expect(Set(sent.map(\.uri)) == [Self.backchannel])
            var audiences: Set<String> = []
            for delivery in sent {
                let claims = try await Self.logoutClaims(delivery.token, client)
                #expect(claims["sub"] as? String == ada.id)
                audiences.insert(claims["aud"] as? String ?? "")
            }
            #expect(audiences == [registered.client.id, other.client.id])
        }
    }

    @Test(arguments: TestDatabase.all)
    func rpInitiatedLogoutNeverRedirectsAnywhereUnregistered(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        let other = try await Self.register(server, name: "Other App")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let idToken = try #require(try await Self.connect(client, session, registered)["id_token"] as? String)
            let id = registered.client.id
            let refused: [[(String, String)]] = [
                [("client_id", id), ("post_logout_redirect_uri", "https://evil.example/")],
                [("client_id", id), ("post_logout_redirect_uri", Self.logoutReturn + "/x")],
                [("post_logout_redirect_uri", Self.logoutReturn)],  // no client named: nothing to check it against
                [("client_id", "sesame_nobody"), ("post_logout_redirect_uri", Self.logoutReturn)],
                [("id_token_hint", idToken), ("client_id", other.client.id)],
                [
                    ("id_token_hint", String(idToken.dropLast(4)) + "AAAA"),
                    ("post_logout_redirect_uri", Self.logoutReturn),
                ],
            ]
            for parameters in refused {
                let r = try await client.execute(
                    uri: "/oauth/logout?" + FormParameters.encode(parameters), method: .get,
                    headers: [.cookie: session.cookie], body: nil)
                #expect(r.status == .badRequest, "\(parameters)")
                #expect(r.headers[.location] == nil)
            }
            // Still signed in after all of them.
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .ok)
            #expect(server.logouts.all.isEmpty)

            // Without a hint, the person is asked; the page's form needs the session's CSRF token.
            let ask = try await client.execute(
                uri: "/oauth/logout?"
                    + FormParameters.encode([
                        ("client_id", id), ("post_logout_redirect_uri", Self.logoutReturn), ("state", "s-9"),
                    ]),
                method: .get, headers: [.cookie: session.cookie], body: nil)
            #expect(ask.status == .ok && ask.text.contains("logout-form"))
            let request = try #require(
                ask.text.firstMatch(of: /name="request" value="([^"]*)"/).map { String($0.1) }
            ).replacingOccurrences(of: "&amp;", with: "&")
            var headers = IdP.formType
            headers[.cookie] = session.cookie
            let forged = try await client.execute(
                uri: "/oauth/logout/confirm", method: .post, headers: headers,
                body: IdP.form([("request", request), ("csrf_token", "x"), ("decision", "sign_out")]))
            #expect(forged.status == .badRequest && forged.headers[.location] == nil)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .ok)

            let confirmed = try await client.execute(
                uri: "/oauth/logout/confirm", method: .post, headers: headers,
                body: IdP.form([("request", request), ("csrf_token", session.csrf), ("decision", "sign_out")]))
            #expect(confirmed.status == .seeOther)
            #expect(confirmed.headers[.location] == Self.logoutReturn + "?state=s-9")
            #expect(confirmed.headers[.setCookie]?.contains("Max-Age=0") == true)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .unauthorized)
            #expect(try await server.logouts.awaiting(1).count == 1)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aGenuineHintSignsOutAtOnceAndAnOperatorDisablingTellsTheApps(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await Self.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let idToken = try #require(try await Self.connect(client, session, registered)["id_token"] as? String)
            let r = try await client.execute(
                uri: "/oauth/logout?"
                    + FormParameters.encode([
                        ("id_token_hint", idToken), ("post_logout_redirect_uri", Self.logoutReturn),
                    ]),
                method: .get, headers: [.cookie: session.cookie], body: nil)
            #expect(r.status == .seeOther)
            #expect(r.headers[.location] == Self.logoutReturn)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .unauthorized)
            #expect(try await server.logouts.awaiting(1).count == 1)
            // Signed out already: the same link just goes back.
            let again = try await client.execute(
                uri: "/oauth/logout?" + FormParameters.encode([("id_token_hint", idToken)]), method: .get,
                headers: [:], body: nil)
            #expect(again.status == .ok && again.text.contains("not signed in"))
        }
        // An operator disabling the account tells the app too (the command waits for the delivery).
        let line = try await server.withStore { store in
            try await Admin(store: store, issuer: "http://localhost:8080", logoutDelivery: server.logouts)
                .setDisabled("ada", true)
        }
        #expect(line == "ada disabled and signed out everywhere; back-channel logout sent to 1 app(s)")
        let last = try #require(server.logouts.all.last)
        #expect(last.uri == Self.backchannel)
        #expect(Self.unverifiedClaims(last.token)["sub"] as? String == ada.id)
        #expect(server.logouts.all.count == 2)
    }
}

/// Pairwise subject identifiers (OpenID Connect Core §8.1) over HTTP on both engines.
@Suite struct PairwiseSubjectTests {
    typealias IdP = IdentityProviderTests

    static func register(_ server: TestServer, _ redirect: String, pairwise: Bool = true) async throws
        -> IdP.Registered
    {
        try await server.withStore { store in
            var registration = ClientRegistry.Registration(name: "App", redirectURIs: [redirect])
            registration.pairwiseSubject = pairwise
            registration.firstParty = true
            registration.backchannelLogoutURI = "https://app.example/backchannel"
            let (client, secret) = try await ClientRegistry(store: store).add(registration, now: Date())
            return IdP.Registered(client: client, secret: secret)
        }
    }

    /// The code flow for a client of any redirect URI: its tokens.
    static func tokens(
        _ client: some TestClientProtocol, _ session: SignedIn, _ registered: IdP.Registered,
        extra: [(String, String)] = []
    ) async throws -> [String: Any] {
        let redirect = registered.client.redirectURIs[0]
        let r = try await client.execute(
            uri: IdP.authorizePath(registered.client.id, redirect: redirect, extra: extra), method: .get,
            headers: [.cookie: session.cookie], body: nil)
        let code = try #require(IdP.query(r.headers[.location])["code"], "\(r.headers[.location] ?? r.text)")
        let exchanged = try await client.execute(
            uri: "/oauth/token", method: .post, headers: IdP.basic(registered.client.id, registered.secret ?? ""),
            body: IdP.form([
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
                ("code_verifier", IdP.verifier),
            ]))
        #expect(exchanged.status == .ok)
        return exchanged.object
    }

    @Test(arguments: TestDatabase.all)
    func pairwiseClientsSeeASubjectOfTheirSectorsOwn(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada", password: "correct horse battery")
        let wiki = try await Self.register(server, "https://app.example/callback")
        let sameHost = try await Self.register(server, "https://app.example/other")
        let elsewhere = try await Self.register(server, "https://other.example/callback")
        let ordinary = try await Self.register(server, "https://plain.example/callback", pairwise: false)
        await #expect(throws: AdminError.self) {
            _ = try await server.withStore { store in
                var two = ClientRegistry.Registration(
                    name: "Two hosts", redirectURIs: ["https://a.example/cb", "https://b.example/cb"])
                two.pairwiseSubject = true
                return try await ClientRegistry(store: store).add(two, now: Date())
            }
        }
        try await server.app().test(.router) { client in
            let discovery = try await client.json("/.well-known/openid-configuration").object
            #expect(discovery["subject_types_supported"] as? [String] == ["public", "pairwise"])
            let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            func sub(_ registered: IdP.Registered) async throws -> (String, [String: Any]) {
                let tokens = try await Self.tokens(client, session, registered)
                let claims = try IdP.verifiedClaims(try #require(tokens["id_token"] as? String), jwks: jwks)
                return (try #require(claims["sub"] as? String), tokens)
            }
            let (a, tokens) = try await sub(wiki)
            #expect(a != ada.id && a.count == 43)
            #expect(try await sub(wiki).0 == a, "stable")
            #expect(try await sub(sameHost).0 == a, "one sector, one subject")
            #expect(try await sub(elsewhere).0 != a)
            #expect(try await sub(ordinary).0 == ada.id)

            // UserInfo, introspection and an id_token_hint speak the same pairwise subject.
            let access = try #require(tokens["access_token"] as? String)
            let info = try await client.execute(
                uri: "/oauth/userinfo", method: .get, headers: [.authorization: "Bearer \(access)"], body: nil)
            #expect(info.object["sub"] as? String == a)
            for token in [access, tokens["refresh_token"] as? String ?? ""] {
                let introspected = try await client.execute(
                    uri: "/oauth/introspect", method: .post, headers: IdP.basic(wiki.client.id, wiki.secret ?? ""),
                    body: IdP.form([("token", token)]))
                #expect(introspected.object["sub"] as? String == a)
            }
            let hinted = try await Self.tokens(
                client, session, wiki,
                extra: [("prompt", "none"), ("id_token_hint", tokens["id_token"] as? String ?? "")])
            #expect(hinted["id_token"] is String)

            // Back-channel logout names the person by each client's own subject.
            #expect(
                try await client.json("/api/account/sessions", .delete, headers: session.cookieHeaders).status == .ok)
            let sent = try await server.logouts.awaiting(4)
            let subjects = sent.map { AppAccessAndLogoutTests.unverifiedClaims($0.token) }
                .reduce(into: [String: String]()) { $0[$1["aud"] as? String ?? ""] = $1["sub"] as? String }
            #expect(subjects[wiki.client.id] == a && subjects[ordinary.client.id] == ada.id)
            #expect(subjects[elsewhere.client.id] != a)
        }
    }
}
