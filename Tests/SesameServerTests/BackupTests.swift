import Foundation
import Logging
import SQLKit
import Testing

@testable import SesameServer
@testable import SesameCore
@testable import SesameIdentityProvider
@testable import SesameKeychainSync
@testable import SesameOperations

/// `sesame backup` / `sesame restore` at the library level: the SQLite header check that runs before anything is
/// copied, and a round trip whose refusals leave the target as it was. Tests/Interop/test_backup.py covers the
/// commands and the backup under sign-up load.
@Suite struct BackupTests {
    static let logger = Logger(label: "test.backup")

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A valid header: page size 4096, 3 pages, counters in agreement.
    static func header(pageSize: UInt16 = 4096, pages: UInt32 = 3, counter: UInt32 = 7, validFor: UInt32 = 7)
        -> [UInt8]
    {
        var bytes = SQLiteFileHeader.magic + [UInt8](repeating: 0, count: SQLiteFileHeader.length - 16)
        bytes[16] = UInt8(pageSize >> 8)
        bytes[17] = UInt8(pageSize & 0xff)
        for (offset, value) in [(24, counter), (28, pages), (92, validFor)] {
            for i in 0..<4 { bytes[offset + i] = UInt8((value >> (8 * (3 - UInt32(i)))) & 0xff) }
        }
        return bytes
    }

    @Test func readsPageSizeAndCount() throws {
        let header = try SQLiteFileHeader.parse(Self.header()).get()
        #expect(header == SQLiteFileHeader(pageSize: 4096, pageCount: 3))
        #expect(header.expectedFileSize == 12288)
        // Page size 1 stands for 65536.
        #expect(try SQLiteFileHeader.parse(Self.header(pageSize: 1)).get().pageSize == 65536)
    }

    @Test(arguments: 0..<SQLiteFileHeader.length)
    func everyCutOfTheHeaderIsReported(length: Int) {
        let result = SQLiteFileHeader.parse(Array(Self.header().prefix(length)))
        #expect(result == .failure(length == 0 ? .notSQLite : .tooShort))
    }

    @Test(arguments: [
        (header(pageSize: 0), SQLiteFileHeader.Problem.malformed),
        (header(pageSize: 256), .malformed),
        (header(pageSize: 3000), .malformed),
        (header(pages: 0), .malformed),
        (header(counter: 7, validFor: 6), .malformed),
        (Array("SQLite format 2\0".utf8) + [UInt8](repeating: 0, count: 84), .notSQLite),
        ([UInt8](repeating: 0x41, count: 100), .notSQLite),
    ])
    func refusesImpossibleHeaders(bytes: [UInt8], problem: SQLiteFileHeader.Problem) {
        #expect(SQLiteFileHeader.parse(bytes) == .failure(problem))
    }

    /// A migrated database with one sealed TOTP secret under a file key.
    static func liveDatabase(in directory: URL, keyFile: String) async throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.database = directory.appendingPathComponent("live.sqlite").path
        configuration.sealingKeyFile = keyFile
        let (engine, store) = try await openStore(configuration, logger: logger)
        let user = User(
            id: "u1", username: "alice", displayName: "Alice", userHandle: Secrets.random(32), disabled: false,
            createdAt: Date())
        try await store.createUser(user)
        try await store.setPendingTOTP(userID: "u1", secret: SealingKeyTests.totpSecret, at: Date())
        try await engine.shutdown()
        return configuration
    }

    @Test func roundTripKeepsSealedValuesAndRefusalsChangeNothing() async throws {
        let directory = try Self.directory()
        let keyFile = try SealingKeyTests.keyFile([SealingKeyTests.keyA])
        let live = try await Self.liveDatabase(in: directory, keyFile: keyFile)
        let backup = directory.appendingPathComponent("backup.sqlite").path

        let summary = try await DatabaseBackup.backup(
            live, to: backup, producer: "test", now: Date(), logger: Self.logger, schema: ServerSchema.full)
        #expect(summary.schemaVersion == ServerSchema.full.current)
        #expect(summary.sealingKeyIDs == [try SealingKeyTests.id(SealingKeyTests.keyA)])
        let mode = try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        await #expect(throws: BackupError(.outputExists, "")) {
            try await DatabaseBackup.backup(
                live, to: backup, producer: "test", now: Date(), logger: Self.logger, schema: ServerSchema.full)
        }

        // Without the key the sealed secret needs: refused, and no database appears.
        var target = ServerConfiguration()
        target.database = directory.appendingPathComponent("restored.sqlite").path
        await #expect(throws: BackupError(.sealingKeyMissing, "")) {
            try await DatabaseBackup.restore(
                target, from: backup, now: Date(), logger: Self.logger, schema: ServerSchema.full)
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == ["backup.sqlite", "live.sqlite", "live.sqlite-shm", "live.sqlite-wal"].filter(left.contains))
        #expect(!left.contains("restored.sqlite"))

        target.sealingKeyFile = keyFile
        let restored = try await DatabaseBackup.restore(
            target, from: backup, now: Date(), logger: Self.logger, schema: ServerSchema.full)
        #expect(restored.accounts == 1)
        let (engine, store) = try await openStore(target, logger: Self.logger)
        let totp = try await store.totp(userID: "u1")
        try await engine.shutdown()
        #expect(totp?.secret == SealingKeyTests.totpSecret)

        // A second restore into the now non-empty database is refused.
        await #expect(throws: BackupError(.targetNotEmpty, "")) {
            try await DatabaseBackup.restore(
                target, from: backup, now: Date(), logger: Self.logger, schema: ServerSchema.full)
        }
    }
}
