import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OneTimeCode
import Testing

@testable import SesameCore
@testable import SesameEmail
@testable import SesameInvitations
@testable import SesameServer

/// Mails and text messages in the person's language (issue 32): for a person who saved none, the language of the
/// request that caused the mail; placeholders filled, dates in the language's own form (UTC, said as such), `lang`
/// and `dir` on the HTML part; the text message's `@host #code` line kept as browsers parse it.
@Suite struct MailLanguageTests {
    /// 2026-11-28 17:50:12 UTC.
    static let moment = Date(timeIntervalSince1970: 1_795_888_212)

    static func mails() -> EmailMails {
        var configuration = ServerConfiguration()
        configuration.origin = "https://id.example.org/"
        configuration.rpName = "Sesame"
        return EmailMails(configuration)
    }

    @Test func aNoticeInKoreanFillsItsPlaceholdersAndWritesTheDateInKorean() throws {
        let mail = Self.mails().notice(
            .passkeyAdded, to: "nia@example.org", username: "nia", at: Self.moment,
            details: AccountNoticeDetail.signIn(userAgent: NewDeviceTests.agent, clientAddress: "203.0.113.7"),
            tag: "ko")
        #expect(mail.subject == "[Sesame] 계정에 패스키가 추가되었습니다")
        #expect(mail.text.hasPrefix("계정에 패스키가 추가되었습니다\n"), "\(mail.text)")
        #expect(mail.text.contains("사용자 이름: nia"), "\(mail.text)")
        #expect(mail.text.contains("2026년 11월 28일"), "\(mail.text)")
        #expect(mail.text.contains("(UTC)"), "\(mail.text)")
        #expect(mail.text.contains("기기: Chrome on Linux\n접속 주소: 203.0.113.7"), "\(mail.text)")
        #expect(mail.text.contains("https://id.example.org/account"))
        let html = try #require(mail.html)
        #expect(html.contains(#"<html lang="ko" dir="ltr">"#))
        #expect(html.contains(#"<a href="https://id.example.org/account">즉시 로그인하여</a> 알 수 없는"#), "\(html)")
        for part in [mail.subject, mail.text, html] {
            #expect(!part.contains("{") && !part.contains("mail."), "\(part)")
        }
    }

    @Test func anArabicMailIsRightToLeftWithItsCodeLeftToRight() throws {
        let mail = Self.mails().recoveryCode(
            to: "nia@example.org", username: "nia", code: "123456", minutes: 15, tag: "ar")
        let html = try #require(mail.html)
        #expect(html.contains(#"<html lang="ar" dir="rtl">"#))
        #expect(html.contains(#"<strong dir="ltr""#) && html.contains(">123456</strong>"))
        #expect(mail.subject == "رمز تسجيل الدخول إلى Sesame")
        // 15 is the "many" form (11-99) of the Arabic plural rule; the number is written as Arabic writes it.
        let fifteen = 15.formatted(.number.locale(Locale(identifier: "ar")))
        #expect(mail.text.contains("لمدة \(fifteen) دقيقة"), "\(mail.text)")
        #expect(mail.text.contains("nia") && mail.text.contains("123456"))
    }

    @Test func theTimeFollowsTheLanguageAndSaysUTC() {
        let english = EmailMails.shown(Self.moment, "en")
        #expect(english.hasPrefix("November 28, 2026") && english.contains("5:50") && english.hasSuffix(" UTC"))
        #expect(EmailMails.shown(Self.moment, "de").hasPrefix("28. November 2026"))
        #expect(EmailMails.shown(Self.moment, "de").hasSuffix(" UTC"))
        #expect(EmailMails.shown(Self.moment, "ja").hasPrefix("2026年11月28日"))
        // A tag the catalog does not hold: the default language.
        #expect(EmailMails.shown(Self.moment, "xx") == EmailMails.shown(Self.moment, "en"))
    }

    @Test func anInvitationTakesTheLanguageItIsGiven() throws {
        var configuration = ServerConfiguration()
        configuration.rpName = "Sesame"
        configuration.defaultLanguage = "de"
        let invitations = InvitationMails(configuration)
        let mails = { (tag: String?) in
            invitations.invitation(to: "ada@example.org", token: "t", expiresAt: Self.moment, tag: tag)
        }
        let spanish = mails("es")
        #expect(spanish.subject == "Te han invitado a Sesame")
        #expect(spanish.html?.contains(#"<html lang="es" dir="ltr">"#) == true)
        #expect(spanish.text.contains("28 de noviembre de 2026"), "\(spanish.text)")
        // None given: the server's default language.
        #expect(mails(nil).subject == "Sie sind zu Sesame eingeladen")
    }

    /// A password sign-in from a browser the account was not used in, asking for `language`.
    func signIn(_ client: some TestClientProtocol, _ username: String, language: String) async throws -> TestResponse {
        var headers = NewDeviceTests.browser(nil)
        headers[.acceptLanguage] = language
        return try await client.json(
            "/api/sessions/password", .post, body: jsonString(["username": username, "password": "correct horse"]),
            headers: headers)
    }

    @Test(arguments: TestDatabase.all)
    func aNoticeFollowsTheLanguageOfTheRequestForAPersonWhoSavedNone(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let nia = try await server.seedUser("nia", password: "correct horse")
        try await AccountNoticeTests.verify(server, nia)
        try await server.app().test(.router) { client in
            let korean = try await signIn(client, "nia", language: "ko-KR,ko;q=0.9,en;q=0.5")
            #expect(korean.status == .ok, "\(korean.text)")
            let mails = try await EmailAddressTests.mails(server)
            #expect(mails.map(\.subject) == ["[Sesame] 계정에 새 로그인이 있습니다"])
            let mail = try #require(mails.first)
            #expect(mail.text.contains("기기: Chrome on Linux\n접속 주소: 203.0.113.7"), "\(mail.text)")
            #expect(mail.text.contains(EmailMails.shown(server.clock.now, "ko")), "\(mail.text)")
            #expect(mail.html?.contains(#"<html lang="ko" dir="ltr">"#) == true)

            let arabic = try await signIn(client, "nia", language: "ar-EG")
            #expect(arabic.status == .ok, "\(arabic.text)")
            let second = try #require(try await EmailAddressTests.mails(server).first)
            #expect(second.subject == "تسجيل دخول جديد إلى حسابك على Sesame")
            #expect(second.html?.contains(#"<html lang="ar" dir="rtl">"#) == true)
            #expect(second.text.contains("الجهاز: Chrome on Linux"), "\(second.text)")

            // No language the catalog holds: the default, English.
            _ = try await signIn(client, "nia", language: "tlh")
            let third = try #require(try await EmailAddressTests.mails(server).first)
            #expect(third.subject == "New sign-in to your account on Sesame")
        }
    }

    @Test(arguments: TestDatabase.all)
    func aTextMessageIsInTheLanguageAndKeepsItsBindingLine(_ db: TestDatabase) async throws {
        let server = TestServer(db) { $0.defaultLanguage = "ja" }
        try await server.seedUser("uma", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "uma", "correct horse")
            let add = try await client.json(
                "/api/account/sms", .put, body: #"{"phone":"+15551234567"}"#, headers: session.bearerHeaders)
            #expect(add.status == .accepted, "\(add.text)")
            let message = try #require(server.sms.all.last).message
            let bound = try OriginBoundMessage(parsing: message)
            #expect(message == "Sesame の確認コードは \(bound.code) です。\n\n@localhost #\(bound.code)")
        }
    }

    /// A second factor's notice and its text message, for a person who saved no language, follow the request's
    /// `Accept-Language`; a saved choice comes first.
    @Test(arguments: TestDatabase.all)
    func factorNoticesAndTextMessagesFollowTheRequestsLanguage(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let user = try await server.seedUser("ola", password: "correct horse")
        try await AccountNoticeTests.verify(server, user)
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ola", "correct horse")
            _ = try await EmailAddressTests.mails(server)
            var german = session.bearerHeaders
            german[.acceptLanguage] = "de-CH, de;q=0.9, en;q=0.5"
            let generated = try await client.json("/api/account/recovery-codes", .post, headers: german)
            #expect(generated.status == .created)
            #expect(
                try await EmailAddressTests.mails(server).map(\.subject) == [
                    "Für Ihr Konto wurden neue Wiederherstellungscodes erstellt (Sesame)"
                ])
            let add = try await client.json(
                "/api/account/sms", .put, body: #"{"phone":"+15551234567"}"#, headers: german)
            #expect(add.status == .accepted, "\(add.text)")
            let code = try OriginBoundMessage(parsing: try #require(server.sms.all.last).message).code
            #expect(try #require(server.sms.all.last).message.hasPrefix("\(code) ist Ihr Bestätigungscode für Sesame."))

            // Her saved choice outranks the request's.
            let saved = try await client.json(
                "/api/account/language", .put, body: #"{"language":"ko"}"#, headers: session.bearerHeaders)
            #expect(saved.status == .ok || saved.status == .noContent, "\(saved.text)")
            let again = try await client.json("/api/account/recovery-codes", .post, headers: german)
            #expect(again.status == .created)
            #expect(
                try await EmailAddressTests.mails(server).map(\.subject) == ["[Sesame] 계정의 복구 코드가 새로 만들어졌습니다"])
        }
    }
}
