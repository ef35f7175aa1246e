import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OneTimeCode
import Testing

@testable import SesameServer
@testable import SesameCore

@Suite struct SecondFactorTests {
    /// Sets up TOTP for a signed-in client and returns the TOTP generator.
    func enableTOTP(_ client: some TestClientProtocol, _ session: SignedIn, server: TestServer) async throws -> TOTP {
        let setup = try await client.json("/api/account/totp", .post, headers: session.bearerHeaders)
        #expect(setup.status == .created)
        let secret = try OTPSecret(base32: try #require(setup.object["secret"] as? String))
        let uri = try #require(setup.object["otpauthURI"] as? String)
        #expect(uri.hasPrefix("otpauth://totp/Sesame:"))
        #expect(try OTPKeyURI(parsing: uri).secret == secret)
        #expect((setup.object["appleOtpauthURI"] as? String)?.hasPrefix("apple-otpauth://totp/localhost:") == true)

        let qr = try await client.json("/api/account/totp/qr.png", headers: session.bearerHeaders)
        #expect(qr.status == .ok)
        #expect(qr.headers[.contentType] == "image/png")
        #expect(Array(qr.body.readableBytesView.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

        let totp = try TOTP(secret: secret)
        let right = try totp.code(at: server.clock.now)
        let wrongCode = right == "000000" ? "000001" : "000000"
        let wrong = try await client.json(
            "/api/account/totp/confirm", .post, body: jsonString(["code": wrongCode]), headers: session.bearerHeaders)
        #expect(wrong.status == .unauthorized)
        let confirm = try await client.json(
            "/api/account/totp/confirm", .post, body: jsonString(["code": try totp.code(at: server.clock.now)]),
            headers: session.bearerHeaders
        )
        #expect(confirm.status == .ok, "\(confirm.text)")
        // The secret is not shown again once confirmed.
        #expect(try await client.json("/api/account/totp/qr.png", headers: session.bearerHeaders).status == .notFound)
        #expect(try await client.json("/api/account/totp", .post, headers: session.bearerHeaders).status == .conflict)
        return totp
    }

    func pendingStep(_ client: some TestClientProtocol, _ username: String, _ password: String) async throws -> (
        token: String, factors: [String]
    ) {
        let r = try await client.json(
            "/api/sessions/password", .post, body: jsonString(["username": username, "password": password]))
        #expect(r.object["status"] as? String == "second_factor_required")
        return (r.object["pendingToken"] as? String ?? "", r.object["factors"] as? [String] ?? [])
    }

    @Test(arguments: TestDatabase.all)
    func passwordPlusTOTPWithReplayRefused(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("sam", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "sam", "correct horse")
            let totp = try await enableTOTP(client, session, server: server)
            let usedCode = try totp.code(at: server.clock.now)

            let pending = try await pendingStep(client, "sam", "correct horse")
            #expect(pending.factors == ["totp"])
            // The code that confirmed setup is spent: replay refused.
            let replay = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "totp", "code": usedCode, "pendingToken": pending.token])
            )
            #expect(replay.status == .unauthorized)
            #expect(replay.errorCode == "invalid_code")

            server.clock.advance(30)
            let next = try totp.code(at: server.clock.now)
            let ok = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "totp", "code": next, "pendingToken": pending.token])
            )
            #expect(ok.status == .ok, "\(ok.text)")
            #expect(ok.object["status"] as? String == "signed_in")
            #expect(ok.cookie(named: "sesame_session") != nil)
            // The pending step is spent too.
            server.clock.advance(30)
            let again = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString([
                    "factor": "totp", "code": try totp.code(at: server.clock.now), "pendingToken": pending.token,
                ])
            )
            #expect(again.status == .badRequest)
            #expect(again.errorCode == "challenge_invalid")

            // Disabling TOTP makes password alone enough again.
            #expect(try await client.json("/api/account/totp", .delete, headers: session.bearerHeaders).status == .ok)
            let plain = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"sam","password":"correct horse"}"#)
            #expect(plain.object["status"] as? String == "signed_in")
        }
    }

    @Test(arguments: TestDatabase.all)
    func recoveryCodesAreShownOnceAndWorkOnce(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("tina", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "tina", "correct horse")
            _ = try await enableTOTP(client, session, server: server)
            let generated = try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders)
            #expect(generated.status == .created)
            let codes = generated.object["codes"] as? [String] ?? []
            #expect(codes.count == 10)

            let pending = try await pendingStep(client, "tina", "correct horse")
            #expect(pending.factors == ["totp", "recovery"])
            // Lower case and without dashes is the same code.
            let typed = codes[0].replacingOccurrences(of: "-", with: "").lowercased()
            let ok = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "recovery", "code": typed, "pendingToken": pending.token])
            )
            #expect(ok.status == .ok, "\(ok.text)")

            let second = try await pendingStep(client, "tina", "correct horse")
            let reused = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "recovery", "code": codes[0], "pendingToken": second.token])
            )
            #expect(reused.status == .unauthorized)
            let account = try await client.json("/api/account", headers: session.bearerHeaders)
            #expect(account.object["recoveryCodesRemaining"] as? Int == 9)

            // Regenerating replaces the whole set.
            _ = try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders)
            let old = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "recovery", "code": codes[1], "pendingToken": second.token])
            )
            #expect(old.status == .unauthorized)
        }
    }

    @Test(arguments: TestDatabase.all)
    func smsCodesAreOriginBoundSingleUseAndLimited(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("uma", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "uma", "correct horse")
            let bad = try await client.json(
                "/api/account/sms", .put, body: #"{"phone":"555-1234"}"#, headers: session.bearerHeaders)
            #expect(bad.status == .badRequest)
            let add = try await client.json(
                "/api/account/sms", .put, body: #"{"phone":"+15551234567"}"#, headers: session.bearerHeaders)
            #expect(add.status == .accepted)
            let message = try #require(server.sms.all.last)
            #expect(message.phone == "+15551234567")
            let bound = try OriginBoundMessage(parsing: message.message)
            #expect(bound.topLevelHost == "localhost")
            let confirm = try await client.json(
                "/api/account/sms/confirm", .post, body: jsonString(["code": bound.code]),
                headers: session.bearerHeaders)
            #expect(confirm.status == .ok, "\(confirm.text)")

            let pending = try await pendingStep(client, "uma", "correct horse")
            #expect(pending.factors == ["sms"])
            let send = try await client.json(
                "/api/sessions/second-factor/sms", .post, body: jsonString(["pendingToken": pending.token]))
            #expect(send.status == .accepted)
            let code = try OriginBoundMessage(parsing: try #require(server.sms.all.last).message).code
            let wrong = code == "000000" ? "000001" : "000000"
            let rejected = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "sms", "code": wrong, "pendingToken": pending.token])
            )
            #expect(rejected.status == .unauthorized)
            let ok = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "sms", "code": code, "pendingToken": pending.token])
            )
            #expect(ok.status == .ok, "\(ok.text)")

            // Five wrong codes lock the factor for this account.
            let next = try await pendingStep(client, "uma", "correct horse")
            _ = try await client.json(
                "/api/sessions/second-factor/sms", .post, body: jsonString(["pendingToken": next.token]))
            let fresh = try OriginBoundMessage(parsing: try #require(server.sms.all.last).message).code
            let other = fresh == "123456" ? "654321" : "123456"
            for _ in 0..<5 {
                let r = try await client.json(
                    "/api/sessions/second-factor", .post,
                    body: jsonString(["factor": "sms", "code": other, "pendingToken": next.token])
                )
                #expect(r.status == .unauthorized)
            }
            let locked = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "sms", "code": fresh, "pendingToken": next.token])
            )
            #expect(locked.status == .tooManyRequests)
            #expect(locked.headers[.retryAfter] != nil)
        }
    }

    @Test(arguments: TestDatabase.all)
    func pendingStepsExpireAndMustBeGenuine(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("vic", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "vic", "correct horse")
            let totp = try await enableTOTP(client, session, server: server)
            let forged = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString([
                    "factor": "totp", "code": "123456", "pendingToken": String(repeating: "A", count: 43),
                ])
            )
            #expect(forged.status == .badRequest)
            #expect(forged.errorCode == "challenge_invalid")
            let pending = try await pendingStep(client, "vic", "correct horse")
            server.clock.advance(301)
            let late = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString([
                    "factor": "totp", "code": try totp.code(at: server.clock.now), "pendingToken": pending.token,
                ])
            )
            #expect(late.status == .badRequest)
            let unknownFactor = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "carrier-pigeon", "code": "1", "pendingToken": pending.token])
            )
            #expect(unknownFactor.status == .badRequest)
        }
    }

    /// The pending cookie works for pages that do not keep the token.
    @Test func pendingCookieIsAcceptedInsteadOfTheToken() async throws {
        let server = TestServer(.sqlite)
        try await server.seedUser("wes", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "wes", "correct horse")
            let totp = try await enableTOTP(client, session, server: server)
            let r = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"wes","password":"correct horse"}"#)
            let cookie = try #require(r.cookie(named: "sesame_pending"))
            #expect(r.headers[.setCookie]?.contains("HttpOnly") == true)
            server.clock.advance(30)
            let ok = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "totp", "code": try totp.code(at: server.clock.now)]),
                headers: [.cookie: cookie]
            )
            #expect(ok.status == .ok, "\(ok.text)")
        }
    }
}
