import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import SesameCore
@testable import SesameEmail
@testable import SesameForwardAuth
@testable import SesameIdentityProvider
@testable import SesameServer

/// The verified address leaves Sesame in two ways: the identity provider's `email` scope (`email` and
/// `email_verified`, in the ID token and from UserInfo) and forward auth's `Remote-Email`. Never a pending address.
@Suite struct EmailClaimsTests {
    /// Adds `address` to the signed-in account and, when `verify`, types its code.
    static func give(
        _ client: some TestClientProtocol, _ session: SignedIn, _ address: String, server: TestServer, verify: Bool
    ) async throws {
        let put = try await client.json(
            "/api/account/email", .put, body: jsonString(["address": address]), headers: session.bearerHeaders)
        #expect(put.status == .accepted, "\(put.text)")
        let mail = try #require(try await EmailAddressTests.mails(server).last)
        guard verify else { return }
        let confirmed = try await client.json(
            "/api/account/email/confirm", .post,
            body: jsonString(["code": try #require(EmailAddressTests.code(in: mail))]),
            headers: session.bearerHeaders)
        #expect(confirmed.status == .ok, "\(confirmed.text)")
    }

    /// The ID token's claims and UserInfo's body for a fresh code with `scope`.
    static func claims(
        _ client: some TestClientProtocol, _ session: SignedIn, _ registered: IdentityProviderTests.Registered,
        scope: String
    ) async throws -> (id: [String: Any], info: [String: Any]) {
        let path =
            "/oauth/authorize?"
            + FormParameters.encode([
                ("client_id", registered.client.id), ("redirect_uri", IdentityProviderTests.redirect),
                ("response_type", "code"), ("scope", scope), ("state", "st-1"), ("nonce", "n-1"),
                ("code_challenge", IdentityProviderTests.challenge), ("code_challenge_method", "S256"),
            ])
        let authorized = try await client.execute(
            uri: path, method: .get, headers: [.cookie: session.cookie], body: nil)
        let code = try #require(
            IdentityProviderTests.query(authorized.headers[.location])["code"], "\(authorized.text)")
        let tokens = try await IdentityProviderTests.exchange(client, registered, code: code)
        #expect(tokens.status == .ok, "\(tokens.text)")
        let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
        let id = try IdentityProviderTests.verifiedClaims(
            try #require(tokens.object["id_token"] as? String), jwks: jwks)
        let access = try #require(tokens.object["access_token"] as? String)
        let info = try await client.execute(
            uri: "/oauth/userinfo", method: .get, headers: [.authorization: "Bearer \(access)"], body: nil)
        #expect(info.status == .ok)
        return (id, info.object)
    }

    @Test(arguments: TestDatabase.all)
    func theEmailScopeGivesOnlyAVerifiedAddress(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await IdentityProviderTests.register(server)
        try await server.app().test(.router) { client in
            let discovery = try await client.json("/.well-known/openid-configuration").object
            #expect((discovery["scopes_supported"] as? [String])?.contains("email") == true)
            #expect(
                (discovery["claims_supported"] as? [String]).map {
                    Set($0).isSuperset(of: ["email", "email_verified"])
                } == true)

            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            var seen = try await Self.claims(client, session, registered, scope: "openid email")
            // Addresses are on and none is verified yet: `email_verified` false, no `email`.
            #expect(seen.id["email"] == nil && seen.id["email_verified"] as? Bool == false && seen.info["email"] == nil)
            #expect(seen.info["email_verified"] as? Bool == false)

            // A pending address is no address.
            try await Self.give(client, session, "Ada@Example.org", server: server, verify: false)
            seen = try await Self.claims(client, session, registered, scope: "openid email")
            #expect(
                seen.id["email"] == nil && seen.info["email"] == nil && seen.info["email_verified"] as? Bool == false)

            try await Self.give(client, session, "Ada@Example.org", server: server, verify: true)
            seen = try await Self.claims(client, session, registered, scope: "openid email")
            #expect(seen.id["email"] as? String == "Ada@Example.org" && seen.id["email_verified"] as? Bool == true)
            #expect(seen.info["email"] as? String == "Ada@Example.org" && seen.info["email_verified"] as? Bool == true)
            // Without the scope, nothing.
            seen = try await Self.claims(client, session, registered, scope: "openid profile")
            #expect(seen.id["email"] == nil && seen.info["email"] == nil)
            #expect(seen.info["preferred_username"] as? String == "ada")
        }
    }

    @Test(arguments: TestDatabase.all)
    func forwardAuthSendsTheVerifiedAddress(_ db: TestDatabase) async throws {
        var configured = TestServer(db, origin: ForwardAuthTests.origin) {
            $0.rpID = "example.com"
            $0.cookieDomain = "example.com"
            $0.forwardAuthDomains = ["example.com"]
            $0.email = .optional
            $0.allowConsoleMail = true
        }
        configured.serviceClock = ManualClock()
        let server = configured
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let api = try await signInWithPassword(client, "ada", "correct horse battery")
            let signIn = try await client.json(
                "/api/sessions/password", .post,
                body: jsonString(["username": "ada", "password": "correct horse battery"]),
                headers: [.init("Sesame-Client")!: "web"])
            let cookie = try #require(signIn.cookie(named: "__Secure-sesame_session"))
            var passed = try await ForwardAuthTests.check(client, "app.example.com", cookie: cookie)
            #expect(passed.status == .ok && passed.headers[ForwardAuthService.remoteEmail] == "")
            try await Self.give(client, api, "ada@example.org", server: server, verify: false)
            passed = try await ForwardAuthTests.check(client, "app.example.com", cookie: cookie)
            #expect(passed.headers[ForwardAuthService.remoteEmail] == "", "a pending address is not sent")
            try await Self.give(client, api, "ada@example.org", server: server, verify: true)
            passed = try await ForwardAuthTests.check(client, "app.example.com", cookie: cookie)
            #expect(passed.headers[ForwardAuthService.remoteEmail] == "ada@example.org")
        }
    }
}
