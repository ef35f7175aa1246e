import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OneTimeCode
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameCore

/// Sensitive account changes need a recent sign-in or re-authentication (`reauthenticationWindow`).
@Suite struct ReauthenticationTests {
    static let window: TimeInterval = 600

    func expectReauthenticationRequired(_ response: TestResponse, _ what: String) {
        #expect(response.status == .forbidden, "\(what): \(response.status) \(response.text)")
        #expect(response.errorCode == "reauthentication_required", "\(what)")
        #expect(response.object["reauthenticate"] as? String == "/api/session/reauthenticate")
        #expect(response.object["reauthenticateOptions"] as? String == "/api/session/reauthenticate/options")
        #expect(response.object["maxAgeSeconds"] as? String == "600")
    }

    /// Every sensitive change is refused once the window has passed, and changes nothing.
    @Test(arguments: TestDatabase.all)
    func staleSessionsAreRefusedSensitiveChanges(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("stale", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "stale", "correct horse")
            #expect(
                try await client.json("/api/account/totp", .post, headers: session.bearerHeaders).status == .created)
            server.clock.advance(Self.window + 1)
            let h = session.bearerHeaders
            let attempts: [(String, HTTPRequest.Method, String?)] = [
                (
                    "/api/account/password", .put,
                    jsonString(["currentPassword": "correct horse", "newPassword": "new password 1"])
                ),
                ("/api/account/password", .delete, nil),
                ("/api/account/totp", .delete, nil),
                ("/api/account/sms", .put, jsonString(["phone": "+15555550100"])),
                ("/api/account/sms", .delete, nil),
                ("/api/account/recovery-codes", .post, nil),
                ("/api/account/passkeys/AAAA", .delete, nil),
                ("/api/account/passkeys/options", .post, nil),
            ]
            for (path, method, body) in attempts {
                expectReauthenticationRequired(
                    try await client.json(path, method, body: body, headers: h), "\(method) \(path)")
            }
            // Reading and signing out need no re-authentication.
            #expect(try await client.json("/api/account", headers: h).status == .ok)
            // Nothing changed: the old password still works, TOTP is still there.
            _ = try await signInWithPassword(client, "stale", "correct horse")
            #expect(try await server.withStore { try await $0.totp(userID: user.id) } != nil)
            #expect(try await server.withStore { try await $0.recoveryCodes(userID: user.id) } == nil)
        }
    }

    /// Password re-authentication refreshes the session (same token) and the change goes through.
    @Test(arguments: TestDatabase.all)
    func passwordReauthenticationAllowsTheChange(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("pat", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "pat", "correct horse")
            server.clock.advance(Self.window + 1)
            expectReauthenticationRequired(
                try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders), "stale")

            let wrong = try await client.json(
                "/api/session/reauthenticate", .post, body: jsonString(["password": "wrong horse"]),
                headers: session.bearerHeaders
            )
            #expect(wrong.status == .forbidden)
            #expect(wrong.errorCode == "wrong_password")
            expectReauthenticationRequired(
                try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders),
                "after wrong")

            let ok = try await client.json(
                "/api/session/reauthenticate", .post, body: jsonString(["password": "correct horse"]),
                headers: session.bearerHeaders
            )
            #expect(ok.status == .ok, "\(ok.text)")
            #expect(ok.object["status"] as? String == "reauthenticated")
            #expect(ok.object["method"] as? String == "password")
            #expect(ok.object["maxAgeSeconds"] as? Int == 600)
            #expect(
                try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders).status
                    == .created)

            // Cookie sessions re-authenticate the same way (CSRF token required, as for every write).
            let cookieSession = try await signInWithPassword(client, "pat", "correct horse")
            server.clock.advance(Self.window + 1)
            let noCSRF = try await client.json(
                "/api/session/reauthenticate", .post, body: jsonString(["password": "correct horse"]),
                headers: [.cookie: cookieSession.cookie]
            )
            #expect(noCSRF.status == .forbidden)
            #expect(noCSRF.errorCode == "csrf_check_failed")
            let viaCookie = try await client.json(
                "/api/session/reauthenticate", .post, body: jsonString(["password": "correct horse"]),
                headers: cookieSession.cookieHeaders
            )
            #expect(viaCookie.status == .ok)
            #expect(
                try await client.json("/api/account/recovery-codes", .post, headers: cookieSession.cookieHeaders).status
                    == .created)

            // The refresh lasts one window.
            server.clock.advance(Self.window + 1)
            expectReauthenticationRequired(
                try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders),
                "expired again")
        }
    }

    /// An account with TOTP needs the password and a code; the password alone is not enough.
    @Test(arguments: TestDatabase.all)
    func passwordReauthenticationNeedsTheSecondFactor(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("tia", password: "correct horse")
        try await server.app().test(.router) { client in
            let first = try await signInWithPassword(client, "tia", "correct horse")
            let totp = try await SecondFactorTests().enableTOTP(client, first, server: server)
            server.clock.advance(30)
            let pending = try await SecondFactorTests().pendingStep(client, "tia", "correct horse")
            let signedIn = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString([
                    "factor": "totp", "code": try totp.code(at: server.clock.now), "pendingToken": pending.token,
                ])
            )
            let session = SignedIn(cookie: "", csrf: "", token: signedIn.object["sessionToken"] as? String ?? "")
            server.clock.advance(Self.window + 1)
            expectReauthenticationRequired(
                try await client.json("/api/account/totp", .delete, headers: session.bearerHeaders), "stale")

            let passwordOnly = try await client.json(
                "/api/session/reauthenticate", .post, body: jsonString(["password": "correct horse"]),
                headers: session.bearerHeaders
            )
            #expect(passwordOnly.status == .forbidden)
            #expect(passwordOnly.errorCode == "second_factor_required")
            #expect(passwordOnly.object["factors"] as? String == "totp")
            expectReauthenticationRequired(
                try await client.json("/api/account/totp", .delete, headers: session.bearerHeaders), "password only")

            let wrongCode = try await client.json(
                "/api/session/reauthenticate", .post,
                body: jsonString([
                    "password": "correct horse", "factor": "totp",
                    "code": "000000" == (try totp.code(at: server.clock.now)) ? "111111" : "000000",
                ]),
                headers: session.bearerHeaders
            )
            #expect(wrongCode.status == .unauthorized)
            #expect(wrongCode.errorCode == "invalid_code")

            let ok = try await client.json(
                "/api/session/reauthenticate", .post,
                body: jsonString([
                    "password": "correct horse", "factor": "totp", "code": try totp.code(at: server.clock.now),
                ]),
                headers: session.bearerHeaders
            )
            #expect(ok.status == .ok, "\(ok.text)")
            #expect(ok.object["method"] as? String == "password+totp")
            #expect(try await client.json("/api/account/totp", .delete, headers: session.bearerHeaders).status == .ok)
        }
    }

    /// Password + SMS re-authentication: the code is sent by the second factors' own route and bound to the session
    /// that asked for it. A code sent for a pending sign-in does not re-authenticate a session, a code sent for one
    /// session does not re-authenticate another, and a code works once.
    @Test(arguments: TestDatabase.all)
    func smsReauthenticationTakesOnlyACodeSentForThisSession(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ula", password: "correct horse")
        try await server.app().test(.router) { client in
            let first = try await signInWithPassword(client, "ula", "correct horse")
            _ = try await client.json(
                "/api/account/sms", .put, body: #"{"phone":"+15551230000"}"#, headers: first.bearerHeaders)
            let setup = try OriginBoundMessage(parsing: try #require(server.sms.all.last).message).code
            let confirm = try await client.json(
                "/api/account/sms/confirm", .post, body: jsonString(["code": setup]), headers: first.bearerHeaders)
            #expect(confirm.status == .ok, "\(confirm.text)")
            func lastCode() throws -> String {
                try OriginBoundMessage(parsing: try #require(server.sms.all.last).message).code
            }
            func signIn() async throws -> SignedIn {
                let pending = try await SecondFactorTests().pendingStep(client, "ula", "correct horse")
                _ = try await client.json(
                    "/api/sessions/second-factor/sms", .post, body: jsonString(["pendingToken": pending.token]))
                let done = try await client.json(
                    "/api/sessions/second-factor", .post,
                    body: jsonString(["factor": "sms", "code": try lastCode(), "pendingToken": pending.token]))
                #expect(done.status == .ok, "\(done.text)")
                return SignedIn(cookie: "", csrf: "", token: done.object["sessionToken"] as? String ?? "")
            }
            let session = try await signIn()
            let other = first  // signed in before the phone was set
            server.clock.advance(Self.window + 1)
            func reauthenticate(_ who: SignedIn, _ code: String) async throws -> TestResponse {
                try await client.json(
                    "/api/session/reauthenticate", .post,
                    body: jsonString(["password": "correct horse", "factor": "sms", "code": code]),
                    headers: who.bearerHeaders)
            }

            // A code sent for a pending sign-in is not this session's.
            let pending = try await SecondFactorTests().pendingStep(client, "ula", "correct horse")
            _ = try await client.json(
                "/api/sessions/second-factor/sms", .post, body: jsonString(["pendingToken": pending.token]))
            let signInCode = try lastCode()
            #expect(try await reauthenticate(session, signInCode).status == .unauthorized)

            // A code sent for the other session is not this one's.
            let sentForOther = try await client.json(
                "/api/session/reauthenticate/sms", .post, headers: other.bearerHeaders)
            #expect(sentForOther.status == .accepted, "\(sentForOther.text)")
            #expect(sentForOther.object["status"] as? String == "code_sent")
            #expect(try await reauthenticate(session, try lastCode()).errorCode == "invalid_code")

            // This session's own code works, once.
            let sent = try await client.json("/api/session/reauthenticate/sms", .post, headers: session.bearerHeaders)
            #expect(sent.status == .accepted)
            let code = try lastCode()
            let ok = try await reauthenticate(session, code)
            #expect(ok.status == .ok, "\(ok.text)")
            #expect(ok.object["method"] as? String == "password+sms")
            #expect(try await reauthenticate(session, code).errorCode == "invalid_code")
            #expect(try await client.json("/api/account/sms", .delete, headers: session.bearerHeaders).status == .ok)
            // Signed out, the route sends nothing.
            let count = server.sms.all.count
            #expect(try await client.json("/api/session/reauthenticate/sms", .post).status == .unauthorized)
            #expect(server.sms.all.count == count)
        }
    }

    /// A fresh passkey assertion, bound to this session and from this account's passkey, refreshes it.
    @Test(arguments: TestDatabase.all)
    func passkeyReauthenticationAllowsTheChange(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let va = VirtualAuthenticator()
        let other = VirtualAuthenticator()
        let journeys = PasskeyJourneyTests()
        try await server.app().test(.router) { client in
            let created = try await journeys.signUp(client, va, "pia")
            #expect(created.status == .created)
            let session = SignedIn(cookie: "", csrf: "", token: created.object["sessionToken"] as? String ?? "")
            let otherCreated = try await journeys.signUp(client, other, "oli")
            let otherSession = SignedIn(
                cookie: "", csrf: "", token: otherCreated.object["sessionToken"] as? String ?? "")
            server.clock.advance(Self.window + 1)
            expectReauthenticationRequired(
                try await client.json("/api/account/passkeys/options", .post, headers: session.bearerHeaders), "stale")

            // Another account's passkey does not re-authenticate this session.
            let options1 = try await client.json(
                "/api/session/reauthenticate/options", .post, headers: session.bearerHeaders)
            #expect(options1.status == .ok)
            let allowed = (options1.object["allowCredentials"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(allowed == [Base64URL.encode(va.credentials[0].id)])
            // (The other authenticator answers the same challenge as if the allow list were empty.)
            var unrestricted = try #require(
                try JSONSerialization.jsonObject(with: Data(options1.body.readableBytesView)) as? [String: Any])
            unrestricted["allowCredentials"] = nil
            let foreign = try other.get(
                optionsJSON: Array(try JSONSerialization.data(withJSONObject: unrestricted)),
                origin: PasskeyJourneyTests.origin)
            let refused = try await client.json(
                "/api/session/reauthenticate", .post, body: journeys.credentialBody(foreign.json),
                headers: session.bearerHeaders
            )
            #expect(refused.status == .badRequest)
            expectReauthenticationRequired(
                try await client.json("/api/account/passkeys/options", .post, headers: session.bearerHeaders), "foreign"
            )

            // Options are bound to the session that asked: another session cannot finish with them.
            let options2 = try await client.json(
                "/api/session/reauthenticate/options", .post, headers: session.bearerHeaders)
            let assertion = try va.get(
                optionsJSON: Array(options2.body.readableBytesView), origin: PasskeyJourneyTests.origin)
            let wrongSession = try await client.json(
                "/api/session/reauthenticate", .post, body: journeys.credentialBody(assertion.json),
                headers: otherSession.bearerHeaders
            )
            #expect(wrongSession.status == .badRequest)
            #expect(wrongSession.errorCode == "challenge_invalid")

            let options3 = try await client.json(
                "/api/session/reauthenticate/options", .post, headers: session.bearerHeaders)
            let good = try va.get(
                optionsJSON: Array(options3.body.readableBytesView), origin: PasskeyJourneyTests.origin)
            let ok = try await client.json(
                "/api/session/reauthenticate", .post, body: journeys.credentialBody(good.json),
                headers: session.bearerHeaders)
            #expect(ok.status == .ok, "\(ok.text)")
            #expect(ok.object["method"] as? String == "passkey")
            #expect(
                try await client.json("/api/account/passkeys/options", .post, headers: session.bearerHeaders).status
                    == .ok)
            // The same assertion cannot be replayed (single-use challenge).
            let replay = try await client.json(
                "/api/session/reauthenticate", .post, body: journeys.credentialBody(good.json),
                headers: session.bearerHeaders)
            #expect(replay.errorCode == "challenge_invalid")
        }
    }

    /// Signed out: 401, not 403.
    @Test func reauthenticationNeedsASession() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let options = try await client.json("/api/session/reauthenticate/options", .post)
            #expect(options.status == .unauthorized)
            let finish = try await client.json("/api/session/reauthenticate", .post, body: #"{"password":"x"}"#)
            #expect(finish.status == .unauthorized)
        }
    }

    /// The window is a setting.
    @Test func theWindowIsConfigurable() async throws {
        let server = TestServer(.sqlite) { $0.reauthenticationWindow = 60 }
        try await server.seedUser("win", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "win", "correct horse")
            server.clock.advance(59)
            #expect(
                try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders).status
                    == .created)
            server.clock.advance(2)
            let stale = try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders)
            #expect(stale.errorCode == "reauthentication_required")
            #expect(stale.object["maxAgeSeconds"] as? String == "60")
        }
    }
}
