import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameCore

/// Sealed sign-in challenges (`SealedSignInChallenge`): nothing stored by the options step, spent once by the verify
/// step on every path, and finished by nodes of either setting, so the setting can change node by node.
@Suite struct SealedSignInTests {
    let journey = PasskeyJourneyTests()
    static let ceremony = PasskeyJourneyTests.ceremony
    static let origin = PasskeyJourneyTests.origin

    /// A node issuing sealed challenges beside one issuing stored ones, on one database: each finishes the other's
    /// (discoverable and username-first), and neither finishes one the other already did.
    @Test(arguments: TestDatabase.all)
    func nodesOfEitherSettingFinishEachOthersCeremonies(_ db: TestDatabase) async throws {
        var server = TestServer(db) { $0.signInChallenges = .sealed }
        let sealedNode = try await server.app()
        server.configuration.signInChallenges = .stored
        let storedNode = try await server.app()
        let va = VirtualAuthenticator()
        try await sealedNode.test(.router) { sealed in
            try await storedNode.test(.router) { stored in
                #expect(try await journey.signUp(sealed, va, "nia").status == .created)
                for (begin, finish) in [(sealed, stored), (stored, sealed)] {
                    for body in ["{}", #"{"username":"nia"}"#] {
                        let (options, token) = try await journey.begin(begin, "/api/authentication/options", body)
                        let assertion = journey.credentialBody(
                            try va.get(optionsJSON: options, origin: Self.origin).json)
                        let headers: HTTPFields = [Self.ceremony: token ?? ""]
                        let done = try await finish.json(
                            "/api/authentication", .post, body: assertion, headers: headers)
                        #expect(done.status == .ok, "\(done.text)")
                        for node in [sealed, stored] {
                            let replay = try await node.json(
                                "/api/authentication", .post, body: assertion, headers: headers)
                            #expect(replay.errorCode == "challenge_invalid")
                        }
                    }
                }
            }
        }
        let nia = try #require(try await server.withStore { try await $0.user(usernameKey: "nia") })
        #expect(try await server.withStore { try await $0.sessions(userID: nia.id, now: server.clock.now) }.count == 5)
    }

    /// The options step writes nothing; a failed check spends the challenge (a bad signature, an unknown passkey,
    /// another account's passkey under a username), so the same challenge then fails even with a good assertion.
    @Test(arguments: TestDatabase.all)
    func aFailedCheckSpendsTheChallenge(_ db: TestDatabase) async throws {
        let server = TestServer(db) { $0.signInChallenges = .sealed }
        let owner = VirtualAuthenticator()
        let other = VirtualAuthenticator()
        let stranger = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            #expect(try await journey.signUp(client, owner, "oda").status == .created)
            #expect(try await journey.signUp(client, other, "pim").status == .created)
            // The options step writes nothing: no challenge row, no rate-limit row.
            func rows() async throws -> Int {
                try await server.withStore { store in
                    try await store.engine.sql.raw(
                        "SELECT (SELECT COUNT(*) FROM challenges) + (SELECT COUNT(*) FROM rate_limits) AS n"
                    ).first()?.decode(column: "n", as: Int.self) ?? -1
                }
            }
            let before = try await rows()
            _ = try await journey.begin(client, "/api/authentication/options", #"{"username":"oda"}"#)
            _ = try await journey.begin(client, "/api/authentication/options", "{}")
            #expect(try await rows() == before)

            var badSignature = VirtualAuthenticator.Behaviour()
            badSignature.tamper = [.signature(at: 10)]
            // Assertions from the options without their allow list, so any authenticator answers any of them.
            func assertion(
                _ va: VirtualAuthenticator, _ options: [UInt8],
                _ behaviour: VirtualAuthenticator.Behaviour =
                    .init()
            ) throws -> String {
                var object = try #require(try JSONSerialization.jsonObject(with: Data(options)) as? [String: Any])
                object["allowCredentials"] = nil
                let open = try JSONSerialization.data(withJSONObject: object)
                return journey.credentialBody(
                    try va.get(optionsJSON: Array(open), origin: Self.origin, behaviour: behaviour).json)
            }
            let cases: [(String, (([UInt8]) throws -> String))] = [
                ("{}", { try assertion(owner, $0, badSignature) }),
                (#"{"username":"oda"}"#, { try assertion(owner, $0, badSignature) }),
                (#"{"username":"oda"}"#, { try assertion(other, $0) }),
                (#"{"username":"nobody"}"#, { try assertion(owner, $0) }),
                ("{}", { try assertion(stranger, $0) }),
            ]
            // A passkey whose account was deleted: unknown here (discoverable: 404 unknown_credential).
            #expect(try await journey.signUp(client, stranger, "gone").status == .created)
            let gone = try #require(try await server.withStore { try await $0.user(usernameKey: "gone") })
            #expect(try await server.withStore { try await $0.deleteUser(id: gone.id) })
            for (body, failing) in cases {
                let (options, token) = try await journey.begin(client, "/api/authentication/options", body)
                let headers: HTTPFields = [Self.ceremony: token ?? ""]
                let refused = try await client.json(
                    "/api/authentication", .post, body: try failing(options), headers: headers)
                #expect(refused.status == .badRequest || refused.status == .notFound, "\(body): \(refused.text)")
                #expect(refused.errorCode != "challenge_invalid", "\(body): \(refused.text)")
                // The person's own passkey over the same challenge: spent.
                let after = try await client.json(
                    "/api/authentication", .post, body: try assertion(owner, options), headers: headers)
                #expect(after.errorCode == "challenge_invalid", "\(body): \(after.text)")
            }
        }
    }

    /// The budget of sealed sign-in starts is per node: a second node counts its own.
    @Test func sealedStartsAreCountedPerNode() async throws {
        var server = TestServer(.sqlite) { $0.signInChallenges = .sealed }
        server.rateLimits.ceremoniesPerAddress = 2
        let a = try await server.app()
        let b = try await server.app()
        try await a.test(.router) { a in
            try await b.test(.router) { b in
                for node in [a, b] {
                    for _ in 0..<2 {
                        #expect(try await node.json("/api/authentication/options", .post, body: "{}").status == .ok)
                    }
                    let limited = try await node.json("/api/authentication/options", .post, body: "{}")
                    #expect(limited.status == .tooManyRequests)
                    #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 > 0)
                }
            }
        }
    }

    /// The format: every byte of an issued challenge is covered, the binding and the account are checked, and a
    /// challenge sealed under another server secret does not open.
    @Test func sealedChallengesOpenOnlyAsIssued() throws {
        let seal = SealedSignInChallenge(serverSecret: Array(repeating: 7, count: 32))
        let binding = Secrets.sha256("token")
        let expires = Date(timeIntervalSince1970: 1_800_000_000)
        let challenge = seal.make(binding: binding, accountID: "u1", usernameFirst: true, expires: expires)
        #expect(challenge.count == SealedSignInChallenge.length)
        let opened = try #require(seal.open(challenge, binding: binding))
        #expect(opened.usernameFirst && opened.expires == expires)
        #expect(seal.names(opened, accountID: "u1"))
        #expect(!seal.names(opened, accountID: "u2") && !seal.names(opened, accountID: nil))
        #expect(seal.open(challenge, binding: Secrets.sha256("other")) == nil)
        for index in challenge.indices {
            var changed = challenge
            changed[index] ^= 0x01
            #expect(seal.open(changed, binding: binding) == nil, "byte \(index)")
        }
        #expect(seal.open(Array(challenge.dropLast()), binding: binding) == nil)
        #expect(
            SealedSignInChallenge(serverSecret: Array(repeating: 8, count: 32)).open(challenge, binding: binding) == nil
        )
        let discoverable = seal.make(binding: binding, accountID: nil, usernameFirst: false, expires: expires)
        #expect(try #require(seal.open(discoverable, binding: binding)).usernameFirst == false)
        #expect(discoverable[10..<26] != challenge[10..<26])
    }
}
