import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OneTimeCode
import SQLKit
import Testing
import VirtualAuthenticator

@testable import SesameCore
@testable import SesameEmail
@testable import SesamePasskeys
@testable import SesamePasswords
@testable import SesameSecondFactors
@testable import SesameServer

/// Mails about the account (docs/email.md, "Mails about the account"), on both engines: each change to a way in
/// writes one mail to the verified address, text and HTML, with its `mail.queued` audit event, in the change's
/// transaction; a refused or rolled-back change writes none, and neither does an account without a verified address.
@Suite struct AccountNoticeTests {
    static let address = "Nia@Example.NET"

    /// Gives the account a verified address, as a verification would leave it.
    static func verify(_ server: TestServer, _ user: User, _ address: String = Self.address) async throws {
        try await server.withStore { store in
            try await store.db.raw(
                """
                INSERT INTO email_addresses (user_id, address, address_key, verified_at, updated_at)
                VALUES (\(bind: user.id), \(bind: address), \(bind: address.lowercased()),
                    \(bind: server.clock.now.milliseconds), \(bind: server.clock.now.milliseconds))
                """
            ).run()
        }
    }

    static func queued(_ server: TestServer, _ user: User) async throws -> [String] {
        try await server.withStore { store in
            try await store.auditEvents(userID: user.id, limit: 100).filter { $0.kind == "mail.queued" }.map(\.detail)
        }
    }

    /// The one mail written since the last look, checked for its address, subject and both parts.
    static func expectOne(_ server: TestServer, subject: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let mails = try await EmailAddressTests.mails(server)
        #expect(mails.count == 1, "\(mails.map(\.subject))", sourceLocation: sourceLocation)
        guard let mail = mails.first else { return }
        #expect(mail.to == address, sourceLocation: sourceLocation)
        #expect(mail.subject == subject, sourceLocation: sourceLocation)
        let title = String(subject.dropLast(" on Sesame".count))
        #expect(mail.text.hasPrefix(title + "\n"), sourceLocation: sourceLocation)
        #expect(mail.text.contains("(username nia)"), sourceLocation: sourceLocation)
        #expect(mail.text.contains("If this wasn’t you"), sourceLocation: sourceLocation)
        #expect(mail.text.contains("http://localhost:8080/account"), sourceLocation: sourceLocation)
        let html = mail.html ?? ""
        #expect(
            html.contains("<h1 style=\"font-size:1.3em\">\(EmailMails.escape(title))</h1>"),
            sourceLocation: sourceLocation)
        #expect(html.contains("href=\"http://localhost:8080/account\""), sourceLocation: sourceLocation)
        #expect(html.contains("If this wasn’t you"), sourceLocation: sourceLocation)
    }

    static func expectNone(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let mails = try await EmailAddressTests.mails(server)
        #expect(mails.isEmpty, "\(mails.map(\.subject))", sourceLocation: sourceLocation)
    }

    func addPasskey(_ client: some TestClientProtocol, _ session: SignedIn) async throws -> (TestResponse, String) {
        let finish = AddPasskeyFinishTests()
        let options = try await finish.options(client, session)
        #expect(options.status == .ok, "\(options.text)")
        let response = try await finish.finish(client, session, options)
        return (response, response.object["id"] as? String ?? "")
    }

    func password(_ client: some TestClientProtocol, _ session: SignedIn, current: String?, new: String) async throws
        -> TestResponse
    {
        var body: [String: Any] = ["newPassword": new]
        if let current { body["currentPassword"] = current }
        return try await client.json(
            "/api/account/password", .put, body: jsonString(body), headers: session.bearerHeaders)
    }

    /// The notices' names are the outbox kind and the `mail.queued` detail; docs/email.md lists each with its title.
    @Test func theNoticesAreDeclaredOnceAndDocumented() throws {
        let notices = Vocabulary.server.accountNotices
        #expect(
            notices.map(\.rawValue) == [
                "sign_in.new_device", "passkey.added", "passkey.removed", "password.set", "password.changed",
                "password.removed",
                "totp.enabled", "totp.disabled", "sms.enabled", "sms.disabled", "recovery_codes.generated",
                "recovery_code.used", "email_recovery.used", "recovery_link.used",
            ])
        let docs = try VocabularyTests.text("docs/email.md")
        for notice in notices {
            let row = docs.split(separator: "\n").first { $0.hasPrefix("| `\(notice.rawValue)` |") }
            #expect(row?.hasSuffix("| \(notice.title) |") == true, "\(notice)")
        }
    }

    @Test(arguments: TestDatabase.all)
    func passkeyAndPasswordChangesMailTheVerifiedAddress(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let user = try await server.seedUser("nia", password: "correct horse")
        try await Self.verify(server, user)
        try await server.app().test(.router) { client in
            // This client keeps no cookies: each sign-in is from a device not seen before.
            let session = try await signInWithPassword(client, "nia", "correct horse")
            try await Self.expectOne(server, subject: "New sign-in to your account on Sesame")

            let (added, passkey) = try await addPasskey(client, session)
            #expect(added.status == .created, "\(added.text)")
            try await Self.expectOne(server, subject: "A passkey was added to your account on Sesame")

            // A wrong current password changes nothing and mails nothing.
            let wrong = try await password(client, session, current: "wrong horse", new: "battery staple")
            #expect(wrong.status == .forbidden, "\(wrong.text)")
            try await Self.expectNone(server)

            let changed = try await password(client, session, current: "correct horse", new: "battery staple")
            #expect(changed.status == .ok, "\(changed.text)")
            try await Self.expectOne(server, subject: "The password of your account was changed on Sesame")

            let removed = try await client.json("/api/account/password", .delete, headers: session.bearerHeaders)
            #expect(removed.status == .ok, "\(removed.text)")
            try await Self.expectOne(server, subject: "The password of your account was removed on Sesame")

            // The last passkey of an account without a password stays: refused, no mail.
            let last = try await client.json(
                "/api/account/passkeys/\(passkey)", .delete, headers: session.bearerHeaders)
            #expect(last.status == .conflict && last.errorCode == "last_way_in", "\(last.text)")
            try await Self.expectNone(server)
            // Removing a password that is not there: not found, no mail.
            let gone = try await client.json("/api/account/password", .delete, headers: session.bearerHeaders)
            #expect(gone.status == .notFound)
            try await Self.expectNone(server)

            let set = try await password(client, session, current: nil, new: "correct horse")
            #expect(set.status == .ok, "\(set.text)")
            try await Self.expectOne(server, subject: "A password was set for your account on Sesame")

            let unregistered = try await client.json(
                "/api/account/passkeys/\(passkey)", .delete, headers: session.bearerHeaders)
            #expect(unregistered.status == .ok, "\(unregistered.text)")
            try await Self.expectOne(server, subject: "A passkey was removed from your account on Sesame")
        }
        // Each mail's sending is an audit event with the notice as its detail (one instant: compared as a set).
        #expect(
            try await Self.queued(server, user).sorted() == [
                "passkey.added", "passkey.removed", "password.changed", "password.removed", "password.set",
                "sign_in.new_device",
            ])
    }

    @Test(arguments: TestDatabase.all)
    func secondFactorChangesMailTheVerifiedAddress(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let user = try await server.seedUser("nia", password: "correct horse")
        try await Self.verify(server, user)
        let factors = SecondFactorTests()
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nia", "correct horse")
            try await Self.expectOne(server, subject: "New sign-in to your account on Sesame")
            // `enableTOTP` tries a wrong first code before the right one: only the right one sets it up and mails.
            _ = try await factors.enableTOTP(client, session, server: server)
            try await Self.expectOne(server, subject: "An authenticator app was set up for your account on Sesame")

            let generated = try await client.json("/api/account/recovery-codes", .post, headers: session.bearerHeaders)
            #expect(generated.status == .created)
            try await Self.expectOne(server, subject: "New recovery codes were made for your account on Sesame")
            let codes = generated.object["codes"] as? [String] ?? []

            // A wrong recovery code spends nothing and mails nothing; a right one signs in and mails.
            let pending = try await factors.pendingStep(client, "nia", "correct horse")
            let wrong = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "recovery", "code": "not-a-code", "pendingToken": pending.token]))
            #expect(wrong.status == .unauthorized)
            try await Self.expectNone(server)
            let used = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString(["factor": "recovery", "code": codes.first ?? "", "pendingToken": pending.token]))
            #expect(used.status == .ok, "\(used.text)")
            // The code spent, then the sign-in it finished (from a device not seen before: this client keeps no
            // cookies); one instant, so compared in order of subject.
            let both = try await EmailAddressTests.mails(server)
            #expect(
                both.map(\.subject).sorted() == [
                    "A recovery code of your account was used on Sesame", "New sign-in to your account on Sesame",
                ])

            // A phone: the code sent sets nothing up; a wrong code neither; the right one does, and mails.
            let add = try await client.json(
                "/api/account/sms", .put, body: #"{"phone":"+15551234567"}"#, headers: session.bearerHeaders)
            #expect(add.status == .accepted, "\(add.text)")
            try await Self.expectNone(server)
            let code = try OriginBoundMessage(parsing: try #require(server.sms.all.last).message).code
            let wrongSMS = try await client.json(
                "/api/account/sms/confirm", .post, body: jsonString(["code": code == "000000" ? "000001" : "000000"]),
                headers: session.bearerHeaders)
            #expect(wrongSMS.status == .unauthorized)
            try await Self.expectNone(server)
            let confirmed = try await client.json(
                "/api/account/sms/confirm", .post, body: jsonString(["code": code]), headers: session.bearerHeaders)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            try await Self.expectOne(server, subject: "A phone was set up for your account's sign-in codes on Sesame")

            #expect(try await client.json("/api/account/sms", .delete, headers: session.bearerHeaders).status == .ok)
            try await Self.expectOne(
                server, subject: "The phone was removed from your account's sign-in codes on Sesame")
            #expect(
                try await client.json("/api/account/sms", .delete, headers: session.bearerHeaders).status == .notFound)
            try await Self.expectNone(server)

            #expect(try await client.json("/api/account/totp", .delete, headers: session.bearerHeaders).status == .ok)
            try await Self.expectOne(server, subject: "The authenticator app was removed from your account on Sesame")
        }
        #expect(
            try await Self.queued(server, user).sorted() == [
                "recovery_code.used", "recovery_codes.generated", "sign_in.new_device", "sign_in.new_device",
                "sms.disabled", "sms.enabled", "totp.disabled", "totp.enabled",
            ])
    }

    @Test(arguments: TestDatabase.all)
    func noVerifiedAddressNoMail(_ db: TestDatabase) async throws {
        // A pending address is not verified: nothing goes to it.
        let server = EmailAddressTests.server(db)
        let user = try await server.seedUser("nia", password: "correct horse")
        try await server.withStore { store in
            try await store.db.raw(
                """
                INSERT INTO email_addresses (user_id, pending, pending_key, pending_expires_at, updated_at)
                VALUES (\(bind: user.id), \(bind: Self.address), \(bind: Self.address.lowercased()),
                    \(bind: server.clock.now.addingTimeInterval(600).milliseconds), \(bind: server.clock.now.milliseconds))
                """
            ).run()
        }
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nia", "correct horse")
            #expect(try await addPasskey(client, session).0.status == .created)
            #expect(
                try await password(client, session, current: "correct horse", new: "battery staple").status == .ok)
            #expect(
                try await client.json("/api/account/password", .delete, headers: session.bearerHeaders).status
                    == .ok)
            try await Self.expectNone(server)
        }
        #expect(try await Self.queued(server, user).isEmpty)

        // Addresses off: a verified address kept from when they were on gets nothing either.
        let off = EmailAddressTests.server(db, .off)
        let other = try await off.seedUser("ola", password: "correct horse")
        try await Self.verify(off, other)
        try await off.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ola", "correct horse")
            #expect(try await addPasskey(client, session).0.status == .created)
            #expect(
                try await password(client, session, current: "correct horse", new: "battery staple").status == .ok)
            try await Self.expectNone(off)
        }
        #expect(try await Self.queued(off, other).isEmpty)
    }

    /// Fails the change after the notice is written: the transaction must take the mail and its audit event back.
    struct FailingAfterNotice: AccountNotices {
        struct Failed: Error {}
        let notices: EmailAccountNotices

        func queue(
            _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
            details: [AccountNoticeDetail], language: String, in db: any SQLDatabase
        ) async throws {
            try await notices.queue(
                kind, userID: userID, username: username, clientAddress: clientAddress, at: at, details: details,
                language: language, in: db)
            throw Failed()
        }

        func queue(
            _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
            details: [AccountNoticeDetail], language: String
        ) async throws {
            throw Failed()
        }

        func getsNotices(userID: String) async throws -> Bool { try await notices.getsNotices(userID: userID) }
    }

    @Test(arguments: TestDatabase.all)
    func aRolledBackChangeMailsNothing(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let user = try await server.seedUser("nia", password: "correct horse")
        try await Self.verify(server, user)
        try await server.withStore { store in
            let failing = FailingAfterNotice(
                notices: EmailAccountNotices(
                    store: store, configuration: server.configuration, metrics: ServerMetrics()))
            func notice(_ kind: AccountNoticeKind) -> AccountNotice {
                AccountNotice(
                    kind, userID: user.id, username: user.username, clientAddress: "192.0.2.1", at: server.clock.now,
                    language: "en", notices: failing)
            }
            let credential = PasskeyManagementTests().credential(1, user: user, aaguid: nil)
            await #expect(throws: FailingAfterNotice.Failed.self) {
                try await store.addCredential(credential, notice: notice(.passkeyAdded))
            }
            #expect(try await store.credentials(userID: user.id).isEmpty)
            try await store.addCredential(credential)
            await #expect(throws: FailingAfterNotice.Failed.self) {
                _ = try await store.deleteCredential(
                    userID: user.id, id: credential.id, notice: notice(.passkeyRemoved), administrators: nil)
            }
            #expect(try await store.credentials(userID: user.id).count == 1)
            await #expect(throws: FailingAfterNotice.Failed.self) {
                _ = try await store.deletePassword(userID: user.id, notice: notice(.passwordRemoved))
            }
            #expect(try await store.password(userID: user.id) != nil)
            await #expect(throws: FailingAfterNotice.Failed.self) {
                try await store.replaceRecoveryCodes(
                    userID: user.id, salt: [1], hashes: [[2]], at: server.clock.now,
                    notice: notice(.recoveryCodesGenerated))
            }
            #expect(try await store.recoveryCodes(userID: user.id) == nil)
        }
        try await Self.expectNone(server)
        #expect(try await Self.queued(server, user).isEmpty)
    }
}
