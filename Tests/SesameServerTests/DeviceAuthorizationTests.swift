import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesameIdentityProvider

/// The device authorization grant (RFC 8628) over HTTP on both engines: the device's request and polls
/// (`authorization_pending`, `slow_down`, `access_denied`, `expired_token`, tokens once), the person's pages (sign-in
/// first, CSRF-checked forms, the application and code shown before allowing), and the limit on guessing user codes.
@Suite struct DeviceAuthorizationTests {
    typealias IdP = IdentityProviderTests

    static func startDevice(_ client: some TestClientProtocol, _ registered: IdP.Registered) async throws
        -> [String: Any]
    {
        let r = try await client.execute(
            uri: "/oauth/device_authorization", method: .post,
            headers: IdP.basic(registered.client.id, registered.secret ?? ""),
            body: IdP.form([("scope", "openid profile offline_access")]))
        #expect(r.status == .ok, "\(r.text)")
        #expect(r.headers[.cacheControl] == "no-store")
        return r.object
    }

    static func poll(_ client: some TestClientProtocol, _ registered: IdP.Registered, _ deviceCode: String)
        async throws -> TestResponse
    {
        try await client.execute(
            uri: "/oauth/token", method: .post, headers: IdP.basic(registered.client.id, registered.secret ?? ""),
            body: IdP.form([("grant_type", DeviceAuthorizationRoutes.grantType), ("device_code", deviceCode)]))
    }

    /// Posts one of the device pages' forms with the session's cookie.
    static func post(
        _ client: some TestClientProtocol, _ path: String, _ session: SignedIn, _ fields: [(String, String)]
    ) async throws -> TestResponse {
        var headers = IdP.formType
        headers[.cookie] = session.cookie
        return try await client.execute(uri: path, method: .post, headers: headers, body: IdP.form(fields))
    }

    @Test func userCodesAreEightConsonantsAndTypingIsForgiving() {
        let codes = (0..<200).map { _ in DeviceAuthorizationRoutes.newUserCode() }
        #expect(codes.allSatisfy { $0.count == 9 && $0.contains("-") })
        #expect(Set(codes).count > 190)
        let code = codes[0]
        let normalized = code.replacingOccurrences(of: "-", with: "")
        #expect(DeviceAuthorizationRoutes.normalize(code.lowercased()) == normalized)
        #expect(
            DeviceAuthorizationRoutes.normalize(" " + normalized.prefix(4) + " " + normalized.dropFirst(4))
                == normalized)
        #expect(DeviceAuthorizationRoutes.normalize("AAAA-AAAA") == nil, "vowels are never in a code")
        #expect(DeviceAuthorizationRoutes.normalize("BCDF-GHJ") == nil)
        #expect(DeviceAuthorizationRoutes.normalize("BCDF-GHJKL") == nil)
    }

    @Test(arguments: TestDatabase.all)
    func aDeviceSignsInOnceThePersonAllowsIt(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await IdP.register(server)
        let other = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let discovery = try await client.json("/.well-known/openid-configuration").object
            #expect(
                discovery["device_authorization_endpoint"] as? String
                    == "http://localhost:8080/oauth/device_authorization")
            let started = try await Self.startDevice(client, registered)
            let deviceCode = try #require(started["device_code"] as? String)
            let userCode = try #require(started["user_code"] as? String)
            #expect(started["verification_uri"] as? String == "http://localhost:8080/device")
            #expect(
                started["verification_uri_complete"] as? String == "http://localhost:8080/device?user_code=\(userCode)")
            #expect(started["interval"] as? Int == 5 && started["expires_in"] as? Int == 600)

            // Polling: pending, then too soon, then (after the longer interval) pending again.
            #expect(try await Self.poll(client, registered, deviceCode).errorCode == "authorization_pending")
            #expect(try await Self.poll(client, registered, deviceCode).errorCode == "slow_down")
            server.clock.advance(6)
            #expect(
                try await Self.poll(client, registered, deviceCode).errorCode == "slow_down", "the interval is now 10 s"
            )
            server.clock.advance(16)
            #expect(try await Self.poll(client, registered, deviceCode).errorCode == "authorization_pending")
            // Another client cannot collect it.
            #expect(try await Self.poll(client, other, deviceCode).errorCode == "invalid_grant")

            // Signed out, the page sends the person to sign in first, then back here with the code.
            let signedOut = try await client.execute(
                uri: "/device?user_code=\(userCode)", method: .get, headers: [:], body: nil)
            #expect(signedOut.status == .seeOther)
            #expect(signedOut.headers[.location] == "/signin?return=%2Fdevice%3Fuser_code%3D\(userCode)")

            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let page = try await client.execute(
                uri: "/device?user_code=\(userCode)", method: .get, headers: [.cookie: session.cookie], body: nil)
            #expect(page.status == .ok && page.text.contains("value=\"\(userCode)\""))

            // The forms need the session's CSRF token.
            let typed = userCode.lowercased().replacingOccurrences(of: "-", with: " ")
            let forged = try await Self.post(client, "/device", session, [("user_code", typed), ("csrf_token", "x")])
            #expect(forged.status == .badRequest && !forged.text.contains("device-approve-form"))
            let approvePage = try await Self.post(
                client, "/device", session, [("user_code", typed), ("csrf_token", session.csrf)])
            #expect(approvePage.status == .ok)
            #expect(approvePage.text.contains("Allow Example App on your device?"))
            #expect(approvePage.text.contains(userCode))
            let forgedAllow = try await Self.post(
                client, "/device/approve", session,
                [("user_code", userCode), ("csrf_token", "x"), ("decision", "allow")])
            #expect(forgedAllow.status == .badRequest)
            #expect(try await Self.poll(client, registered, deviceCode).errorCode == "slow_down")

            let allowed = try await Self.post(
                client, "/device/approve", session,
                [("user_code", userCode), ("csrf_token", session.csrf), ("decision", "allow")])
            #expect(allowed.status == .ok && allowed.text.contains("Device connected"))
            // The code is no longer waiting: allowing it again finds nothing.
            let again = try await Self.post(
                client, "/device/approve", session,
                [("user_code", userCode), ("csrf_token", session.csrf), ("decision", "deny")])
            #expect(again.status == .badRequest)

            let tokens = try await Self.poll(client, registered, deviceCode)
            #expect(tokens.status == .ok, "\(tokens.text)")
            let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
            let id = try IdP.verifiedClaims(try #require(tokens.object["id_token"] as? String), jwks: jwks)
            #expect(id["sub"] as? String == ada.id)
            #expect(id["aud"] as? String == registered.client.id)
            #expect(id["amr"] as? [String] == ["pwd"])
            #expect(tokens.object["refresh_token"] is String)
            // Tokens are handed out once.
            #expect(try await Self.poll(client, registered, deviceCode).errorCode == "invalid_grant")
            let apps = try await client.json("/api/account/apps", headers: session.bearerHeaders).object["apps"]
            #expect((apps as? [[String: Any]])?.map { $0["clientId"] as? String } == [registered.client.id])
        }
    }

    @Test(arguments: TestDatabase.all)
    func refusedAndExpiredDevicesGetNothing(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let refused = try await Self.startDevice(client, registered)
            let denied = try await Self.post(
                client, "/device/approve", session,
                [
                    ("user_code", refused["user_code"] as? String ?? ""), ("csrf_token", session.csrf),
                    ("decision", "deny"),
                ])
            #expect(denied.status == .ok && denied.text.contains("Not connected"))
            #expect(
                try await Self.poll(client, registered, refused["device_code"] as? String ?? "").errorCode
                    == "access_denied")

            let late = try await Self.startDevice(client, registered)
            server.clock.advance(601)
            #expect(
                try await Self.poll(client, registered, late["device_code"] as? String ?? "").errorCode
                    == "expired_token")
            let typedLate = try await Self.post(
                client, "/device", session,
                [("user_code", late["user_code"] as? String ?? ""), ("csrf_token", session.csrf)])
            #expect(typedLate.status == .badRequest && typedLate.text.contains("doesn’t match"))
            #expect(
                try await Self.poll(client, registered, "sesame_dc_nothing").errorCode == "invalid_grant")
        }
    }

    @Test(arguments: TestDatabase.all)
    func guessingUserCodesIsLimited(_ db: TestDatabase) async throws {
        var server = TestServer(db)
        server.rateLimits.perAccount = 3
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await IdP.register(server)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let started = try await Self.startDevice(client, registered)
            let userCode = try #require(started["user_code"] as? String)
            for guess in ["BCDF-GHJK", "BCDF-GHJL", "BCDF-GHJM"] where guess != userCode {
                let wrong = try await Self.post(
                    client, "/device", session, [("user_code", guess), ("csrf_token", session.csrf)])
                #expect(wrong.status == .badRequest && wrong.text.contains("doesn’t match"))
            }
            // Past the limit even the right code is refused until the window ends, on either form.
            for path in ["/device", "/device/approve"] {
                let blocked = try await Self.post(
                    client, path, session,
                    [("user_code", userCode), ("csrf_token", session.csrf), ("decision", "allow")])
                #expect(blocked.status == .badRequest)
                #expect(!blocked.text.contains("device-approve-form") && !blocked.text.contains("Device connected"))
            }
            #expect(
                try await Self.poll(client, registered, started["device_code"] as? String ?? "").errorCode
                    == "authorization_pending")
        }
    }
}
