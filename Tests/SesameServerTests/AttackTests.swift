import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OneTimeCode
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameServer
@testable import SesameCore
@testable import SesamePasswords
@testable import SesameForwardAuth

/// The attacks of issue 13 that no other suite made over HTTP on both engines, or made more weakly than the issue
/// words them. Each must fail to get in. docs/threat-model.md ("Attacks and their tests") maps every attack of the
/// issue to its tests, here and in the other suites.
@Suite struct AttackTests {
    static let ceremony = PasskeyJourneyTests.ceremony
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    let journey = PasskeyJourneyTests()
    let factors = SecondFactorTests()

    // MARK: Replayed or foreign challenge

    /// An assertion over one ceremony's challenge, finished under another live ceremony's token; one over a challenge
    /// the server never issued; one over a sign-up challenge. None signs in, and no session is written.
    @Test(arguments: TestDatabase.all, SignInChallenges.allModes)
    func foreignChallengesDoNotSignIn(_ db: TestDatabase, _ mode: SignInChallenges) async throws {
        let server = TestServer(db) { $0.signInChallenges = mode }
        let va = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            #expect(try await journey.signUp(client, va, "fay").status == .created)

            // Two ceremonies, both live: A's assertion under B's token.
            let (optionsA, _) = try await journey.begin(client, "/api/authentication/options", "{}")
            let (_, tokenB) = try await journey.begin(client, "/api/authentication/options", "{}")
            let overA = journey.credentialBody(
                try va.get(optionsJSON: optionsA, origin: PasskeyJourneyTests.origin).json)
            let crossed = try await client.json(
                "/api/authentication", .post, body: overA, headers: [Self.ceremony: tokenB ?? ""])
            #expect(crossed.status == .badRequest)
            #expect(crossed.errorCode == "challenge_invalid")
            // Without any ceremony token at all.
            let bare = try await client.json("/api/authentication", .post, body: overA)
            #expect(bare.errorCode == "challenge_invalid")

            // A challenge the server never issued (the client data's challenge changed after the options).
            let (optionsC, tokenC) = try await journey.begin(client, "/api/authentication/options", "{}")
            var invented = VirtualAuthenticator.Behaviour()
            invented.tamperChallenge = true
            let made = try va.get(optionsJSON: optionsC, origin: PasskeyJourneyTests.origin, behaviour: invented)
            let madeUp = try await client.json(
                "/api/authentication", .post, body: journey.credentialBody(made.json),
                headers: [Self.ceremony: tokenC ?? ""])
            #expect(madeUp.status == .badRequest)
            #expect(madeUp.errorCode == "challenge_invalid")

            // A sign-up ceremony's challenge and token, answered with an assertion.
            let (registration, registrationToken) = try await journey.begin(
                client, "/api/registration/options", #"{"username":"fay-two"}"#)
            let challenge = try #require(
                (try JSONSerialization.jsonObject(with: Data(registration)) as? [String: Any])?["challenge"] as? String)
            let getOptions = jsonString(["challenge": challenge, "rpId": "localhost", "userVerification": "preferred"])
            let overSignUp = try va.get(optionsJSON: Array(getOptions.utf8), origin: PasskeyJourneyTests.origin)
            let purpose = try await client.json(
                "/api/authentication", .post, body: journey.credentialBody(overSignUp.json),
                headers: [Self.ceremony: registrationToken ?? ""])
            #expect(purpose.status == .badRequest)
            #expect(purpose.errorCode == "challenge_invalid")

            // A's own token still has its challenge only if the crossed attempt did not use it up; either way, the
            // replay of a finished one is refused (PasskeyJourneyTests.challengesAreSingleUseBoundAndExpire).
        }
        let fay = try #require(try await server.withStore { try await $0.user(usernameKey: "fay") })
        #expect(try await server.withStore { try await $0.sessions(userID: fay.id, now: server.clock.now) }.count == 1)
        #expect(try await server.withStore { try await $0.user(usernameKey: "fay-two") } == nil)
    }

    // MARK: Cloned authenticator

    /// A copy of a credential whose counter is behind the original's (or level with it) is refused under the
    /// configured policy (`SignCountPolicy.reject`, the server's only policy), the stored counter does not move, and
    /// the original keeps working. An authenticator without a counter (always 0) is not taken for a clone.
    @Test(arguments: TestDatabase.all, SignInChallenges.allModes)
    func clonedAuthenticatorIsRefused(_ db: TestDatabase, _ mode: SignInChallenges) async throws {
        let server = TestServer(db) { $0.signInChallenges = mode }
        let key = VirtualAuthenticator(
            configuration: .init(signCounter: true, transports: ["usb"], attachment: "cross-platform"))
        let counterless = VirtualAuthenticator(configuration: .init(signCounter: false))
        #expect(server.configuration.origin == PasskeyJourneyTests.origin)
        try await server.app().test(.router) { client in
            #expect(try await journey.signUp(client, key, "cleon").status == .created)
            #expect(try await journey.signUp(client, counterless, "zero").status == .created)

            func signIn(_ va: VirtualAuthenticator, _ username: String, count: UInt32?) async throws -> TestResponse {
                let (options, token) = try await journey.begin(
                    client, "/api/authentication/options", jsonString(["username": username]))
                var behaviour = VirtualAuthenticator.Behaviour()
                behaviour.signCount = count
                let assertion = try va.get(
                    optionsJSON: options, origin: PasskeyJourneyTests.origin, behaviour: behaviour)
                return try await client.json(
                    "/api/authentication", .post, body: journey.credentialBody(assertion.json),
                    headers: [Self.ceremony: token ?? ""])
            }
            #expect(try await signIn(key, "cleon", count: 40).status == .ok)
            for clone in [UInt32(40), 39, 1, 0] {
                let r = try await signIn(key, "cleon", count: clone)
                #expect(r.status == .badRequest, "clone at \(clone)")
                #expect(r.errorCode == "authentication_failed")
                #expect(r.object["sessionToken"] == nil)
            }
            #expect(try await signIn(key, "cleon", count: 41).status == .ok)
            // Counterless: 0 after 0 is allowed (WebAuthn §7.2 step 22).
            #expect(try await signIn(counterless, "zero", count: nil).status == .ok)
            #expect(try await signIn(counterless, "zero", count: nil).status == .ok)
        }
        #expect(try await server.withStore { try await $0.credential(id: key.credentials[0].id) }?.signCount == 41)
        let cleon = try #require(try await server.withStore { try await $0.user(usernameKey: "cleon") })
        #expect(
            try await server.withStore { try await $0.sessions(userID: cleon.id, now: server.clock.now) }.count == 3)
        let events = try await server.withStore { try await $0.auditEvents(userID: cleon.id, limit: 50) }
        #expect(events.filter { $0.kind == "sign_in.passkey" && $0.outcome == "failure" }.count == 4)
    }

    // MARK: Swapped user handle

    /// A discoverable sign-in whose assertion carries another account's user handle (or none) with this account's
    /// credential: refused, no session for either account.
    @Test(arguments: TestDatabase.all, SignInChallenges.allModes)
    func swappedUserHandleIsRefused(_ db: TestDatabase, _ mode: SignInChallenges) async throws {
        let server = TestServer(db) { $0.signInChallenges = mode }
        let alice = VirtualAuthenticator()
        let bob = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            #expect(try await journey.signUp(client, alice, "alice").status == .created)
            #expect(try await journey.signUp(client, bob, "bob").status == .created)
            let bobHandle = try #require(try await server.withStore { try await $0.user(usernameKey: "bob") })
                .userHandle
            for handle in [VirtualAuthenticator.UserHandle.bytes(bobHandle), .omitted, .bytes([0x41])] {
                let (options, token) = try await journey.begin(client, "/api/authentication/options", "{}")
                var behaviour = VirtualAuthenticator.Behaviour()
                behaviour.userHandle = handle
                let assertion = try alice.get(
                    optionsJSON: options, origin: PasskeyJourneyTests.origin, behaviour: behaviour)
                let r = try await client.json(
                    "/api/authentication", .post, body: journey.credentialBody(assertion.json),
                    headers: [Self.ceremony: token ?? ""])
                #expect(r.status == .badRequest, "\(handle): \(r.text)")
                #expect(r.errorCode == "authentication_failed")
                #expect(r.object["sessionToken"] == nil)
            }
        }
        for name in ["alice", "bob"] {
            let user = try #require(try await server.withStore { try await $0.user(usernameKey: name) })
            #expect(
                try await server.withStore { try await $0.sessions(userID: user.id, now: server.clock.now) }.count == 1)
        }
    }

    // MARK: Origin and RP ID mismatches

    static let httpsOrigin = "https://example.com"

    /// Origins a phishing page could have: look-alike and nested hosts, another scheme, port or subdomain.
    static let foreignOrigins = [
        "https://example.com.evil.test", "https://evil-example.com", "https://examp1e.com",
        "https://xn--exmple-cua.com", "https://login.example.com", "https://example.co", "http://example.com",
        "https://example.com:8443", "https://example.com.", "null", "",
    ]

    /// RP IDs a look-alike relying party could have its authenticator sign for.
    static let foreignRPIDs = [
        "evil.test", "example.com.evil.test", "ample.com", "login.example.com", "com", "EXAMPLE.COM",
    ]

    static func httpsServer(_ db: TestDatabase) -> TestServer {
        TestServer(db, origin: httpsOrigin) { $0.rpID = "example.com" }
    }

    @Test(arguments: TestDatabase.all)
    func foreignOriginsAndRPIDsNeitherSignUpNorSignIn(_ db: TestDatabase) async throws {
        let server = Self.httpsServer(db)
        let va = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            var behaviours: [(String, VirtualAuthenticator.Behaviour)] = []
            for origin in Self.foreignOrigins {
                var b = VirtualAuthenticator.Behaviour()
                b.clientDataOrigin = origin
                behaviours.append(("origin \(origin)", b))
            }
            for rpID in Self.foreignRPIDs {
                var b = VirtualAuthenticator.Behaviour()
                b.rpIdForHash = rpID
                behaviours.append(("rpIdHash of \(rpID)", b))
            }
            var framed = VirtualAuthenticator.Behaviour()
            framed.crossOrigin = true
            framed.topOrigin = "https://evil.test"
            behaviours.append(("framed by another origin", framed))

            for (index, (label, behaviour)) in behaviours.enumerated() {
                let (options, token) = try await journey.begin(
                    client, "/api/registration/options", jsonString(["username": "phish\(index)"]))
                let made = try va.create(optionsJSON: options, origin: Self.httpsOrigin, behaviour: behaviour)
                let r = try await client.json(
                    "/api/registration", .post, body: journey.credentialBody(made.json),
                    headers: [Self.ceremony: token ?? ""])
                #expect(r.status == .badRequest, "sign-up, \(label): \(r.text)")
                #expect(r.errorCode == "registration_failed", "sign-up, \(label)")
            }

            // A real account, then every foreign sign-in with its passkey, username-first and discoverable.
            let owner = VirtualAuthenticator()
            let (options, token) = try await journey.begin(client, "/api/registration/options", #"{"username":"ora"}"#)
            let made = try owner.create(optionsJSON: options, origin: Self.httpsOrigin)
            #expect(
                try await client.json(
                    "/api/registration", .post, body: journey.credentialBody(made.json),
                    headers: [Self.ceremony: token ?? ""]
                ).status == .created)
            for (label, behaviour) in behaviours {
                for body in [#"{"username":"ora"}"#, "{}"] {
                    let (options, token) = try await journey.begin(client, "/api/authentication/options", body)
                    let assertion = try owner.get(
                        optionsJSON: options, origin: Self.httpsOrigin, behaviour: behaviour)
                    let r = try await client.json(
                        "/api/authentication", .post, body: journey.credentialBody(assertion.json),
                        headers: [Self.ceremony: token ?? ""])
                    #expect(r.status == .badRequest, "sign-in \(body), \(label): \(r.text)")
                    #expect(r.object["sessionToken"] == nil)
                }
            }
            // The genuine origin still works.
            let (good, goodToken) = try await journey.begin(client, "/api/authentication/options", "{}")
            let assertion = try owner.get(optionsJSON: good, origin: Self.httpsOrigin)
            let ok = try await client.json(
                "/api/authentication", .post, body: journey.credentialBody(assertion.json),
                headers: [Self.ceremony: goodToken ?? ""])
            #expect(ok.status == .ok, "\(ok.text)")
        }
        let ora = try #require(try await server.withStore { try await $0.user(usernameKey: "ora") })
        #expect(try await server.withStore { try await $0.sessions(userID: ora.id, now: server.clock.now) }.count == 2)
        for index in 0..<(Self.foreignOrigins.count + Self.foreignRPIDs.count + 1) {
            #expect(try await server.withStore { try await $0.user(usernameKey: "phish\(index)") } == nil)
        }
    }

    // MARK: TOTP replay within the window

    /// A TOTP code that signed in once is refused for the rest of its window, so is the code of the step before it
    /// (still inside the ±1 step window), and of two sign-ins racing one fresh code on two nodes, one gets in.
    @Test(arguments: TestDatabase.all)
    func totpCodesAreSpentWithinTheirWindow(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ted", password: "correct horse")
        let nodeA = try await server.app()
        let nodeB = try await server.app()
        try await nodeA.test(.router) { a in
            try await nodeB.test(.router) { b in
                let session = try await signInWithPassword(a, "ted", "correct horse")
                let totp = try await factors.enableTOTP(a, session, server: server)
                let setupCode = try totp.code(at: server.clock.now)
                server.clock.advance(30)
                let code = try totp.code(at: server.clock.now)
                let first = try await factors.pendingStep(a, "ted", "correct horse")
                let ok = try await a.json(
                    "/api/sessions/second-factor", .post,
                    body: jsonString(["factor": "totp", "code": code, "pendingToken": first.token]))
                #expect(ok.status == .ok, "\(ok.text)")

                for (label, replayed, delay) in [
                    ("same code, same node", code, 0.0), ("same code, other node", code, 10),
                    ("previous step", setupCode, 5),
                ] {
                    server.clock.advance(delay)
                    let pending = try await factors.pendingStep(b, "ted", "correct horse")
                    let r = try await (label.hasSuffix("other node") ? b : a).json(
                        "/api/sessions/second-factor", .post,
                        body: jsonString(["factor": "totp", "code": replayed, "pendingToken": pending.token]))
                    #expect(r.status == .unauthorized, "\(label)")
                    #expect(r.errorCode == "invalid_code", "\(label)")
                }

                // One fresh code raced on both nodes: one session.
                server.clock.advance(30)
                let fresh = try totp.code(at: server.clock.now)
                let one = try await factors.pendingStep(a, "ted", "correct horse")
                let two = try await factors.pendingStep(b, "ted", "correct horse")
                async let x = a.json(
                    "/api/sessions/second-factor", .post,
                    body: jsonString(["factor": "totp", "code": fresh, "pendingToken": one.token]))
                async let y = b.json(
                    "/api/sessions/second-factor", .post,
                    body: jsonString(["factor": "totp", "code": fresh, "pendingToken": two.token]))
                let statuses = [try await x, try await y].map(\.status)
                #expect(statuses.filter { $0 == .ok }.count == 1, "\(statuses)")
                #expect(statuses.filter { $0 == .unauthorized }.count == 1, "\(statuses)")
            }
        }
    }

    // MARK: Brute force

    enum Secret: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case password, totp, sms, recovery
        var testDescription: String { rawValue }
    }

    /// What a brute force needs: a fresh pending step when the secret is a second factor, a wrong guess, the right
    /// answer.
    struct Target: Sendable {
        let secret: Secret
        let server: TestServer
        let totp: TOTP?
        let recoveryCodes: [String]

        static func make(_ secret: Secret, _ client: some TestClientProtocol, _ server: TestServer) async throws
            -> Target
        {
            let user = try await server.seedUser("pat", password: "correct horse")
            var totp: TOTP?
            var codes: [String] = []
            switch secret {
            case .password: break
            case .sms:
                try await server.withStore {
                    try await $0.setSMS(userID: user.id, phone: "+15555550123", confirmed: true, at: server.clock.now)
                }
            case .totp, .recovery:
                let session = try await signInWithPassword(client, "pat", "correct horse")
                totp = try await SecondFactorTests().enableTOTP(client, session, server: server)
                if secret == .recovery {
                    let generated = try await client.json(
                        "/api/account/recovery-codes", .post, headers: session.bearerHeaders)
                    codes = generated.object["codes"] as? [String] ?? []
                    #expect(codes.count == 10)
                }
                server.clock.advance(30)  // the confirming code's step is spent
            }
            return Target(secret: secret, server: server, totp: totp, recoveryCodes: codes)
        }

        /// A pending step (a new one: they expire before the window does) and, for SMS, a code sent for it.
        func pending(_ client: some TestClientProtocol) async throws -> String? {
            guard secret != .password else { return nil }
            let pending = try await SecondFactorTests().pendingStep(client, "pat", "correct horse")
            if secret == .sms {
                let sent = try await client.json(
                    "/api/sessions/second-factor/sms", .post, body: jsonString(["pendingToken": pending.token]))
                #expect(sent.status == .accepted, "\(sent.text)")
            }
            return pending.token
        }

        var rightCode: String {
            get throws {
                switch secret {
                case .password: "correct horse"
                case .totp: try #require(totp).code(at: server.clock.now)
                case .sms: try #require(SecurityReviewTests.code(in: server.sms.all.last?.message ?? ""))
                case .recovery: recoveryCodes[0]
                }
            }
        }

        /// The i-th wrong guess: never the right answer (nor one within TOTP's window).
        func wrong(_ index: Int) throws -> String {
            switch secret {
            case .password: return "guess \(index)"
            case .recovery: return String(format: "ZZZZ-%04d", index)
            case .totp, .sms:
                var taken: Set<String> = [try rightCode]
                if let totp {
                    for offset in [-30.0, 30] { taken.insert(try totp.code(at: server.clock.now + offset)) }
                }
                var guess = index
                while taken.contains(String(format: "%06d", guess)) { guess += 100 }
                return String(format: "%06d", guess)
            }
        }

        func request(_ code: String, pending: String?) -> (String, String) {
            switch secret {
            case .password: ("/api/sessions/password", jsonString(["username": "pat", "password": code]))
            default:
                (
                    "/api/sessions/second-factor",
                    jsonString(["factor": secret.rawValue, "code": code, "pendingToken": pending ?? ""])
                )
            }
        }
    }

    /// 50 guesses at once, split over two nodes on one database and 50 client addresses: exactly the account's limit
    /// (5) are checked, the other 45 are 429 with `Retry-After` equal to what is left of the window; the right
    /// answer is then refused too, from an address not yet seen, until the second `Retry-After` named, and accepted
    /// from then on.
    @Test(arguments: TestDatabase.all, Secret.allCases)
    func fiftyParallelGuessesOnTwoNodesGetTheLimitAndAnHonestRetryAfter(_ db: TestDatabase, _ secret: Secret)
        async throws
    {
        let server = TestServer(db)
        let window = Int(server.rateLimits.window)
        let limit = server.rateLimits.perAccount
        let nodeA = try await server.app()
        let nodeB = try await server.app()
        try await nodeA.test(.router) { a in
            try await nodeB.test(.router) { b in
                let target = try await Target.make(secret, a, server)
                let pending = try await target.pending(a)
                let guesses = try (0..<50).map { try target.request(target.wrong($0), pending: pending) }
                let answers = try await withThrowingTaskGroup(of: (Int, String?, String?).self) { group in
                    for (index, (path, body)) in guesses.enumerated() {
                        group.addTask {
                            let headers: HTTPFields = [Self.forwardedFor: "203.0.113.\(index + 1)"]
                            let r =
                                index.isMultiple(of: 2)
                                ? try await a.json(path, .post, body: body, headers: headers)
                                : try await b.json(path, .post, body: body, headers: headers)
                            return (Int(r.status.code), r.errorCode, r.headers[.retryAfter])
                        }
                    }
                    var all: [(Int, String?, String?)] = []
                    for try await answer in group { all.append(answer) }
                    return all
                }
                #expect(answers.filter { $0.0 == 401 }.count == limit, "\(answers.map(\.0))")
                #expect(answers.filter { $0.0 == 429 }.count == 50 - limit)
                for (_, code, retry) in answers where code == "too_many_attempts" {
                    #expect(retry == String(window))
                }

                // Locked: the right answer from a fresh address, on either node.
                let (path, body) = target.request(try target.rightCode, pending: pending)
                let locked = try await b.json(path, .post, body: body, headers: [Self.forwardedFor: "198.51.100.200"])
                #expect(locked.status == .tooManyRequests, "\(locked.text)")
                #expect(locked.headers[.retryAfter] == String(window))

                // One second before the window ends: still locked, and Retry-After says one second.
                server.clock.advance(TimeInterval(window - 1))
                let late = try await target.pending(a)
                let (latePath, lateBody) = target.request(try target.rightCode, pending: late)
                let almost = try await a.json(
                    latePath, .post, body: lateBody, headers: [Self.forwardedFor: "198.51.100.201"])
                #expect(almost.status == .tooManyRequests, "\(almost.text)")
                #expect(almost.headers[.retryAfter] == "1")

                // When Retry-After said: in.
                server.clock.advance(1)
                let (openPath, openBody) = target.request(try target.rightCode, pending: late)
                let open = try await b.json(
                    openPath, .post, body: openBody, headers: [Self.forwardedFor: "198.51.100.202"])
                #expect(open.status == .ok, "\(open.text)")
                #expect(open.object["status"] as? String == "signed_in")
            }
        }
    }

    /// One address guessing at 60 accounts at once over two nodes: exactly the address's limit (50) are checked.
    @Test(arguments: TestDatabase.all)
    func fiftyParallelGuessesFromOneAddressGetTheAddressLimit(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let nodeA = try await server.app()
        let nodeB = try await server.app()
        try await nodeA.test(.router) { a in
            try await nodeB.test(.router) { b in
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<60 {
                        group.addTask {
                            let body = jsonString(["username": "u\(index)", "password": "guess guess"])
                            let headers: HTTPFields = [Self.forwardedFor: "203.0.113.77"]
                            let r =
                                index.isMultiple(of: 2)
                                ? try await a.json("/api/sessions/password", .post, body: body, headers: headers)
                                : try await b.json("/api/sessions/password", .post, body: body, headers: headers)
                            return Int(r.status.code)
                        }
                    }
                    var all: [Int] = []
                    for try await status in group { all.append(status) }
                    return all
                }
                #expect(statuses.filter { $0 == 401 }.count == server.rateLimits.perAddress)
                #expect(statuses.filter { $0 == 429 }.count == 60 - server.rateLimits.perAddress)
            }
        }
    }

    // MARK: Session token and CSRF token forgery

    /// Tokens an attacker could make or find: a real token with one character changed, cut or lengthened, a signed-out
    /// or expired session's token, the CSRF token or pending token in its place, the same values as a cookie.
    @Test(arguments: TestDatabase.all)
    func forgedSessionTokensAreRefused(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("sid", password: "correct horse")
        try await server.app().test(.router) { client in
            let live = try await signInWithPassword(client, "sid", "correct horse")
            let ended = try await signInWithPassword(client, "sid", "correct horse")
            #expect(try await client.json("/api/session", .delete, headers: ended.bearerHeaders).status == .ok)
            let flipped = (live.token.hasPrefix("A") ? "B" : "A") + live.token.dropFirst()
            let lastFlipped = live.token.dropLast() + (live.token.hasSuffix("A") ? "B" : "A")
            let forged = [
                flipped, String(lastFlipped), String(live.token.dropLast()), live.token + "A", ended.token, live.csrf,
                live.token.uppercased() == live.token ? live.token.lowercased() : live.token.uppercased(),
                String(repeating: "A", count: 43), "", "%00",
            ]
            for token in forged {
                let bearer = try await client.json("/api/account", headers: [.authorization: "Bearer \(token)"])
                #expect(bearer.status == .unauthorized, "bearer \(token.prefix(6))")
                let cookie = try await client.json("/api/account", headers: [.cookie: "sesame_session=\(token)"])
                #expect(cookie.status == .unauthorized, "cookie \(token.prefix(6))")
            }
            #expect(try await client.json("/api/account", headers: live.bearerHeaders).status == .ok)
            // Expired: the same token, past the session lifetime.
            server.clock.advance(TimeInterval(server.configuration.sessionLifetime + 1))
            #expect(try await client.json("/api/account", headers: live.bearerHeaders).status == .unauthorized)
        }
    }

    /// Cookie-authenticated writes with a CSRF token that is not this session's: another account's, another session
    /// of the same account, this session's token itself, one changed character, or the right one in a cookie or the
    /// query instead of the header. None writes.
    @Test(arguments: TestDatabase.all)
    func forgedCSRFTokensAreRefused(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let victim = try await server.seedUser("vera", password: "correct horse")
        try await server.seedUser("mal", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "vera", "correct horse")
            let other = try await signInWithPassword(client, "vera", "correct horse")
            let attacker = try await signInWithPassword(client, "mal", "correct horse")
            let body = jsonString(["displayName": "Owned"])
            let csrf = SessionMiddleware.csrfHeader
            let attempts: [(String, HTTPFields, String)] = [
                ("attacker's token", [.cookie: session.cookie, csrf: attacker.csrf], "/api/account"),
                ("other session's token", [.cookie: session.cookie, csrf: other.csrf], "/api/account"),
                ("session token as CSRF", [.cookie: session.cookie, csrf: session.token], "/api/account"),
                (
                    "one character",
                    [
                        .cookie: session.cookie,
                        csrf: String(session.csrf.dropLast()) + (session.csrf.hasSuffix("A") ? "B" : "A"),
                    ], "/api/account"
                ),
                ("empty", [.cookie: session.cookie, csrf: ""], "/api/account"),
                ("in a cookie", [.cookie: session.cookie + "; X-CSRF-Token=\(session.csrf)"], "/api/account"),
                ("in the query", [.cookie: session.cookie], "/api/account?csrfToken=\(session.csrf)"),
                ("twice", [.cookie: session.cookie, csrf: attacker.csrf + ", " + session.csrf], "/api/account"),
            ]
            for (label, headers, path) in attempts {
                let r = try await client.json(path, .patch, body: body, headers: headers)
                #expect(r.status == .forbidden, "\(label): \(r.status)")
                #expect(r.errorCode == "csrf_check_failed", "\(label)")
            }
            let signOut = try await client.json(
                "/api/account/sessions", .delete, headers: [.cookie: session.cookie, csrf: attacker.csrf])
            #expect(signOut.status == .forbidden)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .ok)
        }
        #expect(try await server.withStore { try await $0.user(id: victim.id) }?.displayName == "Vera")
    }

    // MARK: Oversized, deeply nested and malformed bodies

    /// (label, body, content type, whether it may decode to an ordinary request)
    static let hostileBodies: [(String, [UInt8], String, Bool)] = {
        let json = "application/json"
        func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }
        let deepArrays = String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000)
        let deepObjects = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        let deepCredential =
            #"{"credential":"# + String(repeating: #"{"response":"#, count: 5_000) + "{}"
            + String(repeating: "}", count: 5_000) + "}"
        return [
            ("64 KiB + 1 of spaces", utf8(String(repeating: " ", count: 64 * 1024 + 1) + "{}"), json, false),
            ("1 MiB string", utf8(#"{"username":""# + String(repeating: "a", count: 1 << 20) + #""}"#), json, false),
            ("30,000 nested arrays", utf8(deepArrays), json, false),
            ("10,000 nested objects", utf8(deepObjects), json, false),
            ("5,000 nested credential objects", utf8(deepCredential), json, false),
            ("truncated", utf8(#"{"username":"a","password":"#), json, false),
            // Invalid UTF-8 in every field a route reads (JSONDecoder alone let it through as U+FFFD).
            (
                "invalid UTF-8",
                utf8(#"{"username":"a"#) + [0xC3, 0x28, 0xFF] + utf8(#"","password":"b"#) + [0xED, 0xA0, 0x80]
                    + utf8(#"","displayName":"c"#) + [0xFF] + utf8(#"","name":"d"#) + [0xC0, 0xAF] + utf8(#""}"#), json,
                false
            ),
            ("NUL bytes", [0x7B, 0x00, 0x00, 0x7D], json, false),
            ("huge number", utf8(#"{"username":1e999999,"password":"x","displayName":1e999999}"#), json, false),
            ("not an object", utf8(#""username""#), json, false),
            ("wrong type", utf8("username=a&password=b"), "application/x-www-form-urlencoded", false),
            ("no type", utf8(#"{"username":"a","password":"b"}"#), "", false),
            // These may decode (a lone surrogate to U+FFFD, a repeated key to one of its values): then they are an
            // ordinary request with odd values, answered like one (a wrong sign-in, options for that name).
            ("lone surrogate", utf8(#"{"username":"\ud800","password":"\udfff","displayName":"\ud800"}"#), json, true),
            ("duplicate keys", utf8(#"{"username":"a","username":"b","password":"x"}"#), json, true),
            ("empty", [], json, true),
        ]
    }()

    /// Every hostile body at every public JSON endpoint and at two signed-in ones: a 4xx JSON error (or, for a body
    /// that decodes, an ordinary answer), never a 5xx; no account, passkey or name change is written, and the server
    /// (both engines) still answers.
    @Test(arguments: TestDatabase.all)
    func hostileBodiesAreTypedErrorsAndWriteNothing(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("bo", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "bo", "correct horse")
            var targets = [
                "/api/sessions/password", "/api/registration/options", "/api/registration",
                "/api/authentication/options", "/api/authentication", "/api/sessions/second-factor",
            ].map { ($0, HTTPRequest.Method.post, HTTPFields()) }
            targets.append(("/api/account", .patch, session.bearerHeaders))
            targets.append(("/api/account/password", .put, session.bearerHeaders))
            for (path, method, auth) in targets {
                for (label, bytes, contentType, decodable) in Self.hostileBodies {
                    var headers = auth
                    headers[Self.forwardedFor] = "192.0.2.1"
                    headers[.init("Sesame-Client")!] = "native"
                    if !contentType.isEmpty { headers[.contentType] = contentType }
                    let r = try await client.execute(
                        uri: path, method: method, headers: headers, body: ByteBuffer(bytes: bytes))
                    let what = "\(method) \(path), \(label): \(r.status) \(r.text.prefix(120))"
                    #expect(r.status.code < 500, "\(what)")
                    if decodable, r.status == .ok {
                        #expect(path.hasSuffix("/options"), "\(what)")
                    } else {
                        #expect((400..<500).contains(r.status.code), "\(what)")
                        #expect(r.errorCode != nil, "\(what)")
                    }
                    if label.contains("KiB") || label.contains("MiB") {
                        #expect(r.status == .contentTooLarge, "\(what)")
                    }
                    if label.contains("type") { #expect(r.status == .unsupportedMediaType, "\(what)") }
                    if label.contains("nested") { #expect(r.status == .badRequest, "\(what)") }
                }
            }
            #expect(try await client.json("/health").status == .ok)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .ok)
        }
        let bo = try #require(try await server.withStore { try await $0.user(usernameKey: "bo") })
        #expect(bo.displayName == "Bo")
        #expect(try await server.withStore { try await $0.credentials(userID: bo.id) }.isEmpty)
        #expect(
            try PasswordHasher(logN: 10).verify(
                "correct horse", against: #require(try await server.withStore { try await $0.password(userID: bo.id) }))
        )
        for name in ["a", "b", "\u{FFFD}"] {
            #expect(try await server.withStore { try await $0.user(usernameKey: name) } == nil)
        }
        let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 100) }
        #expect(events.filter { $0.outcome == "success" }.count == 1)  // bo's sign-in
    }

    /// A registration over a genuine challenge whose attestation object is CBOR nested 20,000 arrays deep (or
    /// claims a length far past its end): a typed 400, no account.
    @Test(arguments: TestDatabase.all)
    func hostileCBORInACredentialIsRefused(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            let hostile: [(String, [UInt8])] = [
                ("20,000 nested arrays", [UInt8](repeating: 0x81, count: 20_000) + [0x00]),
                (
                    "a byte string claiming 2^63 bytes",
                    [0xA1, 0x63] + Array("fmt".utf8) + [0x5B, 0x7F] + [UInt8](repeating: 0xFF, count: 7)
                ),
                ("an indefinite map never closed", [0xBF] + [UInt8](repeating: 0x00, count: 64)),
            ]
            for (index, (label, cbor)) in hostile.enumerated() {
                let (options, token) = try await journey.begin(
                    client, "/api/registration/options", jsonString(["username": "cbor\(index)"]))
                let challenge = try #require(
                    (try JSONSerialization.jsonObject(with: Data(options)) as? [String: Any])?["challenge"] as? String)
                let clientData = jsonString([
                    "type": "webauthn.create", "challenge": challenge, "origin": PasskeyJourneyTests.origin,
                ])
                let body = jsonString([
                    "credential": [
                        "id": "AAAAAAAAAAAAAAAAAAAAAA", "rawId": "AAAAAAAAAAAAAAAAAAAAAA", "type": "public-key",
                        "response": [
                            "clientDataJSON": Base64URL.encode(Array(clientData.utf8)),
                            "attestationObject": Base64URL.encode(cbor),
                        ],
                    ]
                ])
                let r = try await client.json(
                    "/api/registration", .post, body: body, headers: [Self.ceremony: token ?? ""])
                #expect(r.status == .badRequest, "\(label): \(r.text)")
                #expect(r.errorCode == "registration_failed", "\(label)")
                #expect(try await server.withStore { try await $0.user(usernameKey: "cbor\(index)") } == nil)
            }
            #expect(try await client.json("/health").status == .ok)
        }
    }

    /// The same over a real socket: a body past the limit is refused while it is still arriving (413, and the
    /// connection answers the next request).
    @Test(arguments: TestDatabase.all)
    func oversizedBodiesOverASocketAre413(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.live) { client in
            for size in [64 * 1024 + 1, 4 << 20] {
                let r = try await client.json(
                    "/api/sessions/password", .post,
                    body: #"{"username":""# + String(repeating: "x", count: size) + "\"}")
                #expect(r.status == .contentTooLarge, "\(size)")
                #expect(r.errorCode == "body_too_large")
            }
            #expect(try await client.json("/health").status == .ok)
        }
    }

    // MARK: Header injection through usernames and display names

    static let injected = [
        "eve\r\nX-Injected: 1", "eve\nX-Injected: 1", "eve\rX-Injected: 1", "eve\u{0}X-Injected", "eve\u{7F}",
        "eve\u{85}X-Injected: 1",
    ]

    /// CR, LF, NUL and other controls are refused in usernames and display names at sign-up, password sign-in and
    /// `PATCH /api/account`; a name stored before these rules (or written by hand) still cannot add a header to
    /// forward auth's answer.
    @Test(arguments: TestDatabase.all)
    func namesCannotInjectHeaders(_ db: TestDatabase) async throws {
        let server = ForwardAuthTests.server(db)
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            for name in Self.injected {
                let signUp = try await client.json(
                    "/api/registration/options", .post, body: jsonString(["username": name]))
                #expect(signUp.status == .badRequest, "username \(name.debugDescription)")
                let display = try await client.json(
                    "/api/registration/options", .post, body: jsonString(["username": "ok-name", "displayName": name]))
                #expect(display.status == .badRequest, "display name \(name.debugDescription)")
                let signIn = try await client.json(
                    "/api/sessions/password", .post, body: jsonString(["username": name, "password": "x"]))
                #expect(signIn.status == .unauthorized)
                #expect(signIn.headers[.init("X-Injected")!] == nil)
            }
            let session = try await signInWithPassword(
                client, "ada", "correct horse battery", cookieName: "__Secure-sesame_session")
            for name in Self.injected {
                let r = try await client.json(
                    "/api/account", .patch, body: jsonString(["displayName": name]), headers: session.bearerHeaders)
                #expect(r.status == .badRequest, "\(name.debugDescription)")
            }
        }
        // A display name written straight into the store (an import, an older release): forward auth's headers stay
        // single lines with no header of the name's making (control characters become spaces).
        let user = try #require(try await server.withStore { try await $0.user(usernameKey: "ada") })
        #expect(
            try await server.withStore {
                try await $0.setDisplayName(userID: user.id, "Ada\r\nX-Injected: 1", at: Date())
            })
        try await server.app().test(.live) { client in
            for username in ["ada"] {
                let signIn = try await client.json(
                    "/api/sessions/password", .post,
                    body: jsonString(["username": username, "password": "correct horse battery"]),
                    headers: [.init("Sesame-Client")!: "web"])
                let cookie = try #require(signIn.cookie(named: "__Secure-sesame_session"), "\(signIn.text)")
                let passed = try await ForwardAuthTests.check(client, "app.example.com", "/", cookie: cookie)
                #expect(passed.status == .ok)
                #expect(passed.headers[.init("X-Injected")!] == nil)
                for field in passed.headers {
                    let breaks = field.value.utf8.filter { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
                    #expect(breaks.isEmpty, "\(field.name)")
                }
                #expect(passed.headers[ForwardAuthService.remoteName]?.hasPrefix("Ada") == true)
            }
        }
    }
}
