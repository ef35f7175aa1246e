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
@testable import SesameKeychainSync

/// Complete passkey journeys over HTTP, driven by `VirtualAuthenticator` acting as browser + authenticator.
@Suite struct PasskeyJourneyTests {
    static let origin = "http://localhost:8080"
    static let ceremony = HTTPField.Name("Sesame-Ceremony")!

    /// Starts a ceremony and returns the options bytes and the ceremony token.
    func begin(_ client: some TestClientProtocol, _ path: String, _ body: String, headers: HTTPFields = [:])
        async throws -> ([UInt8], String?)
    {
        let r = try await client.json(path, .post, body: body, headers: headers)
        #expect(r.status == .ok, "\(path): \(r.status) \(r.text)")
        return (Array(r.body.readableBytesView), r.headers[Self.ceremony])
    }

    func credentialBody(_ json: [UInt8], name: String? = nil) -> String {
        var text = #"{"credential":"# + String(decoding: json, as: UTF8.self)
        if let name { text += #","name":"# + "\"\(name)\"" }
        return text + "}"
    }

    func signUp(_ client: some TestClientProtocol, _ va: VirtualAuthenticator, _ username: String) async throws
        -> TestResponse
    {
        let (options, token) = try await begin(
            client, "/api/registration/options",
            jsonString(["username": username, "displayName": "\(username) Example"]))
        let created = try va.create(optionsJSON: options, origin: Self.origin)
        return try await client.json(
            "/api/registration", .post, body: credentialBody(created.json), headers: [Self.ceremony: token ?? ""])
    }

    func signIn(_ client: some TestClientProtocol, _ va: VirtualAuthenticator, username: String?) async throws
        -> TestResponse
    {
        let body = username.map { jsonString(["username": $0]) } ?? "{}"
        let (options, token) = try await begin(client, "/api/authentication/options", body)
        let assertion = try va.get(optionsJSON: options, origin: Self.origin)
        return try await client.json(
            "/api/authentication", .post, body: credentialBody(assertion.json), headers: [Self.ceremony: token ?? ""])
    }

    @Test(arguments: TestDatabase.all)
    func signUpSignInWithAndWithoutUsernameAddPasskeySignOutEverywhere(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let phone = VirtualAuthenticator(
            configuration: .init(backupEligible: true, backedUp: true, transports: ["hybrid", "internal"]))
        let key = VirtualAuthenticator(configuration: .init(transports: ["usb"], attachment: "cross-platform"))
        try await server.app().test(.router) { client in
            let created = try await signUp(client, phone, "zoe")
            #expect(created.status == .created, "\(created.text)")
            #expect(created.object["status"] as? String == "signed_in")
            let first = SignedIn(
                cookie: created.cookie(named: "sesame_session") ?? "",
                csrf: created.object["csrfToken"] as? String ?? "",
                token: created.object["sessionToken"] as? String ?? "")

            // The username is now taken.
            let again = try await client.json("/api/registration/options", .post, body: #"{"username":"ZOE"}"#)
            #expect(again.status == .conflict)

            let withName = try await signIn(client, phone, username: "zoe")
            #expect(withName.status == .ok, "\(withName.text)")
            let discoverable = try await signIn(client, phone, username: nil)
            #expect(discoverable.status == .ok, "\(discoverable.text)")

            // Add a security key; the options exclude the passkey already registered.
            let addOptions = try await client.json("/api/account/passkeys/options", .post, headers: first.cookieHeaders)
            #expect(addOptions.status == .ok)
            let exclude = (addOptions.object["excludeCredentials"] as? [[String: Any]])?.compactMap {
                $0["id"] as? String
            }
            #expect(exclude == [Base64URL.encode(phone.credentials[0].id)])
            #expect(
                (addOptions.object["authenticatorSelection"] as? [String: Any])?["residentKey"] as? String == "required"
            )
            let made = try key.create(optionsJSON: Array(addOptions.body.readableBytesView), origin: Self.origin)
            let added = try await client.json(
                "/api/account/passkeys", .post, body: credentialBody(made.json, name: "Blue key"),
                headers: first.cookieHeaders)
            #expect(added.status == .created, "\(added.text)")
            #expect(added.object["name"] as? String == "Blue key")

            let list = try await client.json("/api/account/passkeys", headers: first.bearerHeaders)
            let items = try JSONSerialization.jsonObject(with: Data(list.text.utf8)) as? [[String: Any]] ?? []
            #expect(items.count == 2)
            let synced = try #require(items.first { $0["id"] as? String == Base64URL.encode(phone.credentials[0].id) })
            let usb = try #require(items.first { $0["id"] as? String == Base64URL.encode(key.credentials[0].id) })
            #expect(synced["backedUp"] as? Bool == true)
            #expect(synced["lastUsedAt"] != nil)
            #expect(synced["transports"] as? [String] == ["hybrid", "internal"])
            #expect(usb["transports"] as? [String] == ["usb"])
            #expect(usb["backedUp"] as? Bool == false)

            let viaKey = try await signIn(client, key, username: "zoe")
            #expect(viaKey.status == .ok)

            // Sign out everywhere: every session ends.
            let all = try await client.json("/api/account/sessions", .delete, headers: first.bearerHeaders)
            #expect(all.object["count"] as? Int == 4)
            for token in [
                first.token, withName.object["sessionToken"] as? String ?? "",
                viaKey.object["sessionToken"] as? String ?? "",
            ] {
                #expect(
                    try await client.json("/api/account", headers: [.authorization: "Bearer \(token)"]).status
                        == .unauthorized)
            }
        }
        let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 50) }.map(\.kind)
        for kind in ["sign_up.passkey", "sign_in.passkey", "passkey.added", "session.revoked_all"] {
            #expect(events.contains(kind))
        }
    }

    @Test(arguments: TestDatabase.all, SignInChallenges.allModes)
    func challengesAreSingleUseBoundAndExpire(_ db: TestDatabase, _ mode: SignInChallenges) async throws {
        let server = TestServer(db) { $0.signInChallenges = mode }
        let va = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            #expect(try await signUp(client, va, "amy").status == .created)

            // Replay of a verified assertion: the challenge is gone.
            let (options, token) = try await begin(client, "/api/authentication/options", "{}")
            let assertion = try va.get(optionsJSON: options, origin: Self.origin)
            let body = credentialBody(assertion.json)
            #expect(
                try await client.json("/api/authentication", .post, body: body, headers: [Self.ceremony: token ?? ""])
                    .status == .ok)
            let replay = try await client.json(
                "/api/authentication", .post, body: body, headers: [Self.ceremony: token ?? ""])
            #expect(replay.status == .badRequest)
            #expect(replay.errorCode == "challenge_invalid")

            // Bound to the ceremony token: someone else's token does not finish it.
            let (options2, _) = try await begin(client, "/api/authentication/options", "{}")
            let stolen = try va.get(optionsJSON: options2, origin: Self.origin)
            let other = try await client.json(
                "/api/authentication", .post, body: credentialBody(stolen.json),
                headers: [Self.ceremony: String(repeating: "B", count: 43)]
            )
            #expect(other.errorCode == "challenge_invalid")

            // Expired.
            let (options3, token3) = try await begin(client, "/api/authentication/options", "{}")
            let late = try va.get(optionsJSON: options3, origin: Self.origin)
            server.clock.advance(301)
            let expired = try await client.json(
                "/api/authentication", .post, body: credentialBody(late.json), headers: [Self.ceremony: token3 ?? ""])
            #expect(expired.errorCode == "challenge_invalid")
        }
    }

    @Test(arguments: TestDatabase.all)
    func badResponsesAreRefusedAndChangeNothing(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let va = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            // Sign-up from the wrong origin: verification fails, no account is made.
            let (options, token) = try await begin(client, "/api/registration/options", #"{"username":"bea"}"#)
            let wrongOrigin = try va.create(optionsJSON: options, origin: "http://localhost:9999")
            let refused = try await client.json(
                "/api/registration", .post, body: credentialBody(wrongOrigin.json),
                headers: [Self.ceremony: token ?? ""])
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "registration_failed")
            #expect(try await server.withStore { try await $0.user(usernameKey: "bea") } == nil)

            #expect(try await signUp(client, va, "bea").status == .created)
            // A tampered signature.
            let (authOptions, authToken) = try await begin(
                client, "/api/authentication/options", #"{"username":"bea"}"#)
            var behaviour = VirtualAuthenticator.Behaviour()
            behaviour.tamper = [.signature(at: 10)]
            let tampered = try va.get(optionsJSON: authOptions, origin: Self.origin, behaviour: behaviour)
            let bad = try await client.json(
                "/api/authentication", .post, body: credentialBody(tampered.json),
                headers: [Self.ceremony: authToken ?? ""])
            #expect(bad.status == .badRequest)
            #expect(bad.errorCode == "authentication_failed")
            // The failed attempt used the challenge up: a correct assertion over it is refused, and nothing of a
            // sign-in was written (the only session is the sign-up's).
            let honest = try va.get(optionsJSON: authOptions, origin: Self.origin)
            let late = try await client.json(
                "/api/authentication", .post, body: credentialBody(honest.json),
                headers: [Self.ceremony: authToken ?? ""])
            #expect(late.errorCode == "challenge_invalid")
            let bea = try #require(try await server.withStore { try await $0.user(usernameKey: "bea") })
            #expect(
                try await server.withStore { try await $0.sessions(userID: bea.id, now: server.clock.now) }.count == 1)
            #expect(try await server.withStore { try await $0.credentials(userID: bea.id) }.first?.lastUsedAt == nil)

            // Malformed credential JSON and invalid base64url are 400s.
            let garbage = try await client.json(
                "/api/authentication", .post,
                body: #"{"credential":{"id":"!!","rawId":"!!","type":"public-key","response":{}}}"#)
            #expect(garbage.status == .badRequest)
        }
    }

    @Test(arguments: TestDatabase.all)
    func unknownUsersAndCredentialsLookOrdinary(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let va = VirtualAuthenticator()
        let stranger = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            #expect(try await signUp(client, va, "cleo").status == .created)
            let known = try await client.json("/api/authentication/options", .post, body: #"{"username":"cleo"}"#)
            let unknown1 = try await client.json("/api/authentication/options", .post, body: #"{"username":"nobody"}"#)
            let unknown2 = try await client.json("/api/authentication/options", .post, body: #"{"username":"NOBODY"}"#)
            func ids(_ r: TestResponse) -> [String] {
                (r.object["allowCredentials"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            }
            // Shapes, counts and ID lengths in detail: FakeCredentialTests.
            #expect(ids(known).count == 1 && (1...3).contains(ids(unknown1).count))
            #expect(ids(unknown1) == ids(unknown2))  // stable
            #expect(Set(known.object.keys) == Set(unknown1.object.keys))

            // Without username: empty allow list for AutoFill / discoverable sign-in.
            let open = try await client.json("/api/authentication/options", .post, body: "{}")
            #expect(open.object["allowCredentials"] == nil || ids(open).isEmpty)

            // A passkey this server does not know: an error the page can turn into signalUnknownCredential.
            _ = try stranger.create(
                optionsJSON: Array(
                    try await client.json("/api/registration/options", .post, body: #"{"username":"ghost"}"#).body
                        .readableBytesView),
                origin: Self.origin
            )
            let (options, token) = try await begin(client, "/api/authentication/options", "{}")
            let assertion = try stranger.get(optionsJSON: options, origin: Self.origin)
            let r = try await client.json(
                "/api/authentication", .post, body: credentialBody(assertion.json),
                headers: [Self.ceremony: token ?? ""])
            #expect(r.status == .notFound)
            #expect(r.errorCode == "unknown_credential")
            #expect(r.object["credentialId"] as? String == Base64URL.encode(stranger.credentials[0].id))
            #expect(r.object["rpId"] as? String == "localhost")
        }
    }

    /// Two nodes on one database: a ceremony begun on one finishes on the other.
    @Test(arguments: TestDatabase.all)
    func ceremonyStartedOnOneNodeFinishesOnTheOther(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let va = VirtualAuthenticator()
        let nodeA = try await server.app()
        let nodeB = try await server.app()
        try await nodeA.test(.live) { a in
            try await nodeB.test(.live) { b in
                let (regOptions, regToken) = try await begin(a, "/api/registration/options", #"{"username":"dora"}"#)
                let created = try va.create(optionsJSON: regOptions, origin: Self.origin)
                let signedUp = try await b.json(
                    "/api/registration", .post, body: credentialBody(created.json),
                    headers: [Self.ceremony: regToken ?? ""])
                #expect(signedUp.status == .created, "\(signedUp.text)")

                let (authOptions, authToken) = try await begin(
                    b, "/api/authentication/options", #"{"username":"dora"}"#)
                let assertion = try va.get(optionsJSON: authOptions, origin: Self.origin)
                let body = credentialBody(assertion.json)
                let signedIn = try await a.json(
                    "/api/authentication", .post, body: body, headers: [Self.ceremony: authToken ?? ""])
                #expect(signedIn.status == .ok, "\(signedIn.text)")
                // Replayed on the other node: refused.
                let replay = try await b.json(
                    "/api/authentication", .post, body: body, headers: [Self.ceremony: authToken ?? ""])
                #expect(replay.errorCode == "challenge_invalid")
            }
        }
    }

    /// Ceremony starts are limited per address, so nobody fills the challenge table. Stored sign-in challenges share
    /// the database budget with sign-up; sealed ones store nothing and are counted in the node's memory, apart.
    @Test(arguments: SignInChallenges.allModes)
    func ceremonyStartsAreLimitedPerAddress(_ mode: SignInChallenges) async throws {
        var server = TestServer(.sqlite) { $0.signInChallenges = mode }
        server.rateLimits.ceremoniesPerAddress = 3
        let other: HTTPFields = [.init("X-Forwarded-For")!: "198.51.100.1"]
        try await server.app().test(.router) { client in
            for _ in 0..<3 {
                #expect(try await client.json("/api/authentication/options", .post, body: "{}").status == .ok)
            }
            let signUp = { try await client.json("/api/registration/options", .post, body: #"{"username":"flood"}"#) }
            if mode == .sealed {
                let limited = try await client.json("/api/authentication/options", .post, body: "{}")
                #expect(limited.status == .tooManyRequests)
                #expect(limited.headers[.retryAfter] != nil)
                for _ in 0..<3 { #expect(try await signUp().status == .ok) }
            }
            let limited = try await signUp()
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] != nil)
            let elsewhere = try await client.json("/api/authentication/options", .post, body: "{}", headers: other)
            #expect(elsewhere.status == .ok)
        }
    }

    /// A related origin (listed in /.well-known/webauthn) may use the RP ID; an unlisted one may not.
    @Test func relatedOriginsAreAcceptedAndOthersRefused() async throws {
        let server = TestServer(.sqlite) { $0.relatedOrigins = ["https://sesame-related.example"] }
        let va = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            for (origin, expected) in [
                ("https://evil.example", HTTPResponse.Status.badRequest), ("https://sesame-related.example", .created),
            ] {
                let (options, token) = try await begin(
                    client, "/api/registration/options", jsonString(["username": "rel\(expected.code)"]))
                var behaviour = VirtualAuthenticator.Behaviour()
                behaviour.clientDataOrigin = origin
                let created = try va.create(optionsJSON: options, origin: Self.origin, behaviour: behaviour)
                let r = try await client.json(
                    "/api/registration", .post, body: credentialBody(created.json),
                    headers: [Self.ceremony: token ?? ""])
                #expect(r.status == expected, "\(origin): \(r.text)")
            }
        }
    }

    @Test func httpsOriginPrefixesTheCeremonyCookie() async throws {
        let server = TestServer(.sqlite, origin: "https://example.com") { $0.rpID = "example.com" }
        try await server.app().test(.router) { client in
            let r = try await client.json("/api/authentication/options", .post, body: "{}")
            let cookie = r.headers[.setCookie] ?? ""
            #expect(cookie.hasPrefix("__Secure-sesame_ceremony="))
            #expect(cookie.contains("; Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        }
    }

    /// The ceremony cookie works for pages (no header).
    @Test func ceremonyCookieOverSockets() async throws {
        let server = TestServer(.sqlite)
        let va = VirtualAuthenticator()
        try await server.app().test(.live) { client in
            let r = try await client.json("/api/registration/options", .post, body: #"{"username":"eve"}"#)
            let cookie = try #require(r.cookie(named: "sesame_ceremony"))
            #expect(r.headers[.setCookie]?.contains("HttpOnly") == true)
            let created = try va.create(optionsJSON: Array(r.body.readableBytesView), origin: Self.origin)
            let done = try await client.json(
                "/api/registration", .post, body: credentialBody(created.json), headers: [.cookie: cookie])
            #expect(done.status == .created, "\(done.text)")
        }
    }
}
