import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameCore
@testable import SesameMetadata

/// FIDO metadata in the server (issue 12): `sesame metadata import` verifies before it stores, refuses an older or
/// tampered BLOB, running servers load a new one without a restart, its statements name passkeys, and a registration
/// policy file refuses what it says, over HTTP on both engines. The BLOB is the MDS3 specification's example (see
/// Tests/WebAuthnTests/Vectors/mds/index.json for its source).
@Suite struct MetadataServerTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("WebAuthnTests/Vectors/mds")
    /// The example FIDO2 entry's model.
    static let sampleAAGUID = "0132d110-bf4e-4208-a403-ab4f5f12efe5"
    static let sampleName = "FIDO Alliance Sample FIDO2 Authenticator"

    static func example(_ name: String) throws -> String {
        try String(contentsOf: vectors.appendingPathComponent(name), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func importRequest(_ file: String = "mds3-example-blob.jwt") throws -> MetadataAdmin.MetadataImport {
        var request = MetadataAdmin.MetadataImport(jwt: try example(file))
        request.rootsPEM = [try example("mds3-example-root.pem")]
        request.time = ISO8601DateFormatter().date(from: "2023-09-15T00:00:00Z")!
        request.allowStale = true  // the example's nextUpdate precedes its signer's notBefore
        return request
    }

    static func authenticator() -> VirtualAuthenticator {
        VirtualAuthenticator(configuration: .init(algorithms: [.es256], aaguid: uuidBytes(sampleAAGUID)))
    }

    static func uuidBytes(_ text: String) -> [UInt8] {
        let uuid = UUID(uuidString: text)!.uuid
        return withUnsafeBytes(of: uuid) { Array($0) }
    }

    @Test(arguments: TestDatabase.all)
    func importVerifiesFirstAndServersLoadItWithoutARestart(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let journey = PasskeyJourneyTests()
        try await server.app().test(.router) { client in
            // Before any import: the passkey is named generically.
            let before = try await journey.signUp(client, Self.authenticator(), "ada")
            #expect(before.status == .created, "\(before.text)")

            // A tampered BLOB and one signed by another root are refused and store nothing.
            await #expect(throws: AdminError.self) {
                try await server.withStore {
                    try await MetadataAdmin(store: $0).importMetadata(
                        try Self.importRequest("mds3-example-blob-tampered.jwt"))
                }
            }
            await #expect(throws: AdminError.self) {
                try await server.withStore { store in
                    var request = try Self.importRequest()
                    request.rootsPEM = []  // the bundled FIDO root did not sign the example
                    return try await MetadataAdmin(store: store).importMetadata(request)
                }
            }
            #expect(try await server.withStore { try await $0.latestMetadataNumber() } == nil)

            let lines = try await server.withStore {
                try await MetadataAdmin(store: $0).importMetadata(try Self.importRequest())
            }
            #expect(lines.first?.hasPrefix("metadata BLOB 15 imported: 2 entries") == true)
            // The same number again is not newer.
            await #expect(throws: AdminError.self) {
                try await server.withStore {
                    try await MetadataAdmin(store: $0).importMetadata(try Self.importRequest())
                }
            }
            let shown = try await server.withStore { try await MetadataAdmin(store: $0).showMetadata() }
            #expect(shown.contains("number: 15") && shown.contains("entries: 2"))

            // The running server picks it up once its poll interval has passed.
            server.clock.advance(MetadataService.pollInterval + 1)
            let after = try await journey.signUp(client, Self.authenticator(), "bob")
            #expect(after.status == .created)
            let session = try #require(after.object["sessionToken"] as? String)
            let passkeys = try await client.json(
                "/api/account/passkeys", headers: [.authorization: "Bearer \(session)"])
            let list = try JSONSerialization.jsonObject(with: Data(passkeys.text.utf8)) as? [[String: Any]]
            let first = try #require(list?.first)
            #expect(first["name"] as? String == Self.sampleName)
            #expect(first["provider"] as? String == Self.sampleName)
        }
        let kinds = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 50) }.map(\.kind)
        #expect(kinds.contains(AuditKind.metadataImported.rawValue))
    }

    @Test(arguments: TestDatabase.all)
    func aRegistrationPolicyFileRefusesWhatItSays(_ db: TestDatabase) async throws {
        let policy = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString).json")
        try Data(#"{"denyAAGUIDs": ["\#(Self.sampleAAGUID)"]}"#.utf8).write(to: policy)
        defer { try? FileManager.default.removeItem(at: policy) }
        let server = TestServer(db) { $0.registrationPolicyFile = policy.path }
        let journey = PasskeyJourneyTests()
        try await server.app().test(.router) { client in
            let denied = try await journey.signUp(client, Self.authenticator(), "ada")
            #expect(denied.status == .badRequest)
            #expect(denied.errorCode == "registration_failed")
            #expect(denied.text.contains("policyAAGUIDDenied"))
            // Another model is admitted.
            #expect(try await journey.signUp(client, VirtualAuthenticator(), "bob").status == .created)
        }
        // A policy file that is not a policy stops the start, naming the setting.
        try Data(#"{"denyAAGUIDs": 3}"#.utf8).write(to: policy)
        var broken = ServerConfiguration()
        broken.registrationPolicyFile = policy.path
        let error = try #require(throws: ConfigurationError.self) { try broken.validate() }
        #expect(error.description.hasPrefix("registration-policy-file:"))
    }
}
