import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesameIdentityProvider
@testable import SesameOperations

/// Regression tests for the second outside review's confirmed defects in the OpenID Connect provider (issue 26,
/// items 1 to 4), each over HTTP on both engines. Each one failed on the code as it was before its fix.
@Suite struct IdentityProviderReviewTests {
    typealias IdP = IdentityProviderTests
    typealias Device = DeviceAuthorizationTests

    static let password = "correct horse battery"

    static func authorizePath(_ clientID: String, scope: String, extra: [(String, String)] = []) -> String {
        "/oauth/authorize?"
            + FormParameters.encode(
                [
                    ("client_id", clientID), ("redirect_uri", IdP.redirect), ("response_type", "code"),
                    ("scope", scope), ("state", "st-1"), ("nonce", "n-1"), ("code_challenge", IdP.challenge),
                    ("code_challenge_method", "S256"),
                ] + extra)
    }

    static func get(_ client: some TestClientProtocol, _ path: String, _ session: SignedIn?) async throws
        -> TestResponse
    {
        try await client.execute(
            uri: path, method: .get, headers: session.map { [.cookie: $0.cookie] } ?? [:], body: nil)
    }

    /// The code an authorization request answers with at once, or nil (sent to sign in, or an error).
    static func code(_ response: TestResponse) -> String? {
        guard response.status == .seeOther, let location = response.headers[.location],
            location.hasPrefix(IdP.redirect + "?")
        else { return nil }
        return IdP.query(location)["code"]
    }

    /// Authorizes from `session` and exchanges the code: the app's tokens.
    static func tokens(
        _ client: some TestClientProtocol, _ registered: IdP.Registered, _ session: SignedIn,
        scope: String = "openid profile offline_access"
    ) async throws -> [String: Any] {
        let answer = try await get(client, authorizePath(registered.client.id, scope: scope), session)
        let code = try #require(Self.code(answer), "authorize answered \(answer.status) \(answer.headers)")
        let tokens = try await IdP.exchange(client, registered, code: code)
        #expect(tokens.status == .ok, "\(tokens.text)")
        return tokens.object
    }

    static func refresh(_ client: some TestClientProtocol, _ registered: IdP.Registered, _ token: Any?) async throws
        -> TestResponse
    {
        try await client.execute(
            uri: "/oauth/token", method: .post, headers: IdP.basic(registered.client.id, registered.secret ?? ""),
            body: IdP.form([("grant_type", "refresh_token"), ("refresh_token", token as? String ?? "")]))
    }

    static func userInfo(_ client: some TestClientProtocol, _ token: Any?) async throws -> HTTPResponse.Status {
        try await client.execute(
            uri: "/oauth/userinfo", method: .get, headers: [.authorization: "Bearer \(token as? String ?? "")"],
            body: nil
        ).status
    }

    static func active(_ client: some TestClientProtocol, _ registered: IdP.Registered, _ token: Any?) async throws
        -> Bool
    {
        let r = try await client.execute(
            uri: "/oauth/introspect", method: .post, headers: IdP.basic(registered.client.id, registered.secret ?? ""),
            body: IdP.form([("token", token as? String ?? "")]))
        #expect(r.status == .ok, "\(r.text)")
        return r.object["active"] as? Bool ?? false
    }

    /// A link with one query parameter changed.
    static func replacing(_ path: String, _ name: String, with value: String) -> String {
        let parts = path.split(separator: "?", maxSplits: 1)
        var form = FormParameters(parts.count == 2 ? parts[1] : "").values
        form[name] = value
        return String(parts[0]) + "?"
            + FormParameters.encode(form.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    // MARK: 3. A person's own device code and the limit on guessing

    @Test(arguments: TestDatabase.all)
    func aMatchingUserCodeForgivesOnlyItsOwnAttempt(_ db: TestDatabase) async throws {
        var server = TestServer(db)
        server.rateLimits.perAccount = 3
        try await server.seedUser("ada", password: Self.password)
        let registered = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", Self.password)
            let userCode = try #require(try await Device.startDevice(client, registered)["user_code"] as? String)
            let guesses = ["BCDF-GHJK", "BCDF-GHJL", "BCDF-GHJM", "BCDF-GHJN", "BCDF-GHJP"].filter { $0 != userCode }
            func typed(_ code: String) async throws -> TestResponse {
                try await Device.post(client, "/device", session, [("user_code", code), ("csrf_token", session.csrf)])
            }
            #expect(try await typed(guesses[0]).text.contains("doesn’t match"))
            #expect(try await typed(guesses[1]).text.contains("doesn’t match"))
            let own = try await typed(userCode)
            #expect(own.status == .ok && own.text.contains("device-approve-form"))
            // Two wrong guesses still count: the third is the last the limit allows, the fourth is refused.
            #expect(try await typed(guesses[2]).text.contains("doesn’t match"))
            let blocked = try await typed(guesses[3])
            #expect(blocked.status == .badRequest)
            #expect(blocked.text.contains("Too many tries. For your security, wait"), "\(blocked.text)")
        }
    }

    // MARK: 2. Introspection and a disabled account

    @Test(arguments: TestDatabase.all)
    func aDisabledAccountsTokensAreInactive(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada", password: Self.password)
        let registered = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", Self.password)
            let tokens = try await Self.tokens(client, registered, session)
            #expect(try await Self.active(client, registered, tokens["access_token"]))
            #expect(try await Self.active(client, registered, tokens["refresh_token"]))

            // The account disabled without its grants ended (as a node of an earlier version leaves it): the
            // introspection endpoint checks the account as UserInfo does.
            func setDisabledColumn(_ value: Int) async throws {
                try await server.withStore { store in
                    try await store.db.raw("UPDATE users SET disabled = \(bind: value) WHERE id = \(bind: ada.id)")
                        .run()
                }
            }
            try await setDisabledColumn(1)
            #expect(try await Self.userInfo(client, tokens["access_token"]) == .unauthorized)
            #expect(try await !Self.active(client, registered, tokens["access_token"]))
            #expect(try await !Self.active(client, registered, tokens["refresh_token"]))
            try await setDisabledColumn(0)
            #expect(try await Self.active(client, registered, tokens["access_token"]))

            // `sesame users disable` ends the grants: enabling the account again does not bring them back.
            let line = try await server.withStore { store in
                try await Admin(store: store, issuer: "http://localhost:8080", logoutDelivery: server.logouts)
                    .setDisabled("ada", true)
            }
            #expect(line.hasPrefix("ada disabled"))
            let grants = try await server.withStore { try await $0.grants(userID: ada.id, now: server.clock.now) }
            #expect(grants.isEmpty)
            _ = try await server.withStore { store in
                try await Admin(store: store, issuer: "http://localhost:8080", logoutDelivery: server.logouts)
                    .setDisabled("ada", false)
            }
            #expect(try await !Self.active(client, registered, tokens["access_token"]))
            #expect(try await !Self.active(client, registered, tokens["refresh_token"]))
            #expect(try await Self.refresh(client, registered, tokens["refresh_token"]).errorCode == "invalid_grant")
        }
    }

    // MARK: 1b. Sign out everywhere and a new password end the grants

    /// (b) "Sign out everywhere" and a password change end the person's grants: refresh and access tokens alike.
    @Test(arguments: TestDatabase.all)
    func signingOutEverywhereAndChangingThePasswordEndTheGrants(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada", password: Self.password)
        let registered = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let stolen = try await signInWithPassword(client, "ada", Self.password)
            let before = try await Self.tokens(client, registered, stolen)
            let owner = try await signInWithPassword(client, "ada", Self.password)
            #expect(
                try await client.json("/api/account/sessions", .delete, headers: owner.bearerHeaders).status == .ok)
            #expect(try await Self.refresh(client, registered, before["refresh_token"]).errorCode == "invalid_grant")
            #expect(try await Self.userInfo(client, before["access_token"]) == .unauthorized)
            #expect(try await !Self.active(client, registered, before["access_token"]))

            let thief = try await signInWithPassword(client, "ada", Self.password)
            let stolenAgain = try await Self.tokens(client, registered, thief)
            let owner2 = try await signInWithPassword(client, "ada", Self.password)
            let changed = try await client.json(
                "/api/account/password", .put,
                body: jsonString(["currentPassword": Self.password, "newPassword": "a new password entirely"]),
                headers: owner2.bearerHeaders)
            #expect(changed.status == .ok, "\(changed.text)")
            #expect(
                try await Self.refresh(client, registered, stolenAgain["refresh_token"]).errorCode == "invalid_grant")
            #expect(try await Self.userInfo(client, stolenAgain["access_token"]) == .unauthorized)
            // The session that changed the password signs the person in to the app again.
            #expect(try await Self.tokens(client, registered, owner2)["refresh_token"] is String)
        }
        let grants = try await server.withStore { try await $0.grants(userID: ada.id, now: server.clock.now) }
        #expect(grants.count == 1)
    }

    // MARK: 1c. A grant without offline_access ends with its session

    /// (c) A grant without `offline_access` lives as long as the session it came from, and no longer.
    @Test(arguments: TestDatabase.all)
    func grantsWithoutOfflineAccessEndWithTheirSession(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: Self.password)
        let registered = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let browser = try await signInWithPassword(client, "ada", Self.password)
            let other = try await signInWithPassword(client, "ada", Self.password)
            let online = try await Self.tokens(client, registered, browser, scope: "openid profile")
            #expect(online["refresh_token"] == nil)
            let unspent = try #require(
                Self.code(
                    try await Self.get(client, Self.authorizePath(registered.client.id, scope: "openid"), browser)))
            let offline = try await Self.tokens(client, registered, browser)
            #expect(try await Self.userInfo(client, online["access_token"]) == .ok)

            // Another session ending changes nothing.
            #expect(try await client.json("/api/session", .delete, headers: other.bearerHeaders).status == .ok)
            #expect(try await Self.userInfo(client, online["access_token"]) == .ok)

            // Its own session ending ends it: UserInfo, introspection, and the code not yet exchanged.
            #expect(try await client.json("/api/session", .delete, headers: browser.bearerHeaders).status == .ok)
            #expect(try await Self.userInfo(client, online["access_token"]) == .unauthorized)
            #expect(try await !Self.active(client, registered, online["access_token"]))
            #expect(try await IdP.exchange(client, registered, code: unspent).errorCode == "invalid_grant")
            // A grant with offline_access is the person's choice to stay connected: it outlives the session.
            #expect(try await Self.refresh(client, registered, offline["refresh_token"]).status == .ok)
        }
    }

    /// An app whose only grant is tied to the session (first-party: no consent kept) still hears of RP-initiated
    /// logout, although the grant ends with the session it reports.
    @Test(arguments: TestDatabase.all)
    func anAppWhoseGrantEndsWithTheSessionIsStillToldOfTheLogout(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: Self.password)
        let registered = try await server.withStore { store in
            var registration = ClientRegistry.Registration(name: "Wiki", redirectURIs: [IdP.redirect])
            registration.firstParty = true
            registration.backchannelLogoutURI = AppAccessAndLogoutTests.backchannel
            let (client, secret) = try await ClientRegistry(store: store).add(registration, now: Date())
            return IdP.Registered(client: client, secret: secret)
        }
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", Self.password)
            let tokens = try await Self.tokens(client, registered, session, scope: "openid")
            let hint = try #require(tokens["id_token"] as? String)
            let logout = try await Self.get(
                client, "/oauth/logout?" + FormParameters.encode([("id_token_hint", hint)]), session)
            #expect(logout.status == .ok || logout.status == .seeOther)
            #expect(try await Self.userInfo(client, tokens["access_token"]) == .unauthorized)
            let sent = try await server.logouts.awaiting(1)
            #expect(sent.map(\.uri) == [AppAccessAndLogoutTests.backchannel])
        }
    }

    // MARK: 4. max_age and the sign-in the request caused

    @Test(arguments: TestDatabase.all)
    func maxAgeIsMetByTheSignInTheRequestCaused(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: Self.password)
        let registered = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let old = try await signInWithPassword(client, "ada", Self.password)
            for extra in [[("max_age", "0")], [("max_age", "1")], [("prompt", "login")]] {
                server.clock.advance(5)
                let path = Self.authorizePath(registered.client.id, scope: "openid", extra: extra)
                let asked = try await Self.get(client, path, old)
                #expect(asked.headers[.location]?.hasPrefix("/signin?return=") == true, "\(extra)")
                let back = try #require(IdP.query(asked.headers[.location])["return"])
                #expect(!back.contains("prompt="))

                // The person signs in; the return arrives a few seconds later, more than max_age.
                server.clock.advance(2)
                let fresh = try await signInWithPassword(client, "ada", Self.password)
                let signedInAt = Int(server.clock.now.timeIntervalSince1970)
                server.clock.advance(3)
                let answer = try await Self.get(client, back, fresh)
                let code = try #require(Self.code(answer), "\(extra): \(answer.headers)")
                let tokens = try await IdP.exchange(client, registered, code: code).object
                let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
                let claims = try IdP.verifiedClaims(try #require(tokens["id_token"] as? String), jwks: jwks)
                #expect(claims["auth_time"] as? Int == signedInAt)

                // The marker cannot be forged or moved: an earlier time, another request's state, or a session from
                // before the request all leave max_age in force. (Without max_age, dropping `prompt=login` is the
                // person's own choice: nothing to guard.)
                guard extra[0].0 == "max_age" else { continue }
                let after = try #require(
                    FormParameters(back.split(separator: "?").last ?? "")["sesame_signed_in_after"].flatMap { Int($0) })
                let forgedTime = Self.replacing(back, "sesame_signed_in_after", with: String(after - 3600))
                let otherState = Self.replacing(back, "state", with: "st-2")
                for (link, session) in [(forgedTime, fresh), (otherState, fresh), (back, old)] {
                    let refused = try await Self.get(client, link, session)
                    #expect(Self.code(refused) == nil, "\(extra)")
                }
            }
        }
    }

    // MARK: 1a. A recent sign-in before an offline grant or a device approval

    /// (a) A grant with `offline_access` (from the authorization endpoint or its consent form) and a device approval
    /// need a sign-in within the re-authentication window: a stale session is sent to sign in and brought back.
    @Test(arguments: TestDatabase.all)
    func offlineGrantsAndDeviceApprovalsNeedARecentSignIn(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: Self.password)
        let registered = try await IdP.register(server)
        let thirdParty = try await IdP.register(server, firstParty: false)
        let stale = TimeInterval(server.configuration.reauthenticationWindow + 1)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", Self.password)
            let consentPage = try await Self.get(
                client, Self.authorizePath(thirdParty.client.id, scope: "openid offline_access"), session)
            #expect(consentPage.status == .ok && consentPage.text.contains("consent"))
            server.clock.advance(stale)

            let offline = Self.authorizePath(registered.client.id, scope: "openid profile offline_access")
            let asked = try await Self.get(client, offline, session)
            #expect(asked.status == .seeOther)
            #expect(Self.code(asked) == nil, "a stale session got an offline grant's code")
            let signIn = try #require(asked.headers[.location])
            #expect(signIn.hasPrefix("/signin?return=%2Foauth%2Fauthorize%3F"))
            let none = try await Self.get(client, offline + "&prompt=none", session)
            #expect(IdP.query(none.headers[.location])["error"] == "login_required")
            // Without offline_access the session still serves (the grant ends with it: see (c)).
            #expect(
                Self.code(
                    try await Self.get(client, Self.authorizePath(registered.client.id, scope: "openid"), session))
                    != nil)

            // The consent form answered from a stale session is sent to sign in too.
            let request = try #require(consentPage.text.firstMatch(of: /name="request" value="([^"]*)"/))
            var headers = IdP.formType
            headers[.cookie] = session.cookie
            let consent = try await client.execute(
                uri: "/oauth/consent", method: .post, headers: headers,
                body: IdP.form([
                    ("request", String(request.1).replacingOccurrences(of: "&amp;", with: "&")),
                    ("csrf_token", session.csrf), ("decision", "allow"),
                ]))
            #expect(consent.status == .seeOther)
            #expect(consent.headers[.location]?.hasPrefix("/signin?return=") == true, "\(consent.headers)")

            // Signing in again and following the return link gives the code, and a refresh token.
            let back = try #require(IdP.query(signIn)["return"])
            server.clock.advance(3)
            let fresh = try await signInWithPassword(client, "ada", Self.password)
            server.clock.advance(2)
            let code = try #require(Self.code(try await Self.get(client, back, fresh)))
            #expect(try await IdP.exchange(client, registered, code: code).object["refresh_token"] is String)

            // A device approval from a stale session is not taken; the person signs in and comes back to the code.
            server.clock.advance(stale)
            let started = try await Device.startDevice(client, registered)
            let userCode = try #require(started["user_code"] as? String)
            let deviceCode = try #require(started["device_code"] as? String)
            let page = try await Self.get(client, "/device?user_code=\(userCode)", fresh)
            #expect(page.status == .seeOther)
            #expect(page.headers[.location] == "/signin?return=%2Fdevice%3Fuser_code%3D\(userCode)")
            let approval = try await Device.post(
                client, "/device/approve", fresh,
                [("user_code", userCode), ("csrf_token", fresh.csrf), ("decision", "allow")])
            #expect(approval.status == .seeOther)
            #expect(approval.headers[.location] == "/signin?return=%2Fdevice%3Fuser_code%3D\(userCode)")
            #expect(try await Device.poll(client, registered, deviceCode).errorCode == "authorization_pending")
            let again = try await signInWithPassword(client, "ada", Self.password)
            let allowed = try await Device.post(
                client, "/device/approve", again,
                [("user_code", userCode), ("csrf_token", again.csrf), ("decision", "allow")])
            #expect(allowed.status == .ok && allowed.text.contains("Device connected"))
            server.clock.advance(6)
            #expect(try await Device.poll(client, registered, deviceCode).object["refresh_token"] is String)
        }
    }
}
