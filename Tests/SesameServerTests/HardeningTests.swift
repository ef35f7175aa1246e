import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import Testing
import VirtualAuthenticator
import WebAuthn
@testable import SesameCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@testable import SesameServer

/// The hardening the security review recommended (issue 9), decided in docs/server.md and docs/threat-model.md.
@Suite struct HardeningTests {
    let journey = PasskeyJourneyTests()

    // MARK: User verification

    /// `preferred`: a sign-in without user verification works but is recorded as one factor (`passkey-up`), never as
    /// the two a verified passkey gives (`passkey`).
    @Test(arguments: TestDatabase.all)
    func signInWithoutUserVerificationIsOneFactor(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let key = VirtualAuthenticator(
            configuration: .init(userVerification: false, transports: ["usb"], attachment: "cross-platform"))
        let phone = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            let created = try await journey.signUp(client, key, "uma")
            #expect(created.status == .created, "\(created.text)")
            let presence = try await journey.signIn(client, key, username: "uma")
            #expect(presence.status == .ok, "\(presence.text)")
            #expect(try await currentMethod(client, presence) == "passkey-up")

            #expect(try await journey.signUp(client, phone, "vic").status == .created)
            let verified = try await journey.signIn(client, phone, username: nil)
            #expect(try await currentMethod(client, verified) == "passkey")
        }
    }

    /// `required`: registrations and sign-ins without user verification are refused.
    @Test(arguments: TestDatabase.all)
    func requiredUserVerificationRefusesPresenceOnly(_ db: TestDatabase) async throws {
        let server = TestServer(db) { $0.userVerification = "required" }
        let phone = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            // A registration whose UV flag is not set (an authenticator that skipped it) is refused.
            let (options, token0) = try await journey.begin(
                client, "/api/registration/options", jsonString(["username": "wes"]))
            var skipped = VirtualAuthenticator.Behaviour()
            skipped.userVerified = false
            let made = try phone.create(optionsJSON: options, origin: PasskeyJourneyTests.origin, behaviour: skipped)
            let refused = try await client.json(
                "/api/registration", .post, body: journey.credentialBody(made.json),
                headers: [PasskeyJourneyTests.ceremony: token0 ?? ""]
            )
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains("userVerificationRequired"))
            let good = VirtualAuthenticator()
            #expect(try await journey.signUp(client, good, "wes").status == .created)
            // The same passkey answering without UV (a broken or downgraded authenticator) is refused at sign-in.
            let (signInOptions, token) = try await journey.begin(client, "/api/authentication/options", "{}")
            var behaviour = VirtualAuthenticator.Behaviour()
            behaviour.userVerified = false
            let assertion = try good.get(
                optionsJSON: signInOptions, origin: PasskeyJourneyTests.origin, behaviour: behaviour)
            let signIn = try await client.json(
                "/api/authentication", .post, body: journey.credentialBody(assertion.json),
                headers: [PasskeyJourneyTests.ceremony: token ?? ""]
            )
            #expect(signIn.status == .badRequest)
            #expect(signIn.text.contains("userVerificationRequired"))
            let options2 = try await client.json("/api/authentication/options", .post, body: "{}")
            #expect(options2.object["userVerification"] as? String == "required")
        }
    }

    func currentMethod(_ client: some TestClientProtocol, _ signedIn: TestResponse) async throws -> String? {
        let token = signedIn.object["sessionToken"] as? String ?? ""
        let account = try await client.json("/api/account", headers: [.authorization: "Bearer \(token)"])
        return (account.object["session"] as? [String: Any])?["method"] as? String
    }

    // MARK: Session token only for native apps

    @Test(arguments: TestDatabase.all)
    func pagesGetNoSessionTokenInTheBody(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("xia", password: "correct horse")
        try await server.app().test(.router) { client in
            let body = jsonString(["username": "xia", "password": "correct horse"])
            let page = try await client.json(
                "/api/sessions/password", .post, body: body, headers: [.init("Sesame-Client")!: "browser"])
            #expect(page.status == .ok)
            #expect(page.object["sessionToken"] == nil)
            #expect(page.object["csrfToken"] is String)
            #expect(page.cookie(named: "sesame_session") != nil)
            let app = try await client.json(
                "/api/sessions/password", .post, body: body, headers: [.init("Sesame-Client")!: "native"])
            #expect((app.object["sessionToken"] as? String)?.utf8.count == 43)
        }
    }

    // MARK: Metrics are not public

    @Test func metricsAreNotServedWithoutAToken() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let response = try await client.json("/metrics")
            #expect(response.status == .notFound)
        }
        try await TestServer(.sqlite) { $0.metricsToken = "metrics-token-0123456789" }.app().test(.router) { client in
            let none = try await client.json("/metrics")
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Bearer")
            #expect(
                try await client.json("/metrics", headers: [.authorization: "Bearer metrics-token-0123456780"]).status
                    == .unauthorized)
            #expect(
                try await client.json("/metrics", headers: [.authorization: "Bearer metrics-token-0123456789"]).status
                    == .ok)
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(flags: ["metricsToken": "short"], environment: [:], configFile: nil)
        }
    }

    /// Metrics token guesses are limited per address (issue 26): a correct token never runs out, wrong ones get the
    /// window's budget and then 429 with `Retry-After` (the right token included), other addresses keep theirs, and
    /// the budget returns when the window ends.
    @Test func metricsTokenGuessesAreLimitedPerAddress() async throws {
        var configured = TestServer(.sqlite) { $0.metricsToken = "metrics-token-0123456789" }
        configured.rateLimits.perAddress = 5
        let server = configured
        let right: HTTPFields = [.authorization: "Bearer metrics-token-0123456789"]
        @Sendable func from(_ address: String, _ headers: HTTPFields = [:]) -> HTTPFields {
            var headers = headers
            headers[.init("X-Forwarded-For")!] = address
            return headers
        }
        try await server.app().test(.router) { client in
            for _ in 0..<20 {
                #expect(try await client.json("/metrics", headers: from("198.51.100.1", right)).status == .ok)
            }
            for guess in 0..<5 {
                let wrong: HTTPFields = [.authorization: "Bearer metrics-token-000000000\(guess)"]
                #expect(try await client.json("/metrics", headers: from("198.51.100.2", wrong)).status == .unauthorized)
            }
            let limited = try await client.json("/metrics", headers: from("198.51.100.2", right))
            #expect(limited.status == .tooManyRequests)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 > 0)
            #expect(try await client.json("/metrics", headers: from("198.51.100.1", right)).status == .ok)
            server.clock.advance(server.rateLimits.window + 1)
            #expect(try await client.json("/metrics", headers: from("198.51.100.2", right)).status == .ok)
        }
    }

    /// `metricsAddress`: a listener of its own serves `/metrics` and nothing else; the main one does not serve it.
    @Test func metricsListenerIsSeparate() async throws {
        let port = try Self.freePort()
        let server = TestServer(.sqlite) { $0.metricsAddress = "127.0.0.1:\(port)" }
        try await server.app().test(.live) { client in
            #expect(try await client.json("/metrics").status == .notFound)
            let metrics = try await Self.get("http://127.0.0.1:\(port)/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.body.contains("sesame_http_requests_total"))
            let other = try await Self.get("http://127.0.0.1:\(port)/api/account")
            #expect(other.status == 404)
        }
    }

    static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0)
            .wait()
        let port = channel.localAddress?.port ?? 0
        try channel.close().wait()
        return port
    }

    /// A GET with retries while the listener starts.
    static func get(_ url: String) async throws -> (status: Int, body: String) {
        var lastError: (any Error)?
        for _ in 0..<50 {
            do {
                var request = URLRequest(url: URL(string: url)!)
                request.timeoutInterval = 5
                let (data, response) = try await URLSession.shared.data(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        throw lastError ?? URLError(.cannotConnectToHost)
    }

    // MARK: Console SMS on https

    @Test func consoleSMSIsRefusedOnHTTPSUnlessAllowed() throws {
        let https = ["origin": "https://login.example.com", "rpID": "example.com"]
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(flags: https, environment: [:], configFile: nil)
        }
        let allowed = try ServerConfiguration.resolve(
            flags: https.merging(["allowConsoleSMS": "true"]) { $1 }, environment: [:], configFile: nil)
        #expect(allowed.smsSender == "console")
        let webhook = try ServerConfiguration.resolve(
            flags: https.merging(["smsSender": "https://sms.example.com/hook"]) { $1 }, environment: [:],
            configFile: nil
        )
        #expect(webhook.smsSender == "https://sms.example.com/hook")
        // Plain http (development) keeps console as the default.
        #expect(try ServerConfiguration.resolve(flags: [:], environment: [:], configFile: nil).smsSender == "console")
    }

    // MARK: The Origin exemption needs a live bearer token

    @Test(arguments: TestDatabase.all)
    func onlyALiveBearerTokenSkipsTheOriginCheck(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("yan", password: "correct horse")
        try await server.app().test(.router) { client in
            let foreign: HTTPFields = [.origin: "https://evil.example"]
            let body = jsonString(["username": "yan", "password": "correct horse"])
            // Any Authorization header used to exempt the request: a garbage one must not.
            for authorization in [
                "Bearer nonsense", "Basic eWFuOmNvcnJlY3QgaG9yc2U=", "Bearer " + String(repeating: "A", count: 43),
            ] {
                var headers = foreign
                headers[.authorization] = authorization
                let r = try await client.json("/api/sessions/password", .post, body: body, headers: headers)
                #expect(r.status == .forbidden, "\(authorization)")
                #expect(r.errorCode == "origin_not_allowed")
            }
            let session = try await signInWithPassword(client, "yan", "correct horse")
            var live = foreign
            live[.authorization] = "Bearer \(session.token)"
            let rename = try await client.json(
                "/api/account", .patch, body: jsonString(["displayName": "Yan"]), headers: live)
            #expect(rename.status == .ok, "\(rename.text)")
        }
    }
}
