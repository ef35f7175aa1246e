import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VirtualAuthenticator

@testable import SesameCore
@testable import SesameEmail
@testable import SesameServer

/// A sign-in from a device not seen before (docs/email.md, "A sign-in from a new device"), on both engines: the
/// device cookie's tags, the mail "New sign-in to your account" for a browser without the account's tag (passkey,
/// password, password and a second factor), none with it, none after sign-up, a tampered tag counted as unknown,
/// several accounts in one browser and the bound on them.
@Suite struct NewDeviceTests {
    static let agent =
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
    static let forwarded = HTTPField.Name("X-Forwarded-For")!

    /// A browser's headers: its user agent, its address and its device cookie (`name=value`), if any.
    static func browser(_ device: String?) -> HTTPFields {
        var headers: HTTPFields = [.userAgent: agent, forwarded: "203.0.113.7"]
        if let device { headers[.cookie] = device }
        return headers
    }

    func passkeySignIn(_ client: some TestClientProtocol, _ va: VirtualAuthenticator, device: String?) async throws
        -> TestResponse
    {
        let journey = PasskeyJourneyTests()
        let (options, token) = try await journey.begin(client, "/api/authentication/options", "{}")
        let assertion = try va.get(optionsJSON: options, origin: PasskeyJourneyTests.origin)
        var headers = Self.browser(device)
        headers[PasskeyJourneyTests.ceremony] = token ?? ""
        return try await client.json(
            "/api/authentication", .post, body: journey.credentialBody(assertion.json), headers: headers)
    }

    func passwordSignIn(_ client: some TestClientProtocol, _ username: String, device: String?) async throws
        -> TestResponse
    {
        try await client.json(
            "/api/sessions/password", .post, body: jsonString(["username": username, "password": "correct horse"]),
            headers: Self.browser(device))
    }

    /// The mails written since the last look, with the one new-device mail checked when `expected`.
    static func expectNewDeviceMail(
        _ server: TestServer, to address: String = AccountNoticeTests.address, _ expected: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let mails = try await EmailAddressTests.mails(server)
        guard expected else {
            #expect(mails.isEmpty, "\(mails.map(\.subject))", sourceLocation: sourceLocation)
            return
        }
        #expect(mails.count == 1, "\(mails.map(\.subject))", sourceLocation: sourceLocation)
        guard let mail = mails.first else { return }
        #expect(mail.to == address, sourceLocation: sourceLocation)
        #expect(mail.subject == "New sign-in to your account on Sesame", sourceLocation: sourceLocation)
        #expect(mail.text.hasPrefix("New sign-in to your account\n"), sourceLocation: sourceLocation)
        #expect(
            mail.text.contains("\n\nDevice: Chrome on Linux\nFrom the address: 203.0.113.7\n\n"),
            "\(mail.text)", sourceLocation: sourceLocation)
        #expect(mail.text.contains(EmailMails.shown(server.clock.now, "en")), sourceLocation: sourceLocation)
        #expect(
            mail.html?.contains("<ul><li>Device: Chrome on Linux</li><li>From the address: 203.0.113.7</li></ul>")
                == true, sourceLocation: sourceLocation)
        // Nothing of the header itself reaches the mail.
        #expect(
            !mail.text.contains("Mozilla") && mail.html?.contains("Mozilla") == false, sourceLocation: sourceLocation)
    }

    static func deviceCookie(_ response: TestResponse) -> String? { response.cookie(named: "sesame_device") }

    static func tags(_ cookie: String?) -> [String] {
        KnownDevices.tags(cookie.map { String($0.dropFirst("sesame_device=".count)) }).map(String.init)
    }

    @Test(arguments: TestDatabase.all)
    func aPasskeySignInFromANewBrowserMailsOnceAndRemembersIt(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let va = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            let created = try await PasskeyJourneyTests().signUp(client, va, "nia")
            #expect(created.status == .created, "\(created.text)")
            // Sign-up remembers its browser.
            let fromSignUp = try #require(Self.deviceCookie(created))
            let user = try #require(try await server.withStore { try await $0.user(usernameKey: "nia") })
            try await AccountNoticeTests.verify(server, user)
            let secret = try await server.withStore {
                try await $0.serverSecret(
                    named: ServerSecret.name, generate: ServerSecret.generate, now: server.clock.now)
            }
            let tag = KnownDevices(serverSecret: secret, cookies: Cookies(server.configuration)).tag(userID: user.id)
            #expect(Self.tags(fromSignUp) == [tag])
            let header = try #require(created.headers[values: .setCookie].first { $0.hasPrefix("sesame_device=") })
            #expect(header.hasSuffix("; Path=/api; Max-Age=34560000; HttpOnly; SameSite=Strict"), "\(header)")

            // The browser that signed up: no mail, and the cookie is not set again.
            let known = try await passkeySignIn(client, va, device: fromSignUp)
            #expect(known.status == .ok, "\(known.text)")
            #expect(Self.deviceCookie(known) == nil)
            try await Self.expectNewDeviceMail(server, false)

            // Another browser: one mail, and the cookie that remembers it.
            let fresh = try await passkeySignIn(client, va, device: nil)
            #expect(fresh.status == .ok, "\(fresh.text)")
            try await Self.expectNewDeviceMail(server, true)
            let remembered = try #require(Self.deviceCookie(fresh))
            #expect(Self.tags(remembered) == [tag])
            #expect(Self.deviceCookie(try await passkeySignIn(client, va, device: remembered)) == nil)
            try await Self.expectNewDeviceMail(server, false)

            // A tag changed by one character is not the account's: a mail, and the account's tag first in the cookie
            // (the changed one stays behind it: a tag of another account cannot be told from it).
            let last = remembered.last == "A" ? "B" : "A"
            let tampered = String(remembered.dropLast()) + last
            let afterTampering = try await passkeySignIn(client, va, device: tampered)
            #expect(afterTampering.status == .ok)
            try await Self.expectNewDeviceMail(server, true)
            #expect(Self.tags(Self.deviceCookie(afterTampering)).first == tag)
            // Junk in the cookie: the same.
            _ = try await passkeySignIn(client, va, device: "sesame_device=...%00<script>")
            try await Self.expectNewDeviceMail(server, true)
        }
        #expect(
            try await AccountNoticeTests.queued(
                server,
                try #require(
                    try await server.withStore {
                        try await $0.user(usernameKey: "nia")
                    })) == ["sign_in.new_device", "sign_in.new_device", "sign_in.new_device"])
    }

    @Test(arguments: TestDatabase.all)
    func passwordAndSecondFactorSignInsAndSeveralAccountsInOneBrowser(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let nia = try await server.seedUser("nia", password: "correct horse")
        let ola = try await server.seedUser("ola", password: "correct horse")
        try await AccountNoticeTests.verify(server, nia)
        try await AccountNoticeTests.verify(server, ola, "ola@example.net")
        try await server.app().test(.router) { client in
            let first = try await passwordSignIn(client, "nia", device: nil)
            #expect(first.status == .ok, "\(first.text)")
            try await Self.expectNewDeviceMail(server, true)
            let niaOnly = try #require(Self.deviceCookie(first))
            #expect(Self.deviceCookie(try await passwordSignIn(client, "nia", device: niaOnly)) == nil)
            try await Self.expectNewDeviceMail(server, false)

            // A second account in the same browser: its own mail; the cookie now remembers both, newest first.
            let second = try await passwordSignIn(client, "ola", device: niaOnly)
            try await Self.expectNewDeviceMail(server, to: "ola@example.net", true)
            let both = try #require(Self.deviceCookie(second))
            #expect(Self.tags(both).count == 2 && Self.tags(both).last == Self.tags(niaOnly).first)
            #expect(Self.deviceCookie(try await passwordSignIn(client, "nia", device: both)) == nil)
            #expect(Self.deviceCookie(try await passwordSignIn(client, "ola", device: both)) == nil)
            try await Self.expectNewDeviceMail(server, false)

            // A password and a recovery code (with an authenticator app, so a second step is asked for): the second
            // step finishes the sign-in, and it is what is checked.
            let signedIn = try await signInWithPassword(client, "nia", "correct horse")
            _ = try await SecondFactorTests().enableTOTP(client, signedIn, server: server)
            _ = try await EmailAddressTests.mails(server)
            let generated = try await client.json(
                "/api/account/recovery-codes", .post, headers: signedIn.bearerHeaders)
            #expect(generated.status == .created)
            _ = try await EmailAddressTests.mails(server)
            let codes = generated.object["codes"] as? [String] ?? []
            for (code, device) in zip(codes.prefix(2), [both, nil]) {
                let pending = try await SecondFactorTests().pendingStep(client, "nia", "correct horse")
                let finished = try await client.json(
                    "/api/sessions/second-factor", .post,
                    body: jsonString(["factor": "recovery", "code": code, "pendingToken": pending.token]),
                    headers: Self.browser(device))
                #expect(finished.status == .ok, "\(finished.text)")
                let subjects = try await EmailAddressTests.mails(server).map(\.subject).sorted()
                if device == nil {
                    #expect(
                        subjects == [
                            "A recovery code of your account was used on Sesame",
                            "New sign-in to your account on Sesame",
                        ])
                    #expect(Self.tags(Self.deviceCookie(finished)) == [Self.tags(niaOnly)[0]])
                } else {
                    #expect(subjects == ["A recovery code of your account was used on Sesame"])
                    #expect(Self.deviceCookie(finished) == nil)
                }
            }
        }
    }

    static func request(cookie: String?, scheme: String = "http") -> Request {
        var fields: HTTPFields = [:]
        if let cookie { fields[.cookie] = cookie }
        return Request(
            head: HTTPRequest(
                method: .post, scheme: scheme, authority: "localhost", path: "/api/sessions/password",
                headerFields: fields),
            body: .init(buffer: .init()))
    }

    @Test func oneBrowserRemembersAtMostEightAccounts() throws {
        let devices = KnownDevices(
            serverSecret: Array(repeating: 7, count: 32), cookies: Cookies(ServerConfiguration()))
        var cookie: String? = nil
        var order: [String] = []
        for n in 0..<10 {
            #expect(!devices.knows(userID: "u\(n)", request: Self.request(cookie: cookie)))
            let header = devices.remember(userID: "u\(n)", request: Self.request(cookie: cookie))
            cookie = String(header.split(separator: ";")[0])
            order.insert(devices.tag(userID: "u\(n)"), at: 0)
            #expect(devices.knows(userID: "u\(n)", request: Self.request(cookie: cookie)))
        }
        #expect(Self.tags(cookie) == Array(order.prefix(KnownDevices.limit)))
        #expect((cookie?.utf8.count ?? 0) < 200)
        // On https the cookie is `__Secure-` prefixed and `Secure`.
        var secure = ServerConfiguration()
        secure.origin = "https://example.com"
        let header = KnownDevices(serverSecret: [7], cookies: Cookies(secure)).remember(
            userID: "u",
            request: Request(
                head: HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/api"),
                body: .init(buffer: .init())))
        #expect(header.hasPrefix("__Secure-sesame_device=") && header.hasSuffix("; Secure"))
        #expect(KnownDevices.describe(userAgent: nil) == "Unknown device")
        #expect(KnownDevices.describe(userAgent: "curl/8.5.0") == "App or other device")
        #expect(
            KnownDevices.describe(
                userAgent:
                    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1"
            ) == "Safari on iOS")
        #expect(
            KnownDevices.describe(
                userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0")
                == "Firefox on Windows")
    }

    /// An account without a verified address gets no mail (it is asked with one read, before any transaction), and
    /// the browser is remembered all the same; once the address is verified, a browser not seen before mails.
    @Test(arguments: TestDatabase.all)
    func anAccountWithoutAnAddressIsRememberedWithoutAMail(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db)
        let nia = try await server.seedUser("nia", password: "correct horse")
        try await server.app().test(.router) { client in
            let first = try await passwordSignIn(client, "nia", device: nil)
            #expect(first.status == .ok)
            #expect(Self.tags(Self.deviceCookie(first)).count == 1)
            try await Self.expectNewDeviceMail(server, false)
        }
        #expect(try await AccountNoticeTests.queued(server, nia).isEmpty)
        try await AccountNoticeTests.verify(server, nia)
        try await server.app().test(.router) { client in
            #expect(try await passwordSignIn(client, "nia", device: nil).status == .ok)
            try await Self.expectNewDeviceMail(server, true)
        }
    }

    @Test(arguments: TestDatabase.all)
    func addressesOffMailNothingButTheBrowserIsRemembered(_ db: TestDatabase) async throws {
        let server = EmailAddressTests.server(db, .off)
        let nia = try await server.seedUser("nia", password: "correct horse")
        try await AccountNoticeTests.verify(server, nia)
        try await server.app().test(.router) { client in
            let first = try await passwordSignIn(client, "nia", device: nil)
            #expect(first.status == .ok)
            #expect(Self.tags(Self.deviceCookie(first)).count == 1)
            try await Self.expectNewDeviceMail(server, false)
        }
        #expect(try await AccountNoticeTests.queued(server, nia).isEmpty)
    }
}
