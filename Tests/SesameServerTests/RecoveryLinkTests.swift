import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesameEmail
@testable import SesameServer

/// Recovery links (docs/console.md, "Recovery links") on both engines: an admin makes a single-use link for a person,
/// mailed to the verified address through the outbox in the link's transaction or shown once; the link opens a
/// limited session that may only add a passkey, works once, expires, and wrong tries are rate limited; making and
/// using are audited; the command line makes the same links.
@Suite struct RecoveryLinkTests {
    static func server(_ db: TestDatabase) -> TestServer {
        var server = TestServer(db) { $0.email = .optional }
        server.serviceClock = ManualClock()
        return server
    }

    static func token(in link: String) -> String? {
        link.range(of: "/recover/link#").map { String(link[$0.upperBound...]) }
    }

    func use(_ client: some TestClientProtocol, _ token: String) async throws -> TestResponse {
        try await client.json(
            "/api/recovery/link", .post, body: jsonString(["token": token]),
            headers: [.userAgent: NewDeviceTests.agent])
    }

    func make(_ client: some TestClientProtocol, _ admin: SignedIn, _ person: String, _ deliver: String) async throws
        -> TestResponse
    {
        try await client.json(
            "/api/admin/people/\(person)/recovery-link", .post, body: jsonString(["deliver": deliver]),
            headers: admin.bearerHeaders)
    }

    @Test(arguments: TestDatabase.all)
    func aShownLinkOpensALimitedSessionOnceThatCanOnlyAddAPasskey(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        let nia = try await server.seedUser("nia", password: "correct horse")
        try await server.app().test(.router) { client in
            let (admin, _) = try await signUpWithPasskey(client, "ada")
            // Not an admin yet: refused.
            #expect(try await make(client, admin, nia.id, "show").errorCode == "not_an_admin")
            try await ConsoleOverviewTests.makeAdmin(server, "ada")
            #expect(try await make(client, admin, nia.id, "fax").errorCode == "bad_request")
            #expect(try await make(client, admin, "nobody", "show").status == .notFound)
            let made = try await make(client, admin, "NIA", "show")
            #expect(made.status == .created, "\(made.text)")
            #expect(made.object["userId"] as? String == nia.id && made.object["address"] == nil)
            let link = try #require(made.object["link"] as? String)
            #expect(link.hasPrefix("http://localhost:8080/recover/link#"))
            let token = try #require(Self.token(in: link))
            // Only the secret's hash is stored.
            let stored = try await server.withStore { store in
                try await store.recoveryLink(id: try #require(made.object["id"] as? String))
            }
            let secret = String(token.split(separator: ".")[1])
            #expect(stored?.secretHash == Secrets.sha256(secret) && stored?.delivery == "show")
            // Nothing is mailed for a shown link.
            #expect(try await EmailAddressTests.mails(server).isEmpty)

            let opened = try await use(client, token)
            #expect(opened.status == .ok, "\(opened.text)")
            let session = SignedIn(cookie: "", csrf: "", token: opened.object["sessionToken"] as? String ?? "")
            // Single use.
            #expect(try await use(client, token).errorCode == "invalid_recovery_link")

            let sessions = try await server.withStore { try await $0.sessions(userID: nia.id, now: server.clock.now) }
            #expect(sessions.map(\.method) == ["recovery-link"])
            #expect(sessions.map(\.limitation) == ["email_recovery"])
            // What it may do: view the account, add a passkey.
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .ok)
            // What it may not.
            for (path, method, body) in [
                ("/api/account/sessions", HTTPRequest.Method.get, nil as String?),
                ("/api/account/password", .put, #"{"newPassword":"battery staple horse"}"#),
                ("/api/account/export", .get, nil), ("/api/admin/overview", .get, nil),
            ] {
                let answer = try await client.json(path, method, body: body, headers: session.bearerHeaders)
                #expect(answer.errorCode == "session_limited", "\(method) \(path): \(answer.text)")
            }
            let options = try await AddPasskeyFinishTests().options(client, session)
            #expect(options.status == .ok, "\(options.text)")
            #expect(try await AddPasskeyFinishTests().finish(client, session, options).status == .created)
        }
        let events = try await server.withStore { try await $0.auditEvents(userID: nia.id, limit: 50) }
        let created = try #require(events.first { $0.kind == "recovery_link.created" })
        #expect(created.detail.hasPrefix("show ") && created.detail.hasSuffix(" by admin ada"))
        #expect(events.contains { $0.kind == "recovery_link.used" && $0.outcome == "success" })
        #expect(events.contains { $0.kind == "recovery_link.used" && $0.outcome == "failure" })
    }

    @Test(arguments: TestDatabase.all)
    func aMailedLinkGoesThroughTheOutboxWithTheLink(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        let nia = try await server.seedUser("nia")
        let bob = try await server.seedUser("bob")
        try await AccountNoticeTests.verify(server, nia)
        try await server.app().test(.router) { client in
            let (admin, _) = try await signUpWithPasskey(client, "ada")
            try await ConsoleOverviewTests.makeAdmin(server, "ada")
            // No verified address: refused, and nothing is written.
            let refused = try await make(client, admin, bob.id, "mail")
            #expect(refused.status == .conflict && refused.errorCode == "recovery_link_no_address")
            let made = try await make(client, admin, nia.id, "mail")
            #expect(made.status == .created, "\(made.text)")
            #expect(made.object["link"] == nil && made.object["address"] as? String == AccountNoticeTests.address)
            let mails = try await EmailAddressTests.mails(server)
            #expect(mails.map(\.to) == [AccountNoticeTests.address])
            let mail = try #require(mails.first)
            let token = try #require(
                mail.text.range(of: #"/recover/link#[0-9a-f]{16}\.[A-Za-z0-9_-]{43}"#, options: .regularExpression)
                    .map { String(mail.text[$0].dropFirst("/recover/link#".count)) })
            #expect(try await use(client, token).status == .ok)
            // The person is told their account was opened with it.
            #expect(
                try await EmailAddressTests.mails(server).map(\.subject).contains {
                    $0.contains("recovery link was used")
                })
        }
        let kinds = try await server.withStore { try await $0.auditEvents(userID: bob.id, limit: 10).map(\.kind) }
        #expect(!kinds.contains("recovery_link.created"))
    }

    @Test(arguments: TestDatabase.all)
    func aNewLinkEndsTheOldWrongTriesAreLimitedAndLinksExpire(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        let nia = try await server.seedUser("nia")
        try await server.app().test(.router) { client in
            let (admin, _) = try await signUpWithPasskey(client, "ada")
            try await ConsoleOverviewTests.makeAdmin(server, "ada")
            func link() async throws -> String {
                let made = try await make(client, admin, nia.id, "show")
                return try #require(Self.token(in: made.object["link"] as? String ?? ""), "\(made.text)")
            }
            // A new link ends the unused one.
            let first = try await link()
            let second = try await link()
            #expect(try await use(client, first).errorCode == "invalid_recovery_link")
            // Wrong secrets for a link count against it: after five, even the right one waits.
            let id = String(second.split(separator: ".")[0])
            for _ in 0..<5 {
                let wrong = "\(id).\(Base64URL.encode(Secrets.random(32)))"
                #expect(try await use(client, wrong).errorCode == "invalid_recovery_link")
            }
            let limited = try await use(client, second)
            #expect(limited.status == .tooManyRequests, "\(limited.text)")
            #expect(try await use(client, "not a token").errorCode == "invalid_recovery_link")
            // Expired after recoveryLinkHours (24 by default).
            let third = try await link()
            server.clock.advance(24 * 3600 + 1)
            #expect(try await use(client, third).errorCode == "invalid_recovery_link")
        }
    }

    @Test(arguments: TestDatabase.all)
    func theCommandLineMakesTheSameLinks(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        let nia = try await server.seedUser("nia")
        let made = try await server.withStore { store in
            try await RecoveryLinkMaker(
                store: store, configuration: server.configuration, clock: server.clock.serverClock
            )
            .make(for: "nia", deliver: .show, by: .commandLine)
        }
        let token = try #require(made.link.flatMap(Self.token))
        try await server.app().test(.router) { client in
            let opened = try await use(client, token)
            #expect(opened.status == .ok, "\(opened.text)")
        }
        let created = try await server.withStore { try await $0.auditEvents(userID: nia.id, limit: 10) }
            .first { $0.kind == "recovery_link.created" }
        #expect(created?.clientAddress == "cli")
    }
}
