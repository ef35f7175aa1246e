import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing

@testable import SesameCore
@testable import SesameEmail
@testable import SesameOperations
@testable import SesameServer

/// An account's email address over HTTP, on both engines: adding, verifying by code and by link, changing (the old
/// address told), and the attacks: wrong, reused and expired codes and links, rate limits per account and per
/// address, another account's address (case variants included), no recent sign-in.
@Suite struct EmailAddressTests {
    /// A server with addresses on whose outbox sender never takes a turn: the test reads the mails (`mails`).
    static func server(_ db: TestDatabase, _ policy: EmailAddressPolicy = .optional) -> TestServer {
        var server = TestServer(db) { $0.email = policy }
        server.serviceClock = ManualClock()
        return server
    }

    /// The mails written to the outbox since the last call, oldest first (each handed out once).
    static func mails(_ server: TestServer) async throws -> [OutgoingMail] {
        try await server.withStore { store in
            let claimed = try await store.claimDueMail(now: server.clock.now, limit: 100, lease: 60)
            for mail in claimed { try await store.markMailSent(id: mail.id, at: server.clock.now, retention: 60) }
            return claimed.map(\.mail)
        }
    }

    static func code(in mail: OutgoingMail) -> String? {
        guard let range = mail.text.range(of: #"Your code: [0-9]{6}"#, options: .regularExpression) else { return nil }
        return String(mail.text[range].suffix(6))
    }

    static func token(in mail: OutgoingMail) -> String? {
        guard let range = mail.text.range(of: #"/account/email/verify#[A-Za-z0-9_-]{43}"#, options: .regularExpression)
        else { return nil }
        return String(mail.text[range].suffix(43))
    }

    func put(_ client: some TestClientProtocol, _ session: SignedIn, _ address: String) async throws -> TestResponse {
        try await client.json(
            "/api/account/email", .put, body: jsonString(["address": address]), headers: session.bearerHeaders)
    }

    func confirm(_ client: some TestClientProtocol, _ session: SignedIn, _ code: String) async throws -> TestResponse {
        try await client.json(
            "/api/account/email/confirm", .post, body: jsonString(["code": code]), headers: session.bearerHeaders)
    }

    func verifyLink(_ client: some TestClientProtocol, _ token: String) async throws -> TestResponse {
        try await client.json(
            "/api/email/verify", .post, body: jsonString(["token": token]),
            headers: [.origin: "http://localhost:8080", .init("Sesame-Client")!: "web"])
    }

    func show(_ client: some TestClientProtocol, _ session: SignedIn) async throws -> [String: Any] {
        let response = try await client.json("/api/account/email", headers: session.bearerHeaders)
        #expect(response.status == .ok, "\(response.text)")
        return response.object
    }

    @Test(arguments: TestDatabase.all)
    func addVerifyByCodeThenChangeByLink(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("lin", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "lin", "correct horse")
            let added = try await put(client, session, " Lin@Example.NET ")
            #expect(added.status == .accepted, "\(added.text)")
            #expect(added.object["pending"] as? String == "Lin@Example.NET")
            let mail = try #require(try await Self.mails(server).only)
            #expect(mail.to == "Lin@Example.NET")
            #expect(mail.subject == "Confirm your email address for Sesame")
            let code = try #require(Self.code(in: mail))
            let token = try #require(Self.token(in: mail))
            #expect(mail.text.contains("http://localhost:8080/account/email/verify#\(token)"))
            #expect(mail.html?.contains(code) == true && mail.html?.contains(token) == true)

            var shown = try await show(client, session)
            #expect(shown["address"] is NSNull && shown["pending"] as? String == "Lin@Example.NET")
            #expect(shown["verified"] as? Bool == false)

            let wrong = try await confirm(client, session, code == "000000" ? "000001" : "000000")
            #expect(wrong.status == .unauthorized && wrong.errorCode == "invalid_email_code")
            let right = try await confirm(client, session, code)
            #expect(right.status == .ok, "\(right.text)")
            #expect(right.object["address"] as? String == "Lin@Example.NET")
            // Single use: the code and the link of that mail are spent.
            #expect(try await confirm(client, session, code).errorCode == "invalid_email_code")
            #expect(try await verifyLink(client, token).errorCode == "invalid_email_code")
            shown = try await show(client, session)
            #expect(shown["address"] as? String == "Lin@Example.NET" && shown["verified"] as? Bool == true)
            #expect(shown["pending"] is NSNull)
            #expect(try await Self.mails(server).isEmpty, "a first address tells no old one")

            // The same address in another case is no change.
            #expect(try await put(client, session, "lin@example.net").errorCode == "email_unchanged")

            // A change keeps the verified address until the new one is verified.
            #expect(try await put(client, session, "lin@example.org").status == .accepted)
            let second = try #require(try await Self.mails(server).only)
            #expect(second.to == "lin@example.org")
            shown = try await show(client, session)
            #expect(
                shown["address"] as? String == "Lin@Example.NET" && shown["pending"] as? String == "lin@example.org")
            let link = try #require(Self.token(in: second))
            let verified = try await verifyLink(client, link)
            #expect(verified.status == .ok, "\(verified.text)")
            #expect(try await verifyLink(client, link).errorCode == "invalid_email_code")
            shown = try await show(client, session)
            #expect(shown["address"] as? String == "lin@example.org" && shown["pending"] is NSNull)
            // The old address is told, in the same kind of mail: text and HTML, the new address masked.
            let told = try #require(try await Self.mails(server).only)
            #expect(told.to == "Lin@Example.NET" && told.subject == "Your email address for Sesame was changed")
            #expect(told.text.contains("l***@example.org") && told.html?.contains("l***@example.org") == true)
            #expect(!told.text.contains("lin@example.org"))

            let audit = try await client.json("/api/account/audit", headers: session.bearerHeaders)
            let kinds = (audit.object["events"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            for kind in ["email.added", "email.verified", "email.changed"] { #expect(kinds.contains(kind), "\(kind)") }

            let removed = try await client.json("/api/account/email", .delete, headers: session.bearerHeaders)
            #expect(removed.status == .ok, "\(removed.text)")
            #expect(try await show(client, session)["address"] is NSNull)
        }
    }

    @Test(arguments: TestDatabase.all)
    func expiredCodesAndLinksAreRefused(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("lin", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "lin", "correct horse")
            #expect(try await put(client, session, "lin@example.net").status == .accepted)
            let mail = try #require(try await Self.mails(server).only)
            server.clock.advance(EmailVerifier.lifetime + 1)
            let code = try #require(Self.code(in: mail))
            let token = try #require(Self.token(in: mail))
            #expect(try await confirm(client, session, code).errorCode == "invalid_email_code")
            #expect(try await verifyLink(client, token).errorCode == "invalid_email_code")
            let shown = try await show(client, session)
            #expect(shown["address"] is NSNull && shown["pending"] is NSNull)
        }
    }

    @Test(arguments: TestDatabase.all)
    func codeGuessesAndSendsAreRateLimited(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("lin", password: "correct horse")
        try await server.seedUser("sam", password: "correct horse")
        try await server.app().test(.router) { client in
            var lin = try await signInWithPassword(client, "lin", "correct horse")
            #expect(try await put(client, lin, "lin@example.net").status == .accepted)
            let codeMail = try #require(try await Self.mails(server).only)
            let code = try #require(Self.code(in: codeMail))
            let wrong = code == "000000" ? "000001" : "000000"
            for _ in 0..<5 { #expect(try await confirm(client, lin, wrong).errorCode == "invalid_email_code") }
            // Past the limit even the right code is refused, until the window ends.
            let limited = try await confirm(client, lin, code)
            #expect(limited.status == .tooManyRequests && limited.errorCode == "too_many_attempts")
            #expect(limited.headers[.retryAfter] != nil)
            server.clock.advance(RateLimitPolicy().window)
            // The code ended with the window (both are 15 minutes): a new one, then the right code works.
            lin = try await signInWithPassword(client, "lin", "correct horse")
            #expect(try await put(client, lin, "lin@example.net").status == .accepted)
            let freshMail = try #require(try await Self.mails(server).only)
            let fresh = try #require(Self.code(in: freshMail))
            #expect(try await confirm(client, lin, fresh).status == .ok)

            // Sends to one address are limited across accounts: four more from Lin, then Sam's is refused.
            server.clock.advance(RateLimitPolicy().window)
            lin = try await signInWithPassword(client, "lin", "correct horse")
            // Lin's address is verified now: a sign-in from this client (it keeps no cookies) is a new device's.
            #expect(try await Self.mails(server).map(\.subject) == ["New sign-in to your account on Sesame"])
            for _ in 0..<5 { #expect(try await put(client, lin, "shared@example.org").status == .accepted) }
            #expect(try await Self.mails(server).count == 5)
            let sam = try await signInWithPassword(client, "sam", "correct horse")
            let refused = try await put(client, sam, "SHARED@example.org")
            #expect(refused.status == .tooManyRequests && refused.errorCode == "too_many_attempts")
            #expect(try await Self.mails(server).isEmpty, "a refused send writes no mail")
        }
    }

    @Test(arguments: TestDatabase.all)
    func anotherAccountsAddressLooksFreeAndNeverVerifies(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("lin", password: "correct horse")
        try await server.seedUser("sam", password: "correct horse")
        try await server.app().test(.router) { client in
            let lin = try await signInWithPassword(client, "lin", "correct horse")
            let sam = try await signInWithPassword(client, "sam", "correct horse")
            #expect(try await put(client, lin, "lin@example.net").status == .accepted)
            let codeMail = try #require(try await Self.mails(server).only)
            let code = try #require(Self.code(in: codeMail))
            #expect(try await confirm(client, lin, code).status == .ok)

            // Sam gives Lin's address in another case: the same answer as for a free address, a pending address
            // shown the same way, and the mail is a notice to Lin with no code or link in it.
            let taken = try await put(client, sam, "LIN@example.NET")
            let free = try await put(client, sam, "sam@example.net")
            #expect(taken.status == free.status)
            #expect(Set(taken.object.keys) == Set(free.object.keys) && taken.object["status"] as? String == "code_sent")
            // Written in the same instant (the test's clock stands still), so found by recipient.
            let mails = try await Self.mails(server)
            #expect(Set(mails.map(\.to)) == ["LIN@example.NET", "sam@example.net"])
            let notice = try #require(mails.first { $0.to == "LIN@example.NET" })
            #expect(Self.code(in: notice) == nil && Self.token(in: notice) == nil)
            #expect(notice.subject.contains("another account"))
            let own = try #require(mails.first { $0.to == "sam@example.net" })
            #expect(Self.code(in: own) != nil)

            // Back to Lin's address: whatever Sam types, it fails as any wrong code does.
            #expect(try await put(client, sam, "lin@EXAMPLE.net").status == .accepted)
            _ = try await Self.mails(server)
            #expect(try await show(client, sam)["pending"] as? String == "lin@EXAMPLE.net")
            #expect(try await confirm(client, sam, code).errorCode == "invalid_email_code")
            #expect(try await show(client, lin)["address"] as? String == "lin@example.net")
        }
    }

    @Test(arguments: TestDatabase.all)
    func theFirstToVerifyAnAddressHoldsIt(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("lin", password: "correct horse")
        try await server.seedUser("sam", password: "correct horse")
        try await server.app().test(.router) { client in
            let lin = try await signInWithPassword(client, "lin", "correct horse")
            let sam = try await signInWithPassword(client, "sam", "correct horse")
            // Both wait for one address (a pending address is not unique): the first verified holds it.
            #expect(try await put(client, lin, "both@example.net").status == .accepted)
            #expect(try await put(client, sam, "Both@Example.net").status == .accepted)
            let mails = try await Self.mails(server)
            try #require(mails.count == 2)
            let linMail = try #require(mails.first { $0.to == "both@example.net" })
            let samMail = try #require(mails.first { $0.to == "Both@Example.net" })
            let linCode = try #require(Self.code(in: linMail))
            let samLink = try #require(Self.token(in: samMail))
            #expect(try await confirm(client, lin, linCode).status == .ok)
            #expect(try await verifyLink(client, samLink).errorCode == "invalid_email_code")
            #expect(try await show(client, sam)["address"] is NSNull)
        }
        // The database holds the rule too: one key, whatever its case, for one account.
        _ = try await server.withStore { store in
            await #expect(throws: (any Error).self) {
                try await store.db.raw(
                    """
                    UPDATE email_addresses SET address = 'BOTH@example.net', address_key = 'both@example.net'
                    WHERE address IS NULL
                    """
                ).run()
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func changesNeedARecentSignInAndTheSetting(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("lin", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "lin", "correct horse")
            let invalid = try await put(client, session, "lin at example")
            #expect(invalid.status == .badRequest && invalid.errorCode == "invalid_email")
            #expect(try await Self.mails(server).isEmpty)
            #expect(try await show(client, session)["pending"] is NSNull)

            server.clock.advance(TimeInterval(server.configuration.reauthenticationWindow + 1))
            let stale = try await put(client, session, "lin@example.net")
            #expect(stale.status == .forbidden && stale.errorCode == "reauthentication_required")
            let staleRemove = try await client.json("/api/account/email", .delete, headers: session.bearerHeaders)
            #expect(staleRemove.errorCode == "reauthentication_required")
            #expect(try await Self.mails(server).isEmpty)
        }
        let off = TestServer(db)
        try await off.seedUser("lin", password: "correct horse")
        try await off.app().test(.router) { client in
            let session = try await signInWithPassword(client, "lin", "correct horse")
            #expect(try await put(client, session, "lin@example.net").errorCode == "email_not_enabled")
            #expect(try await client.json("/api/account/email", headers: session.bearerHeaders).status == .notFound)
        }
    }
}

extension EmailAddressTests {
    /// "Download my data", `sesame users export` and `sesame users show` carry the verified and the pending address.
    @Test(arguments: TestDatabase.all)
    func theExportsAndUsersShowCarryTheAddress(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("lin", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "lin", "correct horse")
            var export = try await client.json("/api/account/export", headers: session.bearerHeaders).object
            #expect(export["email"] is NSNull || export["email"] == nil)
            #expect(try await put(client, session, "lin@example.net").status == .accepted)
            let first = try #require(try await Self.mails(server).only)
            let code = try #require(Self.code(in: first))
            #expect(try await confirm(client, session, code).status == .ok)
            #expect(try await put(client, session, "lin@example.org").status == .accepted)
            export = try await client.json("/api/account/export", headers: session.bearerHeaders).object
            let email = try #require(export["email"] as? [String: Any])
            #expect(email["address"] as? String == "lin@example.net" && email["verified"] as? Bool == true)
            #expect(email["pending"] as? String == "lin@example.org")
        }
        try await server.withStore { store in
            let shown = try await Admin(store: store).showUser("LIN")
            #expect(shown.contains("email:        lin@example.net (verified), lin@example.org (pending)"))
            let exported = try await Admin(store: store).exportUser("lin", providerListFile: nil)
            let document = try JSONSerialization.jsonObject(with: Data(exported.utf8)) as? [String: Any]
            #expect((document?["email"] as? [String: Any])?["address"] as? String == "lin@example.net")
        }
        #expect(Admin.describe(nil) == "none")
    }
}

extension EmailAddressTests {
    /// Off by default; on an https origin, addresses need a relay (or, knowingly, the console); a value other than
    /// off, optional or required is refused.
    @Test func theSettingIsOffByDefaultAndNeedsARelayOnHTTPS() throws {
        func resolve(_ flags: [String: String]) throws -> ServerConfiguration {
            let https = ["origin": "https://id.example.org", "rpID": "id.example.org", "allowConsoleSMS": "true"]
            return try ServerConfiguration.resolve(
                flags: https.merging(flags) { $1 }, environment: [:], configFile: nil)
        }
        #expect(try resolve([:]).email == .off)
        #expect(throws: ConfigurationError.self) { try resolve(["email": "optional"]) }
        #expect(throws: ConfigurationError.self) { try resolve(["email": "sometimes"]) }
        let relayed = try resolve([
            "email": "required", "smtpUrl": "smtp://relay.example.org", "smtpFrom": "id@example.org",
        ])
        #expect(relayed.email == .required)
        #expect(try resolve(["email": "optional", "allowConsoleMail": "true"]).email == .optional)
    }
}

extension Collection {
    /// The one element, or nil when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
