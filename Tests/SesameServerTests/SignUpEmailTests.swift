import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing
import VirtualAuthenticator

@testable import SesameCore
@testable import SesameEmail
@testable import SesamePasskeys
@testable import SesameServer

/// An address at sign-up (docs/email.md, "At sign-up"), on both engines: `required` refuses a sign-up without one or
/// with a bad one before any passkey is made; the account is made with the address pending and its verification mail
/// in one transaction (a failed transaction leaves neither); `optional` takes one or none; `off` ignores it; another
/// account's verified address gets its holder the notice and the sign-up the same answer.
@Suite struct SignUpEmailTests {
    func options(_ client: some TestClientProtocol, _ username: String, email: String?) async throws -> TestResponse {
        var body: [String: Any] = ["username": username, "displayName": username.capitalized]
        if let email { body["email"] = email }
        return try await client.json("/api/registration/options", .post, body: jsonString(body))
    }

    func signUp(_ client: some TestClientProtocol, _ va: VirtualAuthenticator, _ username: String, email: String?)
        async throws -> TestResponse
    {
        let started = try await options(client, username, email: email)
        #expect(started.status == .ok, "\(started.text)")
        let created = try va.create(
            optionsJSON: Array(started.body.readableBytesView), origin: PasskeyJourneyTests.origin)
        return try await client.json(
            "/api/registration", .post, body: PasskeyJourneyTests().credentialBody(created.json),
            headers: [PasskeyJourneyTests.ceremony: started.headers[PasskeyJourneyTests.ceremony] ?? ""])
    }

    static func signedIn(_ response: TestResponse) -> SignedIn {
        SignedIn(
            cookie: response.cookie(named: "sesame_session") ?? "", csrf: response.object["csrfToken"] as? String ?? "",
            token: response.object["sessionToken"] as? String ?? "")
    }

    @Test(arguments: TestDatabase.all)
    func requiredAsksForTheAddressAndMakesTheAccountWithItsMail(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db, .required)
        try await server.app().test(.router) { client in
            let missing = try await options(client, "nia", email: nil)
            #expect(missing.status == .badRequest && missing.errorCode == "email_required", "\(missing.text)")
            let blank = try await options(client, "nia", email: "  ")
            #expect(blank.status == .badRequest && blank.errorCode == "email_required")
            for bad in [
                "nia", "nia@localhost", "nia@example.net\r\nBcc: x@example.org", String(repeating: "a", count: 400),
            ] {
                let refused = try await options(client, "nia", email: bad)
                #expect(
                    refused.status == .badRequest && refused.errorCode == "invalid_email", "\(bad): \(refused.text)")
            }
            try await AccountNoticeTests.expectNone(server)

            let created = try await signUp(client, VirtualAuthenticator(), "nia", email: " Nia@Example.NET ")
            #expect(created.status == .created, "\(created.text)")
            let mails = try await EmailAddressTests.mails(server)
            #expect(mails.count == 1 && mails.first?.to == "Nia@Example.NET")
            #expect(mails.first?.subject == "Confirm your email address for Sesame")
            let code = try #require(mails.first.flatMap(EmailAddressTests.code))

            // Until the code is typed: pending, and the account works.
            let session = Self.signedIn(created)
            let shown = try await EmailAddressTests().show(client, session)
            #expect(shown["pending"] as? String == "Nia@Example.NET" && shown["verified"] as? Bool == false)
            #expect(shown["setting"] as? String == "required")
            let confirmed = try await EmailAddressTests().confirm(client, session, code)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            #expect(try await EmailAddressTests().show(client, session)["address"] as? String == "Nia@Example.NET")
        }
        let user = try #require(try await server.withStore { try await $0.user(usernameKey: "nia") })
        let added = try await server.withStore { store in
            try await store.auditEvents(userID: user.id, limit: 100).filter { $0.kind == "email.added" }.map(\.detail)
        }
        #expect(added == ["sign-up"])
    }

    @Test(arguments: TestDatabase.all)
    func optionalTakesOneOrNoneAndOffIgnoresIt(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db, .optional)
        try await server.app().test(.router) { client in
            let without = try await signUp(client, VirtualAuthenticator(), "ola", email: nil)
            #expect(without.status == .created, "\(without.text)")
            try await AccountNoticeTests.expectNone(server)
            let with = try await signUp(client, VirtualAuthenticator(), "pia", email: "pia@example.net")
            #expect(with.status == .created)
            #expect(try await EmailAddressTests.mails(server).map(\.to) == ["pia@example.net"])
        }
        let off = EmailAddressTests.server(db, .off)
        try await off.app().test(.router) { client in
            let ignored = try await signUp(client, VirtualAuthenticator(), "ola", email: "not an address")
            #expect(ignored.status == .created, "\(ignored.text)")
            try await AccountNoticeTests.expectNone(off)
            let rows = try await off.withStore { try await $0.db.raw("SELECT user_id FROM email_addresses").all() }
            #expect(rows.isEmpty)
        }
    }

    @Test(arguments: TestDatabase.all)
    func anotherAccountsAddressGetsItsHolderTheNotice(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db, .required)
        let holder = try await server.seedUser("nia", password: "correct horse")
        try await AccountNoticeTests.verify(server, holder)
        try await server.app().test(.router) { client in
            let created = try await signUp(client, VirtualAuthenticator(), "mallory", email: "nia@example.net")
            #expect(created.status == .created, "\(created.text)")
            let mails = try await EmailAddressTests.mails(server)
            #expect(mails.map(\.subject) == ["Your email address was given for another account on Sesame"])
            #expect(mails.first.flatMap(EmailAddressTests.code) == nil)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aFailedSignUpTransactionLeavesNoAccountAndNoMail(_ db: TestDatabase) async throws {
        struct Failed: Error {}
        let server = EmailAddressTests.server(db, .required)
        try await server.withStore { store async throws in
            let user = User(
                id: UUID().uuidString.lowercased(), username: "nia", displayName: "Nia", userHandle: [1, 2, 3],
                disabled: false, createdAt: server.clock.now)
            let addresses = EmailSignUpAddresses(
                store: store, configuration: server.configuration, serverSecret: [7],
                rateLimiter: RateLimiter(
                    store: store, policy: RateLimitPolicy(), clock: ServerClock(now: { server.clock.now })),
                metrics: ServerMetrics())
            let credential = PasskeyManagementTests().credential(1, user: user, aaguid: nil)
            let session = SessionRecord(
                id: "s1", userID: user.id, createdAt: server.clock.now, lastSeenAt: server.clock.now,
                expiresAt: server.clock.now.addingTimeInterval(60), userAgent: "", method: "passkey",
                authenticatedAt: server.clock.now)
            let event = AuditEvent(
                at: server.clock.now, kind: "sign_up.passkey", outcome: "success", userID: user.id, username: "nia",
                clientAddress: "192.0.2.1", detail: "")
            await #expect(throws: Failed.self) {
                _ = try await store.createAccount(
                    user, credential: credential, audit: event, sessionTokenHash: [1], session: session,
                    also: { db in
                        try await addresses.begin(
                            "nia@example.net", user: user, clientAddress: "192.0.2.1", at: server.clock.now,
                            language: "en", in: db)
                        throw Failed()
                    })
            }
            #expect(try await store.user(usernameKey: "nia") == nil)
            #expect(try await store.db.raw("SELECT user_id FROM email_addresses").all().isEmpty)
        }
        try await AccountNoticeTests.expectNone(server)
    }
}
