import Foundation
import Logging
import SQLKit
import Testing

@testable import SesameServer
@testable import SesameCore

/// A full disk under SQLite (issue 13, `scripts/faults` "disk full"): a write fails with an error the server answers
/// as 503 `storage_full` (not 500), reads go on, the store says it is full until a write commits again, and nothing
/// half-written stays. `PRAGMA max_page_count` makes SQLite report `SQLITE_FULL` exactly as a full file system does.
@Suite struct StorageFullTests {
    private func user(_ name: String, _ clock: TestClock) -> User {
        User(
            id: UUID().uuidString.lowercased(), username: name, displayName: String(repeating: "x", count: 2000),
            userHandle: Secrets.random(64), disabled: false, createdAt: clock.now)
    }

    @Test func aFullDiskRefusesWritesAsStorageFullAndRecoversWhenSpaceReturns() async throws {
        let server = TestServer(.sqlite)
        var logger = Logger(label: "sesame.test.store")
        logger.logLevel = .critical
        let (engine, store) = try await openStore(server.configuration, environment: server.environment, logger: logger)
        defer { try? FileManager.default.removeItem(atPath: server.configuration.database) }
        do {
            let kept = user("kept", server.clock)
            try await store.createUser(kept)
            #expect(!store.storageFull)
            let pages = try #require(try await engine.sql.raw("PRAGMA page_count").first(decoding: [String: Int].self))
            try await engine.sql.raw("PRAGMA max_page_count = \(unsafeRaw: String(pages.values.first ?? 0))").run()

            // Writes until the file can grow no more: the failure is the one the server maps to storage_full.
            var failure: (any Error)?
            for i in 0..<500 {
                do { try await store.createUser(user("filler\(i)", server.clock)) } catch {
                    failure = error
                    break
                }
            }
            let error = try #require(failure)
            #expect(ErrorMiddleware.isStorageFull(error))
            #expect(!ErrorMiddleware.isUnreachableDatabase(error))
            #expect(APIError.storageFull.status == .serviceUnavailable)
            #expect(store.storageFull)

            // Reads go on; the refused account was not half-written.
            #expect(try await store.user(id: kept.id)?.username == "kept")
            try await store.ping()
            let late = user("late", server.clock)
            await #expect(throws: (any Error).self) { try await store.createUser(late) }
            #expect(try await store.user(id: late.id) == nil)
            #expect(store.storageFull)

            // Space returns: the next write commits and the store is no longer full, with no reopening.
            try await engine.sql.raw("PRAGMA max_page_count = 1073741823").run()
            try await store.createUser(late)
            #expect(!store.storageFull)
            #expect(try await store.user(id: late.id)?.username == "late")
            let check = try await engine.sql.raw("PRAGMA integrity_check").first(decoding: [String: String].self)
            #expect(check?.values.first == "ok")
            try await engine.shutdown()
        } catch {
            try? await engine.shutdown()
            throw error
        }
    }

    /// A transaction that wrote and rolled back (as a failed one does), or one SQLite rolled back itself after a
    /// refused write, does not count as space returning.
    @Test func aRollbackDoesNotClearTheFullMark() async throws {
        let server = TestServer(.sqlite)
        var logger = Logger(label: "sesame.test.store")
        logger.logLevel = .critical
        let (engine, store) = try await openStore(server.configuration, environment: server.environment, logger: logger)
        defer { try? FileManager.default.removeItem(atPath: server.configuration.database) }
        do {
            try await engine.sql.raw("CREATE TABLE filler (v TEXT NOT NULL)").run()
            let pages = try #require(try await engine.sql.raw("PRAGMA page_count").first(decoding: [String: Int].self))
            try await engine.sql.raw("PRAGMA max_page_count = \(unsafeRaw: String(pages.values.first ?? 0))").run()
            for i in 0..<500 where !store.storageFull {
                try? await store.createUser(user("filler\(i)", server.clock))
            }
            #expect(store.storageFull)
            // A write that changes nothing (the purge with nothing expired) does not show that space returned.
            try await store.purgeExpired(now: server.clock.now, rateLimitWindow: 900)
            #expect(store.storageFull)
            struct Abandoned: Error {}
            await #expect(throws: Abandoned.self) {
                try await engine.withTransaction { db in
                    try await db.raw("DELETE FROM users WHERE username = 'filler0'").run()
                    throw Abandoned()
                }
            }
            #expect(store.storageFull)

            // A transaction whose write is refused for space (SQLite may roll it back by itself), then a read:
            // nothing committed, so the store is still full.
            await #expect(throws: (any Error).self) {
                try await engine.withTransaction { db in
                    try await db.raw("DELETE FROM users WHERE username = 'nobody'").run()
                    for i in 0..<500 {
                        try await db.raw(
                            "INSERT INTO filler (v) VALUES (\(bind: "\(i)" + String(repeating: "y", count: 2000)))"
                        )
                        .run()
                    }
                }
            }
            try await store.ping()
            #expect(store.storageFull)
            try await engine.shutdown()
        } catch {
            try? await engine.shutdown()
            throw error
        }
    }
}
