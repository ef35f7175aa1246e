import Foundation
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization
import Testing

@testable import SesameServer
@testable import SesameCore
@testable import SesameWeb
@testable import SesameMetadata
@testable import SesameSecondFactors
@testable import SesameIdentityProvider
@testable import SesamePasswords
@testable import SesamePasskeys
@testable import SesameAccount
@testable import SesameReauthentication
@testable import SesameKeychainSync
@testable import SesameForwardAuth
@testable import SesameOperations

/// The WAL checkpoint off the event loops (issue 11): the server's own connection checkpoints only as a backstop, and
/// `SQLiteCheckpointService` copies committed pages into the database file from its connection. Proven by reading
/// the database file alone (without its WAL): what is there was checkpointed.
@Suite struct SQLiteCheckpointTests {
    private static let logger: Logger = {
        var logger = Logger(label: "sesame.test.checkpoint")
        logger.logLevel = .critical
        return logger
    }()

    private func user(_ name: String, _ clock: TestClock) -> User {
        User(
            id: UUID().uuidString.lowercased(), username: name, displayName: name, userHandle: Secrets.random(64),
            disabled: false, createdAt: clock.now)
    }

    /// Usernames in a copy of the database file made without its WAL, i.e. what checkpoints have put there.
    private func usernamesInTheFileAlone(_ path: String) async throws -> Set<String> {
        let copy = NSTemporaryDirectory() + "sesame-checkpoint-\(UUID().uuidString).db"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let engine = try await SQLEngine.open(.sqlite(path: copy), logger: Self.logger)
        defer { Task { try? await engine.shutdown() } }
        // Before the first checkpoint even the tables are only in the WAL.
        guard try await engine.sql.raw("SELECT name FROM sqlite_master WHERE name = 'users'").first() != nil else {
            return []
        }
        let rows = try await engine.sql.raw("SELECT username FROM users").all()
        return Set(try rows.map { try $0.decode(column: "username", as: String.self) })
    }

    private func openStore(_ server: TestServer) async throws -> (SQLEngine, SQLStore) {
        return try await SesameServer.openStore(
            server.configuration, environment: server.environment, logger: Self.logger)
    }

    @Test func theStoreConnectionCheckpointsOnlyAsABackstop() async throws {
        let server = TestServer(.sqlite)
        let (engine, _) = try await openStore(server)
        defer { try? FileManager.default.removeItem(atPath: server.configuration.database) }
        let pages = try await engine.sql.raw("PRAGMA wal_autocheckpoint").first()?.decode(
            column: "wal_autocheckpoint", as: Int.self)
        #expect(pages == SQLiteCheckpointer.backstopPages)
        try await engine.shutdown()
    }

    /// The service skips a turn when no write was committed, so a write made by a trigger must count: the passkey
    /// sign-in is an `INSERT` into a view whose INSTEAD OF trigger does the writes, which `sqlite3_changes` does
    /// not count (under sign-in load the service then checkpointed twice in ten seconds).
    @Test func writesMadeByATriggerCountAsCommits() async throws {
        let server = TestServer(.sqlite)
        let (engine, _) = try await openStore(server)
        defer { try? FileManager.default.removeItem(atPath: server.configuration.database) }
        let handle = try #require(engine.sqliteHandle)
        try await engine.sql.raw("CREATE TEMP TABLE written (value INTEGER)").run()
        try await engine.sql.raw("CREATE TEMP VIEW writes (value) AS SELECT NULL").run()
        try await engine.sql.raw(
            "CREATE TEMP TRIGGER write INSTEAD OF INSERT ON writes BEGIN INSERT INTO written VALUES (NEW.value); END"
        ).run()
        let before = handle.commits.load(ordering: .relaxed)
        try await engine.sql.raw("INSERT INTO writes VALUES (1)").run()
        #expect(handle.commits.load(ordering: .relaxed) == before + 1)
        // A read, and a write that changes nothing, are no commit.
        _ = try await engine.sql.raw("SELECT value FROM written").all()
        try await engine.sql.raw("DELETE FROM written WHERE value = 2").run()
        #expect(handle.commits.load(ordering: .relaxed) == before + 1)
        try await engine.shutdown()
    }

    @Test func aPassiveCheckpointCopiesCommittedPagesIntoTheFile() async throws {
        let server = TestServer(.sqlite)
        let (engine, store) = try await openStore(server)
        let path = server.configuration.database
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpointer = try SQLiteCheckpointer.open(path: path)
        defer { checkpointer.close() }
        // Whatever the migrations left in the WAL is copied first, so that what follows is this test's.
        _ = try checkpointer.checkpoint()

        try await store.createUser(user("written", server.clock))
        #expect(try await !usernamesInTheFileAlone(path).contains("written"))

        let result = try checkpointer.checkpoint()
        #expect(result.walPages > 0)
        #expect(result.checkpointedPages == result.walPages)
        #expect(try await usernamesInTheFileAlone(path).contains("written"))
        try await engine.shutdown()
    }

    @Test func theServiceCheckpointsWhileTheServerRuns() async throws {
        let server = TestServer(.sqlite)
        let (engine, store) = try await openStore(server)
        let path = server.configuration.database
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(engine.sqliteHandle)
        let checkpointer = try SQLiteCheckpointer.open(path: path)
        let service = SQLiteCheckpointService(
            checkpointer: checkpointer, commits: { handle.commits.load(ordering: .relaxed) }, logger: Self.logger)
        let group = ServiceGroup(services: [service], logger: Self.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // Its first turn copies what the migrations wrote (waited for: a loaded machine delays it by seconds);
            // with no commit after it, the turns that follow (four a second) do nothing.
            for _ in 0..<300 where checkpointer.checkpoints.load(ordering: .relaxed) == 0 {
                try await Task.sleep(for: .milliseconds(100))
            }
            try await Task.sleep(for: .seconds(1))
            #expect(checkpointer.checkpoints.load(ordering: .relaxed) == 1)
            let commits = handle.commits.load(ordering: .relaxed)
            try await store.createUser(user("while running", server.clock))
            #expect(handle.commits.load(ordering: .relaxed) > commits)
            // The service checkpoints every quarter of a second after a commit: soon the row is in the file itself.
            var copied = false
            for _ in 0..<150 where !copied {
                try await Task.sleep(for: .milliseconds(200))
                copied = try await usernamesInTheFileAlone(path).contains("while running")
            }
            #expect(copied)
            #expect(checkpointer.checkpoints.load(ordering: .relaxed) == 2)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try await engine.shutdown()
    }
}
