import Foundation
import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization
import SystemSQLite

/// Copies the WAL's committed pages back into the SQLite database file from a connection of its own, on NIO's
/// thread pool, every quarter of a second after writes, so that neither the copying nor its fsyncs run on an event
/// loop inside a request.
///
/// Without it SQLite checkpoints inside the commit that takes the WAL past 1000 pages: on a busy server that is a
/// request every fraction of a second holding its event loop for the copy and two fsyncs. A passive checkpoint
/// never waits for or blocks readers and writers: it copies what no open read transaction still needs and leaves
/// the rest for the next one. The store's own connection keeps an automatic checkpoint as a backstop
/// (`SQLiteCheckpointer.backstopPages`), so the WAL stays bounded when this service is not running (admin
/// commands, tests) or falls behind. The service must come round well before the WAL reaches the backstop at the
/// highest write rates measured (some 15,000 pages a second in a sign-in benchmark): a backstop checkpoint inside a
/// request copies and fsyncs up to 10,000 pages, which held event loops for 105 to 119 ms (docs/server.md).
package final class SQLiteCheckpointer: Sendable {
    /// Pages the WAL may reach before the committing connection checkpoints by itself (4 KiB each: about 40 MB).
    package static let backstopPages = 10_000
    /// How often the service checkpoints, when writes were committed since its last turn.
    package static let interval = Duration.milliseconds(250)

    private let connection: Mutex<SQLiteConnectionPointer>
    /// Checkpoints run so far (tests read it).
    package let checkpoints = Atomic<Int>(0)

    private init(db: OpaquePointer) {
        connection = Mutex(SQLiteConnectionPointer(db: db))
    }

    /// Opens a second connection to the database file at `path` (which must exist; the store opened it first).
    package static func open(path: String) throws -> SQLiteCheckpointer {
        let db = try SQLiteHandle.connect(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI)
        // This connection never writes rows; its own automatic checkpoint stays off.
        sqlite3_wal_autocheckpoint(db, 0)
        // A connection learns that the file is in WAL mode when it first reads it; until then a checkpoint does
        // nothing and says so with -1.
        let read = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nil, nil, nil)
        guard read == SQLITE_OK else {
            let error = SQLiteCallError(code: read, db: db)
            sqlite3_close_v2(db)
            throw error
        }
        return SQLiteCheckpointer(db: db)
    }

    /// One passive checkpoint: the WAL's size and how much of it is now in the database file, in pages.
    package func checkpoint() throws -> (walPages: Int, checkpointedPages: Int) {
        try connection.withLock { connection in
            guard let db = connection.db else {
                throw SQLiteCallError(code: SQLITE_MISUSE, message: "the checkpoint connection is closed")
            }
            var log: Int32 = 0
            var done: Int32 = 0
            let code = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
            guard code == SQLITE_OK else { throw SQLiteCallError(code: code, db: db) }
            guard log >= 0 else {
                throw SQLiteCallError(code: SQLITE_MISUSE, message: "the database is not in WAL mode")
            }
            checkpoints.add(1, ordering: .relaxed)
            return (Int(log), Int(done))
        }
    }

    package func close() {
        connection.withLock { connection in
            if let db = connection.db { sqlite3_close_v2(db) }
            connection.db = nil
        }
    }
}

/// A connection handle used only while its owner's lock is held.
package struct SQLiteConnectionPointer: @unchecked Sendable {
    package var db: OpaquePointer?
}

/// Runs `SQLiteCheckpointer` every `interval` for as long as the server runs, off the event loops, skipping the turns
/// after which no write was committed (`commits` counts them; an idle server does no checkpoint work).
package struct SQLiteCheckpointService: Service {
    package let checkpointer: SQLiteCheckpointer
    package let commits: @Sendable () -> Int
    package let logger: Logger
    /// What the turns are counted on: the continuous clock when serving; tests advance a clock of their own.
    package let ticks: any Clock<Duration>

    package init(
        checkpointer: SQLiteCheckpointer, commits: @escaping @Sendable () -> Int, logger: Logger,
        ticks: any Clock<Duration> = ContinuousClock()
    ) {
        self.checkpointer = checkpointer
        self.commits = commits
        self.logger = logger
        self.ticks = ticks
    }

    package func run() async throws {
        defer { checkpointer.close() }
        try? await cancelWhenGracefulShutdown {
            var copied = -1
            while true {
                try await ticks.sleep(for: SQLiteCheckpointer.interval)
                let committed = commits()
                guard committed != copied else { continue }
                do {
                    _ = try await NIOThreadPool.singleton.runIfActive { try checkpointer.checkpoint() }
                    copied = committed
                } catch let error as SQLiteCallError where error.isBusy {
                    // Another process's checkpoint is running; the next turn tries again.
                } catch {
                    logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
