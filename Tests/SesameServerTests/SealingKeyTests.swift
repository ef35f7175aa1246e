import Foundation
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing

@testable import SesameCore
@testable import SesameSecondFactors
@testable import SesameOperations

/// The sealing key file: parsing, typed errors, and moving a database from the database key to file keys and
/// between file keys, on every engine.
@Suite struct SealingKeyTests {
    static let keyA = Data((0..<32).map { UInt8($0) }).base64EncodedString()
    static let keyB = Data((0..<32).map { UInt8(200 - $0) }).base64EncodedString()
    static let totpSecret: [UInt8] = Array("12345678901234567890".utf8)
    static let phone = "+15555550123"

    /// Writes a key file with the given lines and returns its path.
    static func keyFile(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-key-\(UUID().uuidString)").path
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func id(_ base64: String) throws -> String {
        SealingKey(material: try #require(SealingKeyFile.decodeBase64(base64))).hexID
    }

    // MARK: Parsing

    @Test func parsesKeysCommentsAndTheDatabaseEntry() throws {
        let urlAlphabetUnpadded = Self.keyB.replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
        let file = try SealingKeyFile.load(
            path: try Self.keyFile(["# current", "  \(Self.keyA)  ", "", urlAlphabetUnpadded, "database", ""]))
        #expect(file.descriptions == [try Self.id(Self.keyA), try Self.id(Self.keyB), "database"])
        // Ids are stable, distinct, 8 bytes, and not a piece of the key.
        #expect(try Self.id(Self.keyA) == (try Self.id(Self.keyA)))
        #expect(try Self.id(Self.keyA).count == 16)
        #expect(
            !Data((0..<32).map { UInt8($0) }).map { String(format: "%02x", $0) }.joined().contains(
                try Self.id(Self.keyA)))
    }

    @Test func generatedLinesAreKeys() throws {
        let line = SealingKey.generateLine()
        #expect(SealingKeyFile.decodeBase64(line)?.count == 32)
        #expect(line != SealingKey.generateLine())
    }

    @Test func typedErrorsNameTheLineNeverTheKey() throws {
        let short = Data((0..<16).map { UInt8($0 + 1) }).base64EncodedString()
        let long = Data((0..<33).map { UInt8($0 + 1) }).base64EncodedString()
        let cases: [([String], (String) -> SealingKeyError)] = [
            ([], { .empty(path: $0) }),
            (["# only a comment", ""], { .empty(path: $0) }),
            (["# k", short], { .wrongLength(path: $0, line: 2, bytes: 16) }),
            ([long], { .wrongLength(path: $0, line: 1, bytes: 33) }),
            (["not base64 at all!"], { .malformed(path: $0, line: 1) }),
            ([Self.keyA + "=="], { .malformed(path: $0, line: 1) }),
            ([Self.keyA, "database", Self.keyA], { .duplicate(path: $0, line: 3) }),
            (["database", "database"], { .duplicate(path: $0, line: 2) }),
        ]
        for (lines, expected) in cases {
            let path = try Self.keyFile(lines)
            expectExactly(expected(path)) { try SealingKeyFile.load(path: path) }
            do { _ = try SealingKeyFile.load(path: path) } catch {
                for line in lines where line.count > 8 && !line.hasPrefix("#") && line != "not base64 at all!" {
                    #expect(!error.description.contains(line))
                }
            }
        }
        let binary = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-key-\(UUID().uuidString)")
            .path
        try Data([0xff, 0xfe, 0x00, 0x80] + Array(repeating: 0xc3, count: 28)).write(to: URL(fileURLWithPath: binary))
        expectExactly(SealingKeyError.notText(path: binary)) { try SealingKeyFile.load(path: binary) }
        let missing = "/nonexistent/sesame-sealing.key"
        expectExactly(SealingKeyError.unreadable(path: missing)) { try SealingKeyFile.load(path: missing) }
        let huge = try Self.keyFile([String(repeating: "#", count: SealingKeyFile.maximumSize + 1)])
        expectExactly(SealingKeyError.tooLarge(path: huge)) { try SealingKeyFile.load(path: huge) }
    }

    /// A bad key file stops the server before it serves (typed error), on every engine.
    @Test(arguments: TestDatabase.all)
    func aBadKeyFileStopsTheStart(_ db: TestDatabase) async throws {
        let path = try Self.keyFile([Data(repeating: 1, count: 31).base64EncodedString()])
        let server = TestServer(db) { $0.sealingKeyFile = path }
        await expectExactly(SealingKeyError.wrongLength(path: path, line: 1, bytes: 31)) {
            _ = try await server.app()
        }
        var missing = server
        missing.configuration.sealingKeyFile = "/nonexistent/key"
        await expectExactly(SealingKeyError.unreadable(path: "/nonexistent/key")) { _ = try await missing.app() }
    }

    @Test func configurationReadsTheSetting() throws {
        let fromEnvironment = try ServerConfiguration.resolve(
            flags: [:], environment: ["SESAME_SEALING_KEY_FILE": "/etc/k"], configFile: nil)
        #expect(fromEnvironment.sealingKeyFile == "/etc/k")
        let fromFlag = try ServerConfiguration.resolve(
            flags: ["sealingKeyFile": "/run/k"], environment: ["SESAME_SEALING_KEY_FILE": "/etc/k"], configFile: nil)
        #expect(fromFlag.sealingKeyFile == "/run/k")
        var fromFile = ServerConfiguration()
        try fromFile.apply(json: Data(#"{"sealingKeyFile": "/srv/k"}"#.utf8))
        #expect(fromFile.sealingKeyFile == "/srv/k")
        #expect(ServerConfiguration().sealingKeyFile == nil)
    }

    // MARK: Stores

    /// Values written under a file key are version 2 with the key id in front; a store without that key cannot open
    /// them and says which key is missing; a header naming another loaded key fails authentication.
    @Test(arguments: TestDatabase.all)
    func fileKeySealsVersionTwoAndAnUnknownKeyIsATypedError(_ db: TestDatabase) async throws {
        var server = TestServer(db) { $0.sealingKeyFile = try? Self.keyFile([Self.keyA, Self.keyB]) }
        let user = try await server.seedUser("fay")
        let idA = SealingKey(material: try #require(SealingKeyFile.decodeBase64(Self.keyA))).id
        let idB = SealingKey(material: try #require(SealingKeyFile.decodeBase64(Self.keyB))).id
        let raw = try await server.withStore { (store: SQLStore) async throws in
            try await store.setPendingTOTP(userID: user.id, secret: Self.totpSecret, at: server.clock.now)
            try await store.setSMS(userID: user.id, phone: Self.phone, confirmed: true, at: server.clock.now)
            let raw = try await FieldEncryptionTests.rawTOTP(store, user.id)
            #expect(raw.count == 1 + 8 + 12 + Self.totpSecret.count + 16)
            #expect(raw[0] == 2 && Array(raw[1..<9]) == idA)
            #expect(try await store.totp(userID: user.id)?.secret == Self.totpSecret)
            #expect(try await store.sms(userID: user.id)?.phone == Self.phone)
            return raw
        }
        // Swapping the key id for the other loaded key's id: the header is authenticated, so it fails.
        try await server.withStore { (store: SQLStore) async throws in
            try await store.db.raw(
                "UPDATE totp SET secret = \(bind: Data([2] + idB + raw[9...])) WHERE user_id = \(bind: user.id)"
            ).run()
            await expectExactly(StoreError.undecryptable("totp")) { try await store.totp(userID: user.id) }
            try await store.db.raw("UPDATE totp SET secret = \(bind: Data(raw)) WHERE user_id = \(bind: user.id)").run()
        }
        // Without the key file, or with only key B: a typed error naming the purpose and key A's id.
        let idAHex = try Self.id(Self.keyA)
        for keys in [nil, try Self.keyFile([Self.keyB])] as [String?] {
            server.configuration.sealingKeyFile = keys
            try await server.withStore { (store: SQLStore) async throws in
                await expectExactly(StoreError.unknownSealingKey("totp", keyID: idAHex)) {
                    try await store.totp(userID: user.id)
                }
                await expectExactly(StoreError.unknownSealingKey("sms", keyID: idAHex)) {
                    try await store.sms(userID: user.id)
                }
            }
        }
    }

    /// The migration path: database key → file key A (values written before still open) → rotate → A + B with B
    /// sealing → rotate → B alone; rotating with a key missing reports the rows and changes none.
    @Test(arguments: TestDatabase.all)
    func moveFromTheDatabaseKeyToFileKeysAndRotate(_ db: TestDatabase) async throws {
        var server = TestServer(db)
        let ann = try await server.seedUser("ann")
        let ben = try await server.seedUser("ben")
        try await server.withStore { (store: SQLStore) async throws in
            try await store.setPendingTOTP(userID: ann.id, secret: Self.totpSecret, at: server.clock.now)
            try await store.setSMS(userID: ann.id, phone: Self.phone, confirmed: true, at: server.clock.now)
            try await store.setSMS(userID: ben.id, phone: "+15555550199", confirmed: false, at: server.clock.now)
            #expect(try await FieldEncryptionTests.rawTOTP(store, ann.id)[0] == 1)
        }
        let idA = try Self.id(Self.keyA)
        let idB = try Self.id(Self.keyB)

        // Step 1: key A seals; the old values still open under the database key.
        server.configuration.sealingKeyFile = try Self.keyFile([Self.keyA])
        try await server.withStore { (store: SQLStore) async throws in
            #expect(try await store.totp(userID: ann.id)?.secret == Self.totpSecret)
            #expect(
                try await store.sealedSecretCounts() == [
                    SealedSecretCount(purpose: "sms", key: "database", state: .openOnly, count: 2),
                    SealedSecretCount(purpose: "totp", key: "database", state: .openOnly, count: 1),
                ])
            let status = try await Admin(store: store).sealingStatus(
                keys: try SealingKeyFile.load(path: try #require(server.configuration.sealingKeyFile)))
            #expect(status.first == "key file: \(idA) (the first seals)")
            #expect(status.contains("sms: 2 under database (open only)"))
            #expect(
                try await Admin(store: store).resealSecrets().first
                    == "resealed 3, already under the sealing key 0, changed meanwhile 0")
            #expect(
                try await store.sealedSecretCounts() == [
                    SealedSecretCount(purpose: "sms", key: idA, state: .sealing, count: 2),
                    SealedSecretCount(purpose: "totp", key: idA, state: .sealing, count: 1),
                ])
            #expect(try await FieldEncryptionTests.rawTOTP(store, ann.id)[0] == 2)
            #expect(try await store.totp(userID: ann.id)?.secret == Self.totpSecret)
            #expect(try await store.sms(userID: ben.id) == SMSRecord(phone: "+15555550199", confirmed: false))
        }

        // Step 2: a node with only key B is missing key A: status says so, rotation refuses and changes nothing.
        server.configuration.sealingKeyFile = try Self.keyFile([Self.keyB])
        try await server.withStore { (store: SQLStore) async throws in
            #expect(try await store.sealedSecretCounts().map(\.state) == [.missing, .missing])
            let before = try await FieldEncryptionTests.rawTOTP(store, ann.id)
            await #expect(throws: AdminError.self) { try await Admin(store: store).resealSecrets() }
            #expect(try await FieldEncryptionTests.rawTOTP(store, ann.id) == before)
        }

        // Step 3: B seals, A opens; rotate moves everything to B; a second rotation has nothing to do.
        server.configuration.sealingKeyFile = try Self.keyFile(["# new", Self.keyB, "# old", Self.keyA])
        try await server.withStore { (store: SQLStore) async throws in
            #expect(try await store.sealedSecretCounts().map(\.state) == [.openOnly, .openOnly])
            #expect(
                try await store.resealSecrets()
                    == ResealReport(resealed: 3, current: 0, changedMeanwhile: 0, failures: []))
            #expect(
                try await store.resealSecrets()
                    == ResealReport(resealed: 0, current: 3, changedMeanwhile: 0, failures: []))
        }

        // Step 4: key A removed; everything opens under B alone.
        server.configuration.sealingKeyFile = try Self.keyFile([Self.keyB])
        try await server.withStore { (store: SQLStore) async throws in
            #expect(
                try await store.sealedSecretCounts() == [
                    SealedSecretCount(purpose: "sms", key: idB, state: .sealing, count: 2),
                    SealedSecretCount(purpose: "totp", key: idB, state: .sealing, count: 1),
                ])
            #expect(try await store.totp(userID: ann.id)?.secret == Self.totpSecret)
            #expect(try await store.sms(userID: ann.id)?.phone == Self.phone)
        }

        // Back to the database key (the `database` entry first): rotation moves the values back.
        server.configuration.sealingKeyFile = try Self.keyFile(["database", Self.keyB])
        try await server.withStore { (store: SQLStore) async throws in
            #expect(try await store.resealSecrets().resealed == 3)
            #expect(try await FieldEncryptionTests.rawTOTP(store, ann.id)[0] == 1)
        }
    }

    /// Over HTTP: TOTP works under a file key; a server started without that key answers 500 `internal_error`
    /// for the row (no crash, no secret), and works again once the key is back.
    @Test(arguments: TestDatabase.all)
    func aServerMissingTheKeyAnswersAServerError(_ db: TestDatabase) async throws {
        var server = TestServer(db) { $0.sealingKeyFile = try? Self.keyFile([Self.keyA]) }
        let withKey = server.configuration.sealingKeyFile
        try await server.seedUser("gil", password: "correct horse")
        let token = try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "gil", "correct horse")
            #expect(
                try await client.json("/api/account/totp", .post, headers: session.bearerHeaders).status == .created)
            #expect(try await client.json("/api/account/totp/qr.png", headers: session.bearerHeaders).status == .ok)
            return session
        }
        server.configuration.sealingKeyFile = try Self.keyFile([Self.keyB])
        try await server.app().test(.router) { client in
            let qr = try await client.json("/api/account/totp/qr.png", headers: token.bearerHeaders)
            #expect(qr.status == .internalServerError)
            #expect(qr.errorCode == "internal_error")
            #expect(!qr.text.contains(try Self.id(Self.keyA)))
        }
        server.configuration.sealingKeyFile = withKey
        try await server.app().test(.router) { client async throws in
            #expect(try await client.json("/api/account/totp/qr.png", headers: token.bearerHeaders).status == .ok)
        }
    }
}
