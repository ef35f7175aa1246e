import Foundation
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization
import Testing

@testable import SesameServer
@testable import SesameCore
@testable import SesamePasskeys

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

    /// The service's turns are counted on a clock the test moves: one turn, one quarter of a second. Its next sleep
    /// begins only when a turn's work is done, so the test waits for that instead of for a time.
    @Test func theServiceCheckpointsWhileTheServerRuns() async throws {
        let server = TestServer(.sqlite)
        let (engine, store) = try await openStore(server)
        let path = server.configuration.database
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(engine.sqliteHandle)
        let checkpointer = try SQLiteCheckpointer.open(path: path)
        let ticks = ManualClock()
        let service = SQLiteCheckpointService(
            checkpointer: checkpointer, commits: { handle.commits.load(ordering: .relaxed) }, logger: Self.logger,
            ticks: ticks)
        let group = ServiceGroup(services: [service], logger: Self.logger)
        func turn() async throws {
            let started = ticks.sleepsStarted
            ticks.advance(by: SQLiteCheckpointer.interval)
            #expect(await ManualClock.waitUntil { ticks.sleepsStarted > started }, "the turn never ended")
        }
        func checkpoints() -> Int { checkpointer.checkpoints.load(ordering: .relaxed) }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(await ManualClock.waitUntil { ticks.sleepsStarted == 1 })
            #expect(checkpoints() == 0, "nothing is checkpointed before the first turn")
            // The first turn copies what the migrations wrote; the turns after it, with no commit, do nothing.
            try await turn()
            #expect(checkpoints() == 1)
            for _ in 0..<4 { try await turn() }
            #expect(checkpoints() == 1)
            let commits = handle.commits.load(ordering: .relaxed)
            try await store.createUser(user("while running", server.clock))
            #expect(handle.commits.load(ordering: .relaxed) > commits)
            // The turn after a commit copies it: the row is in the file itself.
            try await turn()
            #expect(checkpoints() == 2)
            #expect(try await usernamesInTheFileAlone(path).contains("while running"))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try await engine.shutdown()
    }

    /// The purge runs once a minute of its clock: a challenge spent and expired stays until the minute passes, and
    /// is gone after it (so the same challenge can be spent again, as on a fresh database).
    @Test func thePurgeRunsOnceAMinuteOfItsClock() async throws {
        let server = TestServer(.sqlite)
        let (engine, store) = try await openStore(server)
        defer { try? FileManager.default.removeItem(atPath: server.configuration.database) }
        let core = ServerCore(
            configuration: server.configuration, store: store, clock: server.clock.serverClock, logger: Self.logger,
            serverSecret: Array(repeating: 7, count: 32), metrics: ServerMetrics(),
            providers: try ProviderNames.load(nil), rateLimits: RateLimitPolicy(), factors: [])
        let ticks = ManualClock()
        let group = ServiceGroup(services: [PurgeService(sesame: core, ticks: ticks)], logger: Self.logger)
        let challenge = SpentChallenge(id: Array(repeating: 9, count: 32), expiresAt: server.clock.now + 300)
        #expect(try await store.spendChallenge(challenge))
        server.clock.advance(300)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(await ManualClock.waitUntil { ticks.sleepsStarted == 1 })
            ticks.advance(by: PurgeService.interval - .seconds(1))
            #expect(try await !store.spendChallenge(challenge), "purged before its minute")
            ticks.advance(by: .seconds(1))
            #expect(await ManualClock.waitUntil { ticks.sleepsStarted == 2 })
            #expect(try await store.spendChallenge(challenge), "not purged after its minute")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try await engine.shutdown()
    }
}
