import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OneTimeCode
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameCore
@testable import SesameSecondFactors

/// Regression tests for the outside security review's confirmed defects (issue 9), each over HTTP on both engines.
/// Each one failed on the code as it was before the fix.
@Suite struct SecurityReviewTests {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    let journey = PasskeyJourneyTests()

    // MARK: 1. X-Forwarded-For

    /// 55 wrong passwords over 11 usernames, each with an invented first X-Forwarded-For entry and the address the
    /// proxy appended last: the address bucket (50) fills, and the audit log records the real address only.
    @Test(arguments: TestDatabase.all)
    func forwardedForCannotChooseTheClientAddress(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            var statuses: [HTTPResponse.Status] = []
            for attempt in 0..<55 {
                let invented = "10.\(attempt).\(attempt % 7).1"
                let r = try await client.json(
                    "/api/sessions/password", .post,
                    body: jsonString(["username": "user\(attempt % 11)", "password": "wrong-\(attempt)"]),
                    headers: [Self.forwardedFor: "\(invented), 203.0.113.9"]
                )
                statuses.append(r.status)
            }
            #expect(statuses.prefix(50).allSatisfy { $0 == .unauthorized })
            #expect(statuses.suffix(5).allSatisfy { $0 == .tooManyRequests })
        }
        let addresses = Set(
            try await server.withStore { try await $0.auditEvents(userID: nil, limit: 100) }.map(\.clientAddress))
        #expect(addresses == ["203.0.113.9"])
    }

    /// (header lines, hops, expected client address)
    static let forwardedCases: [([String], Int, String)] = [
        (["198.51.100.7"], 1, "198.51.100.7"),
        (["1.2.3.4, 198.51.100.7"], 1, "198.51.100.7"),
        (["1.2.3.4", "198.51.100.7"], 1, "198.51.100.7"),  // two field lines are one list
        (["1.2.3.4, 198.51.100.7, 10.0.0.2"], 2, "198.51.100.7"),
        (["198.51.100.7, 10.0.0.2"], 3, "peer"),  // fewer entries than proxies: not through the chain
        (["not-an-address"], 1, "peer"),
        (["1.2.3.4, 198.51.100.7:4711"], 1, "198.51.100.7"),
        (["[2001:db8::1]:443"], 1, "2001:db8::1"),
        (["2001:DB8:0:0::1"], 1, "2001:db8::1"),
        (["198.51.100.7 "], 1, "198.51.100.7"),
        (["198.51.100.7; rm -rf"], 1, "peer"),
        ([], 1, "peer"),
    ]

    @Test(arguments: Self.forwardedCases)
    func forwardedForIsReadFromTheRight(_ lines: [String], _ hops: Int, _ expected: String) {
        #expect(ClientAddress.resolve(peer: "peer", forwarded: lines, trustForwardedFor: true, hops: hops) == expected)
        #expect(ClientAddress.resolve(peer: "peer", forwarded: lines, trustForwardedFor: false, hops: hops) == "peer")
    }

    @Test func proxyHopsIsASetting() throws {
        let c = try ServerConfiguration.resolve(flags: ["trustedProxyHops": "2"], environment: [:], configFile: nil)
        #expect(c.trustedProxyHops == 2)
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(flags: ["trustedProxyHops": "0"], environment: [:], configFile: nil)
        }
    }

    // MARK: 2. TOTP setup needs a recent sign-in, and confirms only the secret it checked

    @Test(arguments: TestDatabase.all)
    func staleSessionCannotTurnOnTOTP(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("tess", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "tess", "correct horse")
            let setup = try await client.json("/api/account/totp", .post, headers: session.bearerHeaders)
            #expect(setup.status == .created)
            let secret = try OTPSecret(base32: try #require(setup.object["secret"] as? String))
            server.clock.advance(601)  // past the re-authentication window
            let start = try await client.json("/api/account/totp", .post, headers: session.bearerHeaders)
            #expect(start.status == .forbidden)
            #expect(start.errorCode == "reauthentication_required")
            let qr = try await client.json("/api/account/totp/qr.png", headers: session.bearerHeaders)
            #expect(qr.errorCode == "reauthentication_required")
            let code = try TOTP(secret: secret).code(at: server.clock.now)
            let confirm = try await client.json(
                "/api/account/totp/confirm", .post, body: jsonString(["code": code]), headers: session.bearerHeaders)
            #expect(confirm.errorCode == "reauthentication_required")
            // Nothing changed: password sign-in still needs no second factor.
            let again = try await client.json(
                "/api/sessions/password", .post, body: jsonString(["username": "tess", "password": "correct horse"]))
            #expect(again.object["status"] as? String == "signed_in")
        }
    }

    @Test(arguments: TestDatabase.all)
    func confirmationIsBoundToTheCheckedSecret(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("tom", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "tom", "correct horse")
            let first = try await client.json("/api/account/totp", .post, headers: session.bearerHeaders)
            let firstSecret = try OTPSecret(base32: try #require(first.object["secret"] as? String))
            let second = try await client.json("/api/account/totp", .post, headers: session.bearerHeaders)
            let secondSecret = try OTPSecret(base32: try #require(second.object["secret"] as? String))
            #expect(firstSecret != secondSecret)
            // The first secret's code no longer confirms anything; the second's does.
            let stale = try await client.json(
                "/api/account/totp/confirm", .post,
                body: jsonString(["code": try TOTP(secret: firstSecret).code(at: server.clock.now)]),
                headers: session.bearerHeaders
            )
            #expect(stale.status == .unauthorized)
            let current = try await client.json(
                "/api/account/totp/confirm", .post,
                body: jsonString(["code": try TOTP(secret: secondSecret).code(at: server.clock.now)]),
                headers: session.bearerHeaders
            )
            #expect(current.status == .ok, "\(current.text)")
        }
        // The race itself, at the store: a code checked against one secret cannot confirm a secret set meanwhile.
        try await server.withStore { store in
            #expect(try await store.deleteTOTP(userID: user.id))
            try await store.setPendingTOTP(
                userID: user.id, secret: Array(repeating: 1, count: 20), at: server.clock.now)
            let checked = try #require(try await store.totp(userID: user.id))
            try await store.setPendingTOTP(
                userID: user.id, secret: Array(repeating: 2, count: 20), at: server.clock.now)
            #expect(try await !store.confirmTOTP(userID: user.id, step: 5, revision: checked.revision))
            #expect(try await store.totp(userID: user.id)?.confirmed == false)
            let current = try #require(try await store.totp(userID: user.id))
            #expect(try await store.confirmTOTP(userID: user.id, step: 5, revision: current.revision))
            #expect(try await store.totp(userID: user.id)?.secret == Array(repeating: 2, count: 20))
        }
    }

    // MARK: 3. A phone-number change keeps the confirmed number until the new one is confirmed

    @Test(arguments: TestDatabase.all)
    func phoneChangeKeepsSMSOnUntilConfirmed(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("pia", password: "correct horse")
        try await server.withStore {
            try await $0.setSMS(userID: user.id, phone: "+15555550100", confirmed: true, at: server.clock.now)
        }
        try await server.app().test(.router) { client in
            let session = try await signInWithSMS(client, server, "pia")
            let change = try await client.json(
                "/api/account/sms", .put, body: jsonString(["phone": "+15555550199"]), headers: session.bearerHeaders)
            #expect(change.status == .accepted, "\(change.text)")
            #expect(server.sms.all.last?.phone == "+15555550199")
            let newCode = try #require(Self.code(in: server.sms.all.last?.message ?? ""))

            // Until confirmed, password sign-in still asks for the SMS code, and sends it to the confirmed number.
            let pending = try await client.json(
                "/api/sessions/password", .post, body: jsonString(["username": "pia", "password": "correct horse"]))
            #expect(pending.object["status"] as? String == "second_factor_required")
            #expect(pending.object["factors"] as? [String] == ["sms"])
            let sent = try await client.json(
                "/api/sessions/second-factor/sms", .post,
                body: jsonString(["pendingToken": pending.object["pendingToken"] as? String ?? ""])
            )
            #expect(sent.status == .accepted)
            #expect(server.sms.all.last?.phone == "+15555550100")

            // A wrong code changes nothing; the code sent to the new number confirms it.
            let wrong = try await client.json(
                "/api/account/sms/confirm", .post,
                body: jsonString(["code": newCode == "000000" ? "000001" : "000000"]), headers: session.bearerHeaders)
            #expect(wrong.status == .unauthorized)
            #expect(
                try await server.withStore { try await $0.sms(userID: user.id) }
                    == SMSRecord(phone: "+15555550100", confirmed: true))
            let confirm = try await client.json(
                "/api/account/sms/confirm", .post, body: jsonString(["code": newCode]), headers: session.bearerHeaders)
            #expect(confirm.status == .ok, "\(confirm.text)")
            #expect(
                try await server.withStore { try await $0.sms(userID: user.id) }
                    == SMSRecord(phone: "+15555550199", confirmed: true))
        }
        let kinds = try await server.withStore { try await $0.auditEvents(userID: user.id, limit: 50) }.map(\.kind)
        #expect(kinds.contains("sms.change_started"))
    }

    @Test(arguments: TestDatabase.all)
    func onlyTheNumberTheCodeWasSentToIsConfirmed(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("quin", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "quin", "correct horse")
            _ = try await client.json(
                "/api/account/sms", .put, body: jsonString(["phone": "+15555550101"]), headers: session.bearerHeaders)
            let firstCode = try #require(Self.code(in: server.sms.all.last?.message ?? ""))
            _ = try await client.json(
                "/api/account/sms", .put, body: jsonString(["phone": "+15555550102"]), headers: session.bearerHeaders)
            let secondCode = try #require(Self.code(in: server.sms.all.last?.message ?? ""))
            if firstCode != secondCode {
                let stale = try await client.json(
                    "/api/account/sms/confirm", .post, body: jsonString(["code": firstCode]),
                    headers: session.bearerHeaders)
                #expect(stale.status == .unauthorized)
                #expect(try await server.withStore { try await $0.sms(userID: user.id) } == nil)
            }
            let confirm = try await client.json(
                "/api/account/sms/confirm", .post, body: jsonString(["code": secondCode]),
                headers: session.bearerHeaders)
            #expect(confirm.status == .ok)
            #expect(try await server.withStore { try await $0.sms(userID: user.id) }?.phone == "+15555550102")
            // The pending change is used up.
            let again = try await client.json(
                "/api/account/sms/confirm", .post, body: jsonString(["code": secondCode]),
                headers: session.bearerHeaders)
            #expect(again.status == .unauthorized)
        }
    }

    // MARK: 4. Concurrent assertions with one counter: one session

    @Test(arguments: TestDatabase.all)
    func concurrentAssertionsWithOneCounterGiveOneSession(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let key = VirtualAuthenticator(
            configuration: .init(signCounter: true, transports: ["usb"], attachment: "cross-platform"))
        try await server.app().test(.router) { client in
            #expect(try await journey.signUp(client, key, "cal").status == .created)
            for round in 1...3 {
                var pairs: [(String, String?)] = []
                for _ in 0..<2 {
                    let (options, token) = try await journey.begin(client, "/api/authentication/options", "{}")
                    var behaviour = VirtualAuthenticator.Behaviour()
                    behaviour.signCount = UInt32(10 * round)
                    pairs.append(
                        (
                            journey.credentialBody(
                                try key.get(
                                    optionsJSON: options, origin: PasskeyJourneyTests.origin, behaviour: behaviour
                                ).json), token
                        ))
                }
                let (first, second) = (pairs[0], pairs[1])
                async let a = client.json(
                    "/api/authentication", .post, body: first.0, headers: [PasskeyJourneyTests.ceremony: first.1 ?? ""])
                async let b = client.json(
                    "/api/authentication", .post, body: second.0,
                    headers: [PasskeyJourneyTests.ceremony: second.1 ?? ""])
                let statuses = [try await a, try await b].map(\.status)
                #expect(statuses.filter { $0 == .ok }.count == 1, "round \(round): \(statuses)")
            }
            // A count below the stored one is refused, and the stored count does not go back.
            let (options, token) = try await journey.begin(client, "/api/authentication/options", "{}")
            var behaviour = VirtualAuthenticator.Behaviour()
            behaviour.signCount = 5
            let low = try key.get(optionsJSON: options, origin: PasskeyJourneyTests.origin, behaviour: behaviour)
            let refused = try await client.json(
                "/api/authentication", .post, body: journey.credentialBody(low.json),
                headers: [PasskeyJourneyTests.ceremony: token ?? ""])
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "authentication_failed")
        }
        let stored = try await server.withStore { try await $0.credential(id: key.credentials[0].id) }
        #expect(stored?.signCount == 30)
        let sessions = try await server.withStore { store in
            let user = try #require(try await store.user(usernameKey: "cal"))
            return try await store.sessions(userID: user.id, now: server.clock.now)
        }
        #expect(sessions.count == 4)  // sign-up + one per round
    }

    // MARK: 5. Username-first sign-in answers alike for accounts and decoys

    @Test(arguments: TestDatabase.all)
    func usernameFirstFailuresLookAlike(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let alice = VirtualAuthenticator()
        let mallory = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            #expect(try await journey.signUp(client, alice, "alice").status == .created)
            #expect(try await journey.signUp(client, mallory, "mallory").status == .created)

            /// Starts a username-first sign-in for `name` and answers it with `va`'s credential, presented under the
            /// options' first allowed ID (or its own), with a damaged signature when asked.
            func attempt(_ name: String, _ va: VirtualAuthenticator, asFirstAllowed: Bool, damaged: Bool) async throws
                -> TestResponse
            {
                let (options, token) = try await journey.begin(
                    client, "/api/authentication/options", jsonString(["username": name]))
                var object = try #require(try JSONSerialization.jsonObject(with: Data(options)) as? [String: Any])
                let first = try Base64URL.decode(
                    try #require(((object["allowCredentials"] as? [[String: Any]])?.first?["id"]) as? String))
                object["allowCredentials"] = nil  // let the authenticator answer with whatever it holds
                var behaviour = VirtualAuthenticator.Behaviour()
                if asFirstAllowed { behaviour.responseCredentialId = first }
                if damaged { behaviour.tamper = [.signature(at: 8)] }
                behaviour.userHandle = .omitted
                let assertion = try va.get(
                    optionsJSON: Array(try JSONSerialization.data(withJSONObject: object)),
                    origin: PasskeyJourneyTests.origin, behaviour: behaviour
                )
                return try await client.json(
                    "/api/authentication", .post, body: journey.credentialBody(assertion.json),
                    headers: [PasskeyJourneyTests.ceremony: token ?? ""]
                )
            }

            // The first allowed ID with a wrong signature: a real account's passkey, and a decoy of an unknown name.
            let real = try await attempt("alice", alice, asFirstAllowed: true, damaged: true)
            let decoy = try await attempt("nobody-here", mallory, asFirstAllowed: true, damaged: false)
            #expect(real.status == .badRequest)
            #expect(real.errorCode == "authentication_failed")
            #expect(decoy.status == real.status)
            #expect(decoy.text == real.text)

            // Another account's passkey, signed correctly: refused for both, in the same words.
            let otherForReal = try await attempt("alice", mallory, asFirstAllowed: false, damaged: false)
            let otherForDecoy = try await attempt("nobody-here", mallory, asFirstAllowed: false, damaged: false)
            #expect(otherForReal.status == .badRequest)
            #expect(otherForReal.text == otherForDecoy.text)
            #expect(real.text == #"{"error":"authentication_failed","message":"Passkey check failed."}"#)
            #expect(otherForReal.text == real.text)

            // Discoverable sign-in still names an unknown credential, for the Signal API.
            let (options, token) = try await journey.begin(client, "/api/authentication/options", "{}")
            var behaviour = VirtualAuthenticator.Behaviour()
            behaviour.responseCredentialId = Array(repeating: 7, count: 16)
            let unknown = try alice.get(optionsJSON: options, origin: PasskeyJourneyTests.origin, behaviour: behaviour)
            let answer = try await client.json(
                "/api/authentication", .post, body: journey.credentialBody(unknown.json),
                headers: [PasskeyJourneyTests.ceremony: token ?? ""]
            )
            #expect(answer.status == .notFound)
            #expect(answer.errorCode == "unknown_credential")
        }
    }

    // MARK: 7. What the relying party accepts is validated in one place

    @Test(arguments: [
        "ios:bundle-id:com.example.app",
        "android:apk-key-hash:not-base64url!",
        "android:apk-key-hash:" + Base64URL.encode([UInt8](repeating: 1, count: 20)),
    ])
    func nativeOriginsTheRelyingPartyRefusesStopTheConfiguration(_ origin: String) {
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(flags: ["nativeAppOrigins": origin], environment: [:], configFile: nil)
        }
    }

    @Test func aValidAndroidOriginStartsTheServer() async throws {
        let origin = "android:apk-key-hash:" + Base64URL.encode([UInt8](repeating: 1, count: 32))
        var server = TestServer(.sqlite)
        server.configuration = try ServerConfiguration.resolve(
            flags: ["nativeAppOrigins": origin, "database": server.configuration.database, "port": "0"],
            environment: [:], configFile: nil
        )
        try await server.app().test(.router) { client in
            let health = try await client.json("/health")
            #expect(health.status == .ok)
        }
    }

    // MARK: Helpers

    static func code(in message: String) -> String? {
        message.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }.map(String.init)
    }

    /// Signs in with password + SMS (the account has a confirmed number), returning the session.
    func signInWithSMS(_ client: some TestClientProtocol, _ server: TestServer, _ username: String) async throws
        -> SignedIn
    {
        let pending = try await client.json(
            "/api/sessions/password", .post, body: jsonString(["username": username, "password": "correct horse"]))
        let token = pending.object["pendingToken"] as? String ?? ""
        _ = try await client.json("/api/sessions/second-factor/sms", .post, body: jsonString(["pendingToken": token]))
        let code = try #require(Self.code(in: server.sms.all.last?.message ?? ""))
        let done = try await client.json(
            "/api/sessions/second-factor", .post,
            body: jsonString(["factor": "sms", "code": code, "pendingToken": token]))
        #expect(done.status == .ok, "\(done.text)")
        return SignedIn(
            cookie: "", csrf: done.object["csrfToken"] as? String ?? "",
            token: done.object["sessionToken"] as? String ?? "")
    }
}
