import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesamePasskeys

/// Sign-in options for a username without passkeys look like a real account's: same JSON shape and field order,
/// a stable 1–3 descriptors with realistic ID lengths and transports, the same after a restart.
@Suite struct FakeCredentialTests {
    @Test func countsAndProfilesFollowTheirWeights() {
        let fakes = FakeCredentials(serverSecret: Secrets.random(32))
        var counts = [0, 0, 0, 0]
        var profiles: [Int: Int] = [:]
        let total = 4000
        for index in 0..<total {
            let list = fakes.allowList("user\(index)")
            counts[list.count] += 1
            for descriptor in list {
                let profile = FakeCredentials.profiles.first { $0.idLength == descriptor.id.bytes.count }
                #expect(profile?.transports == descriptor.transports)
                profiles[descriptor.id.bytes.count, default: 0] += 1
            }
        }
        #expect(FakeCredentials.profiles.map(\.weight).reduce(0, +) == 256)
        #expect(counts[0] == 0)
        // 5/8, 1/4, 1/8 (±3 points: the binomial spread over 4000 draws is about 0.8 points).
        #expect(abs(Double(counts[1]) / Double(total) - 0.625) < 0.03)
        #expect(abs(Double(counts[2]) / Double(total) - 0.25) < 0.03)
        #expect(abs(Double(counts[3]) / Double(total) - 0.125) < 0.03)
        let descriptors = Double(profiles.values.reduce(0, +))
        for profile in FakeCredentials.profiles {
            #expect(
                abs(Double(profiles[profile.idLength] ?? 0) / descriptors - Double(profile.weight) / 256) < 0.03,
                "\(profile.idLength)")
        }
    }

    @Test func listsAreStablePerSecretAndDistinctPerName() {
        let secret = Secrets.random(32)
        let one = FakeCredentials(serverSecret: secret)
        #expect(one.allowList("nobody") == FakeCredentials(serverSecret: secret).allowList("nobody"))
        #expect(one.allowList("nobody") != one.allowList("nobody2"))
        #expect(one.allowList("nobody") != FakeCredentials(serverSecret: Secrets.random(32)).allowList("nobody"))
        let ids = one.allowList("three?").map(\.id) + one.allowList("x").map(\.id)
        #expect(Set(ids).count == ids.count)
    }

    /// The options JSON with every per-call or per-credential value blanked and repeated descriptors folded: what
    /// an observer could compare between a known and an unknown username.
    static func skeleton(_ text: String) -> String {
        var s = text
        for (pattern, replacement) in [
            (#""challenge":"[^"]*""#, #""challenge":"*""#),
            (#""id":"[^"]*""#, #""id":"*""#),
            (#""transports":\[[^\]]*\]"#, #""transports":[*]"#),
            (#"(\{[^{}]*\})(,\1)+"#, "$1"),
        ] {
            s = s.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return s
    }

    static func credential(_ id: [UInt8], user: User, transports: [String]) -> StoredCredential {
        StoredCredential(
            id: id, userID: user.id, publicKey: [0xa0], signCount: 0, transports: transports, aaguid: nil,
            backupEligible: true,
            backedUp: true, userVerified: true, attestationFormat: "none", name: "Passkey",
            createdAt: Date(timeIntervalSince1970: 0),
            lastUsedAt: nil
        )
    }

    @Test(arguments: TestDatabase.all)
    func knownAndUnknownOptionsHaveOneShapeAndUnknownOnesAreStable(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let one = try await server.seedUser("one")
        let two = try await server.seedUser("two")
        try await server.seedUser("nopasskey", password: "correct horse")
        try await server.withStore { (store: SQLStore) async throws in
            try await store.addCredential(
                Self.credential(Secrets.random(20), user: one, transports: ["hybrid", "internal"]))
            try await store.addCredential(
                Self.credential(Secrets.random(20), user: two, transports: ["hybrid", "internal"]))
            try await store.addCredential(Self.credential(Secrets.random(64), user: two, transports: ["nfc", "usb"]))
        }
        // Unknown names are tried until lists of 1, 2 and 3 descriptors have all occurred (a list of 3 comes one time
        // in 8, so a fixed two dozen names would miss it in about 4 runs of 100); 400 names make a miss impossible
        // in practice, and the loop stops as soon as every size has been seen.
        let candidateNames = ["nopasskey"] + (0..<400).map { "ghost\($0)" }
        @Sendable func options(_ client: some TestClientProtocol, _ name: String) async throws -> TestResponse {
            let r = try await client.json("/api/authentication/options", .post, body: jsonString(["username": name]))
            #expect(r.status == .ok)
            return r
        }
        @Sendable func ids(_ r: TestResponse) -> [String] {
            (r.object["allowCredentials"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
        }
        let first: [String: [String]] = try await server.app().test(.router) { client async throws in
            let known = try await options(client, "one")
            let shape = Self.skeleton(known.text)
            #expect(shape.contains(#""allowCredentials":[{"#))
            #expect(Self.skeleton(try await options(client, "two").text) == shape)
            #expect(ids(try await options(client, "two")).count == 2)
            var lists: [String: [String]] = [:]
            var sizes = Set<Int>()
            for name in candidateNames where sizes.count < 3 || lists.count < 24 {
                let unknown = try await options(client, name)
                #expect(Self.skeleton(unknown.text) == shape, "\(name)")
                #expect(unknown.headers[.contentType] == known.headers[.contentType])
                #expect(Set(unknown.headers.map(\.name)) == Set(known.headers.map(\.name)))
                lists[name] = ids(unknown)
                sizes.insert(ids(unknown).count)
                // Stable across calls and letter case.
                #expect(ids(try await options(client, name.uppercased())) == lists[name])
                for id in ids(unknown) {
                    #expect(FakeCredentials.profiles.map(\.idLength).contains(try Base64URL.decode(id).count))
                }
            }
            #expect(sizes == [1, 2, 3])
            return lists
        }
        // A restart (new application, same database and so the same server secret) gives the same lists.
        #expect(first.count >= 24)
        try await server.app().test(.router) { client async throws in
            for (name, list) in first {
                #expect(ids(try await options(client, name)) == list)
            }
        }
    }
}
