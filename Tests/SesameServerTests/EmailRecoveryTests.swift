import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing

@testable import SesameCore
@testable import SesameEmail
@testable import SesameIdentityProvider
@testable import SesameServer

/// Recovery by email (docs/email.md, "Recovery by email"), on both engines: the code mailed to the verified address
/// opens a limited session that may only view the account and add a passkey (every other route refuses it with
/// `session_limited`; it is never a recent sign-in nor given to the identity provider), single use, 15 minutes, rate
/// limited, announced by mail and audit; unknown names get the same answer and no mail; off by default.
@Suite struct EmailRecoveryTests {
    static let native = HTTPField.Name("Sesame-Client")!

    static func server(_ db: TestDatabase, recovery: Bool = true) -> TestServer {
        var server = TestServer(db) {
            $0.email = .optional
            $0.emailRecovery = recovery
        }
        server.serviceClock = ManualClock()
        return server
    }

    func ask(_ client: some TestClientProtocol, _ identifier: String) async throws -> TestResponse {
        try await client.json("/api/recovery/email", .post, body: jsonString(["identifier": identifier]))
    }

    func verify(_ client: some TestClientProtocol, _ token: String, _ code: String) async throws -> TestResponse {
        try await client.json(
            "/api/recovery/email/verify", .post, body: jsonString(["recoveryToken": token, "code": code]),
            headers: [Self.native: "native", .userAgent: NewDeviceTests.agent])
    }

    static func code(in mail: OutgoingMail) -> String? {
        guard let range = mail.text.range(of: #"Your code: [0-9]{8}"#, options: .regularExpression) else { return nil }
        return String(mail.text[range].suffix(8))
    }

    static func wrong(_ code: String) -> String { code == "00000000" ? "00000001" : "00000000" }

    @Test(arguments: TestDatabase.all)
    func aCodeOpensALimitedSessionThatCanOnlyAddAPasskey(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        let user = try await server.seedUser("nia", password: "correct horse")
        try await AccountNoticeTests.verify(server, user)
        try await server.app().test(.router) { client in
            let asked = try await ask(client, "  NIA@example.net ")
            #expect(asked.status == .accepted, "\(asked.text)")
            let token = try #require(asked.object["recoveryToken"] as? String)
            let mails = try await EmailAddressTests.mails(server)
            #expect(mails.map(\.subject) == ["Your sign-in code for Sesame"])
            #expect(mails.first?.to == AccountNoticeTests.address)
            let code = try #require(mails.first.flatMap(Self.code))
            #expect(mails.first?.html?.contains(code) == true)

            let wrong = try await verify(client, token, Self.wrong(code))
            #expect(wrong.status == .unauthorized && wrong.errorCode == "invalid_recovery_code")
            #expect(try await verify(client, String(repeating: "A", count: 43), code).status == .unauthorized)

            let opened = try await verify(client, token, code)
            #expect(opened.status == .ok, "\(opened.text)")
            let session = SignedIn(cookie: "", csrf: "", token: opened.object["sessionToken"] as? String ?? "")
            // Single use.
            #expect(try await verify(client, token, code).errorCode == "invalid_recovery_code")
            // Announced by mail, with the device.
            let announced = try await EmailAddressTests.mails(server)
            #expect(announced.map(\.subject) == ["Your account was recovered by email on Sesame"])
            #expect(announced.first?.text.contains("Device: Chrome on Linux") == true)

            // What it may do.
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .ok)
            #expect(try await client.json("/api/account/passkeys", headers: session.bearerHeaders).status == .ok)
            // What it may not: every other route that needs a session, the sensitive ones included.
            let refused: [(String, HTTPRequest.Method, String?)] = [
                ("/api/account/email", .get, nil), ("/api/account/email", .put, #"{"address":"x@example.org"}"#),
                ("/api/account/password", .put, #"{"newPassword":"battery staple horse"}"#),
                ("/api/account/sessions", .get, nil), ("/api/account/sessions", .delete, nil),
                ("/api/account/export", .get, nil), ("/api/account/totp", .post, "{}"),
                ("/api/account/recovery-codes", .post, "{}"), ("/api/account", .patch, #"{"displayName":"X"}"#),
                ("/api/account/signals", .get, nil), ("/api/account/apps", .get, nil),
            ]
            for (path, method, body) in refused {
                let answer = try await client.json(path, method, body: body, headers: session.bearerHeaders)
                #expect(
                    answer.status == .forbidden && answer.errorCode == "session_limited",
                    "\(method) \(path): \(answer.status) \(answer.text)")
            }
            let sesameNone = try await server.withStore { store in
                try await store.sessions(userID: user.id, now: server.clock.now)
            }
            #expect(sesameNone.count == 1)
            let stored = try #require(sesameNone.first)
            #expect(stored.method == "email-code" && stored.limitation == "email_recovery")
            #expect(stored.expiresAt.timeIntervalSince(stored.createdAt) <= 15 * 60)

            // Adding a passkey: the options and the finish take the limited session, and the owner is told.
            let options = try await AddPasskeyFinishTests().options(client, session)
            #expect(options.status == .ok, "\(options.text)")
            let added = try await AddPasskeyFinishTests().finish(client, session, options)
            #expect(added.status == .created, "\(added.text)")
            #expect(
                try await EmailAddressTests.mails(server).map(\.subject) == [
                    "A passkey was added to your account on Sesame"
                ])
            // Signing out ends it.
            #expect(try await client.json("/api/session", .delete, headers: session.bearerHeaders).status == .ok)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .unauthorized)
        }
        let kinds = try await server.withStore { store in
            try await store.auditEvents(userID: user.id, limit: 100).map { "\($0.kind) \($0.outcome)" }
        }
        #expect(kinds.contains("email_recovery.requested success"))
        #expect(kinds.contains("email_recovery.signed_in failure"))
        #expect(kinds.contains("email_recovery.signed_in success"))
    }

    @Test(arguments: TestDatabase.all)
    func theLimitedSessionIsNeverASignInElsewhere(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        let user = try await server.seedUser("nia", password: "correct horse")
        try await AccountNoticeTests.verify(server, user)
        let app = try await server.app()
        try await app.test(.router) { client in
            let token = try #require(try await ask(client, "nia").object["recoveryToken"] as? String)
            let code = try #require(try await EmailAddressTests.mails(server).first.flatMap(Self.code))
            let opened = try await verify(client, token, code)
            let bearer = try #require(opened.object["sessionToken"] as? String)
            // The issuer gives it to no one but the session middleware.
            try await server.withStore { store async throws in
                let issuer = SessionIssuer(
                    store: store, clock: ServerClock(now: { server.clock.now }), cookies: Cookies(server.configuration),
                    serverSecret: [1], lifetime: 3600)
                #expect(try await issuer.authenticate(token: bearer, carrier: .cookie) == nil)
                #expect(
                    try await issuer.authenticate(token: bearer, carrier: .cookie, allowingLimited: true)?.limitation
                        == .emailRecovery)
            }
            // Re-authentication routes refuse it too.
            let reauth = try await client.json(
                "/api/session/reauthenticate/options", .post, body: "{}", headers: [.authorization: "Bearer \(bearer)"])
            #expect(reauth.status == .forbidden && reauth.errorCode == "session_limited", "\(reauth.text)")
            #expect(
                IDTokenClaims.amr("email-code", factors: Vocabulary.server.factors).isEmpty
                    && IDTokenClaims.acr("email-code") == nil)
            #expect(SessionMethod.emailCode.isMultiFactor == false)
        }
    }

    @Test(arguments: TestDatabase.all)
    func unknownNamesGetTheSameAnswerAndNoMail(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("ola", password: "correct horse")  // no address
        let pending = try await server.seedUser("pia", password: "correct horse")
        try await server.withStore { store in
            try await store.db.raw(
                """
                INSERT INTO email_addresses (user_id, pending, pending_key, pending_expires_at, updated_at)
                VALUES (\(bind: pending.id), 'pia@example.net', 'pia@example.net',
                    \(bind: server.clock.now.addingTimeInterval(600).milliseconds), \(bind: server.clock.now.milliseconds))
                """
            ).run()
        }
        try await server.app().test(.router) { client in
            // A NUL or another control character is no one's name (PostgreSQL refuses a NUL in a bind).
            for name in ["nobody", "nobody@example.net", "ola", "pia", "pia@example.net", "ola\u{0}", "o\u{1}la"] {
                let asked = try await ask(client, name)
                #expect(asked.status == .accepted, "\(name): \(asked.text)")
                #expect(Set(asked.object.keys) == ["status", "recoveryToken", "expiresAt"])
                #expect((asked.object["recoveryToken"] as? String)?.utf8.count == 43)
                let token = asked.object["recoveryToken"] as? String ?? ""
                for code in ["00000000", "12345678"] {
                    #expect(try await verify(client, token, code).errorCode == "invalid_recovery_code")
                }
            }
            try await AccountNoticeTests.expectNone(server)
            let empty = try await client.json("/api/recovery/email", .post, body: #"{"identifier":" "}"#)
            #expect(empty.status == .badRequest)
        }
    }

    @Test(arguments: TestDatabase.all)
    func codesExpireAndGuessesAreLimited(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        let user = try await server.seedUser("nia", password: "correct horse")
        try await AccountNoticeTests.verify(server, user)
        try await server.app().test(.router) { client in
            let token = try #require(try await ask(client, "nia").object["recoveryToken"] as? String)
            let code = try #require(try await EmailAddressTests.mails(server).first.flatMap(Self.code))
            server.clock.advance(15 * 60 + 1)
            #expect(try await verify(client, token, code).errorCode == "invalid_recovery_code")

            let fresh = try #require(try await ask(client, "nia").object["recoveryToken"] as? String)
            let freshCode = try #require(try await EmailAddressTests.mails(server).first.flatMap(Self.code))
            var limited = false
            for _ in 0..<30 where !limited {
                limited = try await verify(client, fresh, Self.wrong(freshCode)).status == .tooManyRequests
            }
            #expect(limited)
            // Past the limit even the right code is refused.
            #expect(try await verify(client, fresh, freshCode).status == .tooManyRequests)
        }
    }

    @Test(arguments: TestDatabase.all)
    func offByDefault(_ db: TestDatabase) async throws {
        let server = Self.server(db, recovery: false)
        try await server.app().test(.router) { client in
            let asked = try await ask(client, "nia")
            #expect(asked.status == .notFound && asked.errorCode == "email_recovery_not_enabled")
            #expect(
                try await client.execute(uri: "/recover", method: .get, headers: [:], body: nil).status == .notFound)
        }
        #expect(ServerConfiguration().emailRecovery == false)
        #expect(throws: ConfigurationError.self) {
            var c = ServerConfiguration()
            c.emailRecovery = true
            try ServerConfiguration.validateEmail(c)
        }
    }
}
