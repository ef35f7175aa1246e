import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesameIdentityProvider

/// OpenID Connect clients declared in the JSON configuration file: refused with a message naming the field, created
/// at the first start, updated when the declaration changes, left alone when it does not, on both engines.
@Suite struct DeclaredClientTests {
    static func secretFile(_ secret: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-secret-\(UUID().uuidString)")
            .path
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func declare(_ json: String, into configuration: inout ServerConfiguration) throws {
        try configuration.apply(json: Data(#"{"clients": \#(json)}"#.utf8))
    }

    static func introspect(_ client: some TestClientProtocol, _ secret: String) async throws -> HTTPResponse.Status {
        try await client.execute(
            uri: "/oauth/introspect", method: .post, headers: IdentityProviderTests.basic("wiki", secret),
            body: IdentityProviderTests.form([("token", "x")])
        ).status
    }

    @Test func badDeclarationsAreRefusedByName() throws {
        let cases: [(String, String)] = [
            (#"[{"id": "wiki", "name": "Wiki", "redirectURIs": ["https://w.example/cb"]}]"#, "secretFile"),
            (#"[{"id": "sesame_x", "name": "W", "redirectURIs": ["https://w.example/cb"], "public": true}]"#, ".id"),
            (#"[{"id": "a b", "name": "W", "redirectURIs": ["https://w.example/cb"], "public": true}]"#, ".id"),
            (
                #"[{"id": "wiki", "name": "W", "redirectURIs": ["http://w.example/cb"], "public": true}]"#,
                "http://w.example/cb"
            ),
            (#"[{"id": "wiki", "name": "W", "redirectURIs": [], "public": true}]"#, "redirectURIs"),
            (
                #"[{"id": "wiki", "name": "W", "redirectURIs": ["https://a.example/cb", "https://b.example/cb"], "public": true, "subjectType": "pairwise"}]"#,
                "one host"
            ),
            (
                #"[{"id": "wiki", "name": "W", "redirectURIs": ["https://w.example/cb"], "public": true, "idTokenAlg": "HS256"}]"#,
                "idTokenAlg"
            ),
            (
                #"[{"id": "w", "name": "W", "redirectURIs": ["https://w.example/cb"], "public": true}, {"id": "w", "name": "V", "redirectURIs": ["https://w.example/cb"], "public": true}]"#,
                "same id"
            ),
            (#"{"id": "w"}"#, "clients must be a list"),
            (
                #"[{"id": "w", "name": "W", "redirectURIs": ["https://w.example/cb"], "public": true, "allowedGroups": ["Family"]}]"#,
                "allowedGroups: group slug \"Family\" has a capital letter"
            ),
            (
                #"[{"id": "w", "name": "W", "redirectURIs": ["https://w.example/cb"], "public": true, "allowedGroups": []}]"#,
                "allowedGroups: give at least one group"
            ),
        ]
        for (json, named) in cases {
            var configuration = ServerConfiguration()
            let error = try #require(throws: ConfigurationError.self) { try Self.declare(json, into: &configuration) }
            #expect(error.description.contains(named), "\(json): \(error.description)")
            #expect(configuration.clients.isEmpty)
        }
    }

    @Test(arguments: TestDatabase.all)
    func declaredClientsAreBroughtInLineAtEveryStart(_ db: TestDatabase) async throws {
        let secret = "wiki-secret-" + String(repeating: "x", count: 32)
        let path = try Self.secretFile(secret)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var server = TestServer(db)
        try Self.declare(
            #"[{"id": "wiki", "name": "Wiki", "redirectURIs": ["https://wiki.example/cb"], "secretFile": "\#(path)", "firstParty": true}, {"id": "cli", "name": "CLI", "redirectURIs": ["http://127.0.0.1/cb"], "public": true}]"#,
            into: &server.configuration)
        try await server.app().test(.router) { (client) async throws -> Void in
            #expect(try await Self.introspect(client, secret) == .ok)
            #expect(try await Self.introspect(client, secret + "y") == .unauthorized)
        }
        let first = try await server.withStore { try await $0.clients() }
        #expect(Set(first.map(\.id)) == ["wiki", "cli"])
        #expect(first.first { $0.id == "cli" }?.isPublic == true)
        #expect(first.first { $0.id == "wiki" }?.secretHash == Secrets.sha256(secret))

        // The same file again changes nothing; a changed declaration updates the stored client.
        try await server.app().test(.router) { _ in }
        server.configuration.clients[0].name = "Team wiki"
        server.configuration.clients[0].redirectURIs.append("https://wiki.example/cb2")
        try await server.app().test(.router) { (client) async throws -> Void in
            #expect(try await Self.introspect(client, secret) == .ok)
        }
        let wiki = try #require(try await server.withStore { try await $0.client(id: "wiki") })
        #expect(wiki.name == "Team wiki" && wiki.redirectURIs.count == 2)
        #expect(wiki.createdAt == first.first { $0.id == "wiki" }?.createdAt)
        let kinds = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 20) }
            .filter { $0.clientAddress == "config" }.map { "\($0.kind) \($0.detail)" }
        #expect(kinds.sorted() == ["client.added cli", "client.added wiki", "client.updated wiki"])

        // A secret file that cannot be read stops the start with its name, never the secret.
        server.configuration.clients[0].secretFile = path + ".missing"
        let broken = server
        await #expect(throws: ConfigurationError.self) { try await broken.app().test(.router) { _ in } }
    }
}
