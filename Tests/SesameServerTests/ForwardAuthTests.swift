import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameServer
@testable import SesameCore
@testable import SesameIdentityProvider
@testable import SesameForwardAuth

/// Forward auth over HTTP, as a proxy and an attacker would call it: who passes and with which headers, where the
/// signed-out go (never a foreign address), the passkey rule, the cookie domain's cookie and the checks it must not
/// weaken, and the code exchange for apps on other domains (replayed, expired, foreign and cross-browser codes).
@Suite struct ForwardAuthTests {
    static let origin = "https://auth.example.com"
    static let ceremony = HTTPField.Name("Sesame-Ceremony")!
    static let xfProto = HTTPField.Name("X-Forwarded-Proto")!
    static let xfHost = HTTPField.Name("X-Forwarded-Host")!
    static let xfURI = HTTPField.Name("X-Forwarded-Uri")!

    static func server(_ db: TestDatabase) -> TestServer {
        TestServer(db, origin: origin) {
            $0.rpID = "example.com"
            $0.cookieDomain = "example.com"
            $0.forwardAuthDomains = ["example.com", "other.net"]
            $0.forwardAuthPasskeyDomains = ["admin.example.com", "vault.other.net"]
        }
    }

    static func forwarded(_ host: String, _ uri: String = "/", proto: String = "https", cookie: String? = nil)
        -> HTTPFields
    {
        var fields: HTTPFields = [xfProto: proto, xfHost: host, xfURI: uri]
        if let cookie { fields[.cookie] = cookie }
        return fields
    }

    static func check(
        _ client: some TestClientProtocol, _ host: String, _ uri: String = "/", proto: String = "https",
        cookie: String? = nil, mode: String? = nil
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/forward-auth" + (mode.map { "?mode=\($0)" } ?? ""), method: .get,
            headers: forwarded(host, uri, proto: proto, cookie: cookie), body: nil)
    }

    static func get(_ client: some TestClientProtocol, _ uri: String, _ headers: HTTPFields = [:]) async throws
        -> TestResponse
    {
        try await client.execute(uri: uri, method: .get, headers: headers, body: nil)
    }

    static func encoded(_ value: String) -> String { FormParameters.encode([("x", value)]).dropFirst(2).description }

    static func setCookies(_ response: TestResponse) -> [String] { response.headers[values: .setCookie] }

    static func passkeySignUp(_ client: some TestClientProtocol, _ username: String) async throws -> SignedIn {
        let va = VirtualAuthenticator(configuration: .init(transports: ["internal"]))
        let options = try await client.json(
            "/api/registration/options", .post,
            body: jsonString(["username": username, "displayName": "\(username) Example"]))
        #expect(options.status == .ok)
        let created = try va.create(optionsJSON: Array(options.body.readableBytesView), origin: origin)
        let response = try await client.json(
            "/api/registration", .post,
            body: #"{"credential":"# + String(decoding: created.json, as: UTF8.self) + "}",
            headers: [ceremony: options.headers[ceremony] ?? ""])
        #expect(response.status == .ok || response.status == .created, "\(response.text)")
        return SignedIn(
            cookie: response.cookie(named: "__Secure-sesame_session") ?? "",
            csrf: response.object["csrfToken"] as? String ?? "", token: response.object["sessionToken"] as? String ?? ""
        )
    }

    @Test(arguments: TestDatabase.all)
    func signedOutPeopleAreSentToSignInAndNeverToAForeignAddress(_ db: TestDatabase) async throws {
        try await Self.server(db).app().test(.router) { client in
            // Under the cookie domain: straight to Sesame's return endpoint, the address kept whole.
            let redirect = try await Self.check(client, "app.example.com", "/dash?a=1&b=%2F")
            #expect(redirect.status == .found)
            let expected =
                "https://auth.example.com/forward-auth/return?rd="
                + Self.encoded("https://app.example.com/dash?a=1&b=%2F")
            #expect(redirect.headers[.location] == expected)
            #expect(redirect.headers[.cacheControl] == "no-store")
            // nginx style: 401, with the same Location for `error_page 401 =302`.
            let status = try await Self.check(client, "app.example.com", "/dash?a=1&b=%2F", mode: "status")
            #expect(status.status == .unauthorized)
            #expect(status.headers[.location] == expected)
            // Another domain: first the callback on the app's own host, which starts the code exchange.
            let other = try await Self.check(client, "app.other.net:8443", "/x")
            #expect(
                other.headers[.location]
                    == "https://app.other.net:8443/_sesame/callback?rd=" + Self.encoded("https://app.other.net:8443/x"))
            #expect(try await Self.check(client, "app.example.com", mode: "nginx").status == .badRequest)

            // Hosts Sesame does not answer for: 403, never a redirect.
            for (host, proto) in [
                ("evil.test", "https"), ("badexample.com", "https"), ("example.com.evil.test", "https"),
                ("app.example.com@evil.test", "https"), ("app.example.com", "http"), ("app.example.com", "ftp"),
                ("127.0.0.1", "https"), ("[::1]", "https"), ("app.example.com:99999", "https"),
                ("app.example.com\r\nx", "https"),
            ] {
                let refused = try await Self.check(client, host, proto: proto)
                #expect(refused.status == .forbidden, "\(host) \(proto)")
                #expect(refused.errorCode == "host_not_allowed")
                #expect(refused.headers[.location] == nil)
            }
            let bareURI = try await Self.check(client, "app.example.com", "https://evil.test/")
            #expect(bareURI.status == .forbidden)
            var twice = Self.forwarded("app.example.com")
            twice.append(HTTPField(name: Self.xfHost, value: "evil.test"))
            #expect(try await Self.get(client, "/forward-auth", twice).status == .forbidden)
            #expect(try await Self.get(client, "/forward-auth").status == .forbidden)

            // The return endpoint refuses every foreign or ambiguous address without redirecting.
            for rd in [
                "https://evil.test/", "//evil.test/", "https://app.example.com@evil.test/",
                "https://evil.test\\@app.example.com/", "https://evil.test#@app.example.com", "javascript:alert(1)",
                "https://app.example.com.evil.test/", "http://app.example.com/", "https:/app.example.com/",
                "HTTPS://EVIL.TEST/", "https://app.example.com/\u{0}", "/account",
            ] {
                let refused = try await Self.get(client, "/forward-auth/return?rd=" + Self.encoded(rd))
                #expect(refused.status == .forbidden, "\(rd)")
                #expect(refused.headers[.location] == nil, "\(rd)")
            }
            let repeated = try await Self.get(
                client, "/forward-auth/return?rd=https%3A%2F%2Fapp.example.com%2F&rd=https%3A%2F%2Fevil.test%2F")
            #expect(repeated.status == .forbidden)
            #expect(repeated.headers[.location] == nil)
            // A known address without a session: to the sign-in page, which comes back here.
            let signIn = try await Self.get(
                client, "/forward-auth/return?rd=" + Self.encoded("https://app.example.com/"))
            #expect(signIn.status == .seeOther)
            #expect(
                signIn.headers[.location]
                    == "/signin?return="
                    + Self.encoded("/forward-auth/return?rd=" + Self.encoded("https://app.example.com/")))
        }
    }

    @Test(arguments: TestDatabase.all)
    func theCookieDomainSessionPassesAndTheChecksStayStrict(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let signIn = try await client.json(
                "/api/sessions/password", .post,
                body: jsonString(["username": "ada", "password": "correct horse battery"]),
                headers: [.init("Sesame-Client")!: "web"])
            #expect(signIn.status == .ok)
            let set = try #require(Self.setCookies(signIn).first { $0.contains("sesame_session=") })
            #expect(set.hasPrefix("__Secure-sesame_session="))
            #expect(!set.contains("__Host-"))
            let attributes = Set(set.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(attributes.isSuperset(of: ["Domain=example.com", "Path=/", "HttpOnly", "SameSite=Lax", "Secure"]))
            let cookie = try #require(signIn.cookie(named: "__Secure-sesame_session"))
            let csrf = try #require(signIn.object["csrfToken"] as? String)

            let passed = try await Self.check(client, "app.example.com", "/x", cookie: cookie)
            #expect(passed.status == .ok)
            #expect(passed.headers[ForwardAuthService.remoteUser] == "ada")
            #expect(passed.headers[ForwardAuthService.remoteName] == "Ada")
            #expect(passed.headers[ForwardAuthService.remoteAmr] == "pwd")
            #expect(passed.headers[.cacheControl] == "no-store")
            // The app's own Authorization header does not hide the cookie, nor does a bogus one pass.
            var withAuthorization = Self.forwarded("app.example.com", cookie: cookie)
            withAuthorization[.authorization] = "Basic YTpi"
            #expect(try await Self.get(client, "/forward-auth", withAuthorization).status == .ok)
            var bearerOnly = Self.forwarded("app.example.com")
            bearerOnly[.authorization] = "Bearer " + String(repeating: "A", count: 43)
            #expect(try await Self.get(client, "/forward-auth", bearerOnly).status == .found)
            // Signed in, the return endpoint goes on to the app (the cookie reaches it).
            let back = try await Self.get(
                client, "/forward-auth/return?rd=" + Self.encoded("https://app.example.com/x?y=1"), [.cookie: cookie])
            #expect(back.status == .seeOther)
            #expect(back.headers[.location] == "https://app.example.com/x?y=1")
            // A valid session at a host Sesame does not answer for is still refused.
            #expect(try await Self.check(client, "evil.test", cookie: cookie).status == .forbidden)

            // CSRF and origin checks are as strict as with a host-only cookie: a sibling host's page is refused.
            let body = jsonString(["displayName": "Mallory"])
            let noToken = try await client.json(
                "/api/account", .patch, body: body, headers: [.cookie: cookie, .init("Sesame-Client")!: "web"])
            #expect(noToken.status == .forbidden)
            #expect(noToken.errorCode == "csrf_check_failed")
            let sibling = try await client.json(
                "/api/account", .patch, body: body,
                headers: [
                    .cookie: cookie, .init("X-CSRF-Token")!: csrf, .origin: "https://app.example.com",
                    .init("Sesame-Client")!: "web",
                ])
            #expect(sibling.status == .forbidden)
            #expect(sibling.errorCode == "origin_not_allowed")
            let own = try await client.json(
                "/api/account", .patch, body: body,
                headers: [
                    .cookie: cookie, .init("X-CSRF-Token")!: csrf, .origin: Self.origin, .init("Sesame-Client")!: "web",
                ])
            #expect(own.status == .ok)
            // The old host-only name is not read any more.
            let hostOnly = cookie.replacingOccurrences(of: "__Secure-", with: "__Host-")
            #expect(try await Self.get(client, "/api/account", [.cookie: hostOnly]).status == .unauthorized)

            // Signing out ends it at the proxy too, and the clearing cookie names the same domain.
            let out = try await client.json(
                "/api/session", .delete, headers: [.cookie: cookie, .init("X-CSRF-Token")!: csrf])
            #expect(out.status == .ok || out.status == .noContent)
            #expect(Self.setCookies(out).contains { $0.contains("Domain=example.com") && $0.contains("Max-Age=0") })
            #expect(try await Self.check(client, "app.example.com", cookie: cookie).status == .found)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aPasskeyOnlyHostNeedsAPasskeySignIn(_ db: TestDatabase) async throws {
        let server = Self.server(db)
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let password = try await signInWithPassword(
                client, "ada", "correct horse battery", cookieName: "__Secure-sesame_session")
            #expect(try await Self.check(client, "app.example.com", cookie: password.cookie).status == .ok)
            let refused = try await Self.check(client, "admin.example.com", cookie: password.cookie, mode: "status")
            #expect(refused.status == .unauthorized)
            let rd = "https://admin.example.com/"
            let page = try await Self.get(
                client, "/forward-auth/return?rd=" + Self.encoded(rd), [.cookie: password.cookie])
            #expect(page.status == .seeOther)
            #expect(
                page.headers[.location]
                    == "/signin?return=" + Self.encoded("/forward-auth/return?rd=" + Self.encoded(rd))
                    + "&passkey=required")

            let passkey = try await Self.passkeySignUp(client, "zoe")
            let passed = try await Self.check(client, "deep.admin.example.com", cookie: passkey.cookie)
            #expect(passed.status == .ok)
            #expect(passed.headers[ForwardAuthService.remoteUser] == "zoe")
            // The test authenticator's passkeys are device-bound (BE clear): hardware key.
            #expect(passed.headers[ForwardAuthService.remoteAmr] == "pop,hwk,user,mfa")
        }
    }

    /// Follows the exchange for `rd` from the callback's start to the code; returns the state cookie (`name=value`)
    /// and the code.
    static func startExchange(
        _ client: some TestClientProtocol, rd: String, host: String, session: String
    ) async throws -> (state: String, code: String) {
        let start = try await get(
            client, "/forward-auth/callback?rd=" + encoded(rd), forwarded(host, "/_sesame/callback"))
        #expect(start.status == .seeOther, "\(start.text)")
        let stateSet = try #require(setCookies(start).first)
        #expect(stateSet.hasPrefix("__Secure-sesame_forward_state="))
        #expect(stateSet.contains("Path=/_sesame/callback"))
        #expect(!stateSet.contains("Domain="))
        let state = String(stateSet.split(separator: ";")[0])
        let toSesame = try #require(start.headers[.location])
        #expect(toSesame.hasPrefix("https://auth.example.com/forward-auth/return?rd=" + encoded(rd) + "&state="))
        let back = try await get(
            client, String(toSesame.dropFirst("https://auth.example.com".count)), [.cookie: session])
        #expect(back.status == .seeOther)
        let callback = try #require(back.headers[.location])
        let prefix = "https://\(host)/_sesame/callback?code="
        #expect(callback.hasPrefix(prefix))
        #expect(!callback.contains(session.split(separator: "=").last.map(String.init) ?? "-"))
        return (state, String(callback.dropFirst(prefix.count)))
    }

    @Test(arguments: TestDatabase.all)
    func appsOnOtherDomainsGetAHostOnlyCookieThroughAOneTimeCode(_ db: TestDatabase) async throws {
        var limited = Self.server(db)
        limited.rateLimits.ceremoniesPerAddress = 20
        let server = limited
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.seedUser("mallory", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let ada = try await signInWithPassword(
                client, "ada", "correct horse battery", cookieName: "__Secure-sesame_session")
            let mallory = try await signInWithPassword(
                client, "mallory", "correct horse battery", cookieName: "__Secure-sesame_session")
            let host = "app.other.net"
            let rd = "https://app.other.net/page?q=1"
            // Sesame's own cookie does not reach other.net (a proxy that forwarded it anyway gains nothing).
            #expect(try await Self.check(client, host, cookie: ada.cookie).status == .found)
            // The start refuses an address on another origin than the proxy's.
            let foreign = try await Self.get(
                client, "/forward-auth/callback?rd=" + Self.encoded("https://app2.other.net/"),
                Self.forwarded(host))
            #expect(foreign.status == .forbidden)
            #expect(foreign.headers[.location] == nil)
            // The return endpoint refuses a cross-domain return without the callback's state.
            let stateless = try await Self.get(
                client, "/forward-auth/return?rd=" + Self.encoded(rd), [.cookie: ada.cookie])
            #expect(stateless.status == .badRequest)
            #expect(stateless.headers[.location] == nil)

            // Without the state cookie, or at another host, the code does nothing, and is burnt.
            for headers in [Self.forwarded(host), Self.forwarded("app2.other.net")] {
                let (state, code) = try await Self.startExchange(client, rd: rd, host: host, session: ada.cookie)
                let wrong = try await Self.get(
                    client, "/forward-auth/callback?code=\(code)",
                    headers[Self.xfHost] == host ? headers : Self.forwarded("app2.other.net", cookie: state))
                #expect(wrong.status == .badRequest)
                #expect(wrong.errorCode == "challenge_invalid")
                #expect(Self.setCookies(wrong).isEmpty)
                let after = try await Self.get(
                    client, "/forward-auth/callback?code=\(code)", Self.forwarded(host, cookie: state))
                #expect(after.status == .badRequest, "a code shown to the wrong browser or host stays usable")
            }

            let (state, code) = try await Self.startExchange(client, rd: rd, host: host, session: ada.cookie)

            let done = try await Self.get(
                client, "/forward-auth/callback?code=\(code)", Self.forwarded(host, cookie: state))
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == rd)
            #expect(done.headers[.init("Referrer-Policy")!] == "no-referrer")
            let set = try #require(Self.setCookies(done).first { $0.hasPrefix("__Host-sesame_forward=") })
            let attributes = Set(set.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(attributes.isSuperset(of: ["Path=/", "HttpOnly", "SameSite=Lax", "Secure"]))
            #expect(!set.contains("Domain="))
            #expect(Self.setCookies(done).contains { $0.hasPrefix("__Secure-sesame_forward_state=;") })
            let forward = String(set.split(separator: ";")[0])

            // Single use.
            let replay = try await Self.get(
                client, "/forward-auth/callback?code=\(code)", Self.forwarded(host, cookie: state))
            #expect(replay.status == .badRequest)
            #expect(replay.errorCode == "challenge_invalid")

            let passed = try await Self.check(client, host, "/page", cookie: forward)
            #expect(passed.status == .ok)
            #expect(passed.headers[ForwardAuthService.remoteUser] == "ada")
            // Bound to its origin: useless at a sibling app, at another port, and at Sesame's own API.
            #expect(try await Self.check(client, "app2.other.net", cookie: forward).status == .found)
            #expect(try await Self.check(client, "app.other.net:444", cookie: forward).status == .found)
            let value = String(forward.split(separator: "=", maxSplits: 1)[1])
            #expect(
                try await Self.get(client, "/api/account", [.cookie: "__Secure-sesame_session=\(value)"]).status
                    == .unauthorized)
            #expect(
                try await Self.get(client, "/api/account", [.authorization: "Bearer \(value)"]).status == .unauthorized)
            // A tampered value fails.
            var tampered = Array(value.utf8)
            tampered[10] = tampered[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(
                try await Self.check(
                    client, host, cookie: "__Host-sesame_forward=" + String(decoding: tampered, as: UTF8.self)
                ).status == .found)

            // Someone pushing their own code on you (login CSRF): their code is bound to their state, not yours.
            let (_, malloryCode) = try await Self.startExchange(client, rd: rd, host: host, session: mallory.cookie)
            let (victimState, _) = try await Self.startExchange(client, rd: rd, host: host, session: ada.cookie)
            let pushed = try await Self.get(
                client, "/forward-auth/callback?code=\(malloryCode)", Self.forwarded(host, cookie: victimState))
            #expect(pushed.status == .badRequest)
            #expect(Self.setCookies(pushed).allSatisfy { !$0.hasPrefix("__Host-sesame_forward=") })
            // The other way round: a code made with someone else's state hash for your session, once your browser
            // showed it at the callback, is of no use to the one who holds that state.
            let (attackerState, _) = try await Self.startExchange(client, rd: rd, host: host, session: mallory.cookie)
            let attackerHash = Base64URL.encode(
                Secrets.sha256(String(attackerState.split(separator: "=", maxSplits: 1)[1])))
            let forged = try await Self.get(
                client,
                "/forward-auth/return?rd=" + Self.encoded(rd) + "&state=" + attackerHash, [.cookie: ada.cookie])
            let forgedCallback = try #require(forged.headers[.location])
            let forgedCode = String(forgedCallback.split(separator: "=", maxSplits: 1)[1])
            #expect(
                try await Self.get(client, "/forward-auth/callback?code=\(forgedCode)", Self.forwarded(host)).status
                    == .badRequest)
            let stolen = try await Self.get(
                client, "/forward-auth/callback?code=\(forgedCode)", Self.forwarded(host, cookie: attackerState))
            #expect(stolen.status == .badRequest)
            #expect(Self.setCookies(stolen).isEmpty)

            // Expired after a minute.
            let (lateState, lateCode) = try await Self.startExchange(client, rd: rd, host: host, session: ada.cookie)
            server.clock.advance(61)
            let late = try await Self.get(
                client, "/forward-auth/callback?code=\(lateCode)", Self.forwarded(host, cookie: lateState))
            #expect(late.status == .badRequest)
            #expect(late.errorCode == "challenge_invalid")

            // Codes count against the address's ceremony budget like every other stored challenge.
            let budget = server.rateLimits.ceremoniesPerAddress
            var statuses: [HTTPResponse.Status] = []
            let start = try await Self.get(
                client, "/forward-auth/callback?rd=" + Self.encoded(rd), Self.forwarded(host, "/_sesame/callback"))
            let toSesame = String(try #require(start.headers[.location]).dropFirst(Self.origin.count))
            for _ in 0...budget {
                statuses.append(
                    try await Self.get(client, toSesame, [.cookie: ada.cookie, .init("X-Forwarded-For")!: "192.0.2.9"])
                        .status)
            }
            #expect(statuses.last == .tooManyRequests)
            #expect(statuses.first == .seeOther)

            // Signing out of Sesame ends the app's cookie with the session.
            let out = try await client.json(
                "/api/session", .delete, headers: [.cookie: ada.cookie, .init("X-CSRF-Token")!: ada.csrf])
            #expect(out.status == .ok || out.status == .noContent)
            #expect(try await Self.check(client, host, cookie: forward).status == .found)
        }
        // One audit event for the one exchange that set a cookie, naming the app.
        let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 100) }
            .filter { $0.kind == AuditKind.forwardAuthSignedIn.rawValue }
        #expect(events.map(\.detail) == ["https://app.other.net"])
        #expect(events.map(\.username) == ["ada"])
    }

    @Test(arguments: [
        ("https://app.example.com", "app.example.com", nil as Int?, "/"),
        ("https://App.Example.com:8443/a/b?c=d#frag", "app.example.com", 8443, "/a/b?c=d"),
        ("http://x.other.net?q", "x.other.net", nil, "/?q"),
    ])
    func targetsAreReadStrictly(_ url: String, _ host: String, _ port: Int?, _ path: String) throws {
        let target = try #require(ForwardTarget(url: url))
        #expect(target.host == host)
        #expect(target.port == port)
        #expect(target.path == path)
    }

    /// Mutations of well-formed addresses (a fixed-seed generator, so a failure repeats): the reader never traps,
    /// and whatever it accepts reads back the same from its own `url`, with a valid host and a printable path.
    @Test func mutatedAddressesAreReadConsistently() {
        struct SplitMix: RandomNumberGenerator {
            var state: UInt64
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
        var random = SplitMix(state: 16)
        let seeds = [
            "https://app.example.com/a?b=c", "http://x.other.net:8080/", "https://a.b/#f", "https://h.example/p%2Fq",
        ]
        let alphabet = Array("/:@?#.\\%-_ab09AZ\u{0}\u{7F}\u{FF} []é")
        var accepted = 0
        for _ in 0..<20_000 {
            var characters = Array(seeds[Int.random(in: 0..<seeds.count, using: &random)])
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0...characters.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: characters.insert(alphabet.randomElement(using: &random)!, at: index)
                case 1 where index < characters.count: characters.remove(at: index)
                default:
                    if index < characters.count { characters[index] = alphabet.randomElement(using: &random)! }
                }
            }
            guard let target = ForwardTarget(url: String(characters)) else { continue }
            accepted += 1
            #expect(ForwardTarget(url: target.url) == target, "\(String(characters))")
            #expect(DomainName.isValid(target.host))
            #expect(target.path.hasPrefix("/") && target.path.utf8.allSatisfy { (0x21...0x7E).contains($0) })
            #expect(!target.url.contains("@") || target.path.contains("@"))
        }
        #expect(accepted > 1000)
    }

    @Test func settingsRefuseWhatCannotWork() throws {
        func resolve(_ flags: [String: String]) throws -> ServerConfiguration {
            try ServerConfiguration.resolve(
                flags: [
                    "origin": "https://auth.example.com", "rpID": "example.com", "smsSender": "https://sms.example",
                ]
                .merging(flags) { _, new in new }, environment: [:], configFile: nil)
        }
        #expect(try resolve(["cookieDomain": "Example.com"]).cookieDomain == "example.com")
        #expect(throws: ConfigurationError.self) { try resolve(["cookieDomain": "other.net"]) }
        #expect(throws: ConfigurationError.self) { try resolve(["cookieDomain": "xample.com"]) }
        #expect(throws: ConfigurationError.self) { try resolve(["cookieDomain": ".example.com"]) }
        #expect(throws: ConfigurationError.self) { try resolve(["forwardAuthDomains": "example.com,evil test"]) }
        #expect(throws: ConfigurationError.self) {
            try resolve(["forwardAuthDomains": "example.com", "forwardAuthPasskeyDomains": "other.net"])
        }
        let ok = try resolve([
            "forwardAuthDomains": "example.com, other.net", "forwardAuthPasskeyDomains": "a.other.net",
        ])
        #expect(ok.forwardAuthDomains == ["example.com", "other.net"])
    }
}
