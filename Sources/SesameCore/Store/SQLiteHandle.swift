import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Synchronization
import SystemSQLite

/// One SQLite connection called through the C API on the caller's thread, with its prepared statements cached.
///
/// Why not SQLiteNIO: it hands every statement to a thread pool and back (two thread switches) and prepares it again
/// each time; for the store's short statements on a local file that was most of a sign-in's cost (docs/server.md,
/// "Benchmark"). Here a statement runs under a lock on whichever thread asks: binding, stepping and reading the rows
/// take microseconds, and a commit in WAL mode with `synchronous = NORMAL` is a write to the WAL without an fsync.
/// What can block the caller longer: another process holding the write lock (up to the busy timeout) and, only
/// when `SQLiteCheckpointService` is not running or falls behind, the automatic checkpoint at
/// `SQLiteCheckpointer.backstopPages` WAL pages (a copy and an fsync).
///
/// The library is Debian's SQLite (`libsqlite3`, module `SystemSQLite`, a system library Package.swift declares),
/// opened and called by Sesame alone; every connection to the database file in this process goes through it (see
/// `configure` for why and for the settings that keep the behaviour the store had on SQLiteNIO's built-in copy).
///
/// Statements are cached by their SQL text (the store's statements carry their values as binds, so the set of texts
/// is small and fixed); the cache is bounded, and a statement SQLite reports stale after a schema change is prepared
/// again by SQLite itself (`sqlite3_prepare_v3`). Values are encoded and rows decoded by SQLiteKit's
/// `SQLiteDataEncoder` and `SQLiteDataDecoder`, so the store reads and writes the same column values as before.
package final class SQLiteHandle: Sendable {
    private struct Prepared: @unchecked Sendable {
        let statement: OpaquePointer
        let columns: SQLiteRowColumns
    }

    /// The connection handle and statement pointers are used only while `state`'s lock is held.
    private struct State: @unchecked Sendable {
        var db: OpaquePointer?
        var cache: [String: Prepared] = [:]
        /// A statement that changes the database has run since the last commit (see `writeSpace`).
        var uncommitted = false
    }

    /// The connection and its statements; every call into SQLite holds it. A plain pthread mutex: the event loops
    /// contend for it on every statement, and `Synchronization.Mutex` is a priority-inheritance futex on Linux, whose
    /// contended path through the kernel's rt_mutex cost some 4 % of a sign-in's CPU in a profile (docs/server.md).
    private let state: NIOLockedValueBox<State>
    /// Statements beyond this many distinct texts are prepared, run and finalised without being cached.
    package static let cacheLimit = 512
    /// Set when a statement fails with `SQLITE_FULL`, cleared when a write commits (`/health` reads it).
    package let writeSpace = WriteSpace()
    /// Writes committed through this connection so far; `SQLiteCheckpointService` skips its turn when none came.
    package let commits = Atomic<Int>(0)

    private init(db: OpaquePointer) {
        state = NIOLockedValueBox(State(db: db))
    }

    /// Opens (creating if missing, mode 0600: `SQLiteFileMode`) the database file at `path`.
    package static func open(path: String) throws -> SQLiteHandle {
        if !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") { SQLiteFileMode.createPrivately(path) }
        let db = try connect(
            path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI)
        return SQLiteHandle(db: db)
    }

    /// Opens a connection with `flags` and gives it `configure`'s settings.
    package static func connect(_ path: String, flags: Int32) throws -> OpaquePointer {
        _ = memoryStatisticsOff
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let error = SQLiteCallError(code: code, db: db)
            sqlite3_close_v2(db)
            throw error
        }
        do { try configure(db) } catch {
            sqlite3_close_v2(db)
            throw error
        }
        return db
    }

    /// Settings every connection Sesame opens gets, the checkpointer's too.
    ///
    /// One library for every connection to a file: SQLite's POSIX locks are per process, and a second copy of SQLite
    /// in the same process (SQLiteNIO builds one in, still linked for SQLiteKit's types) closing its descriptor on
    /// the file would drop this copy's locks ("How To Corrupt An SQLite Database File", sqlite.org, 2.2.1). Backups
    /// and restores therefore open their files through `SQLiteHandle` as well.
    ///
    /// Debian's build differs from SQLiteNIO's in defaults the store relies on; set here as they were:
    /// recursive triggers off (Debian: on), double-quoted string literals refused (Debian: accepted), memory
    /// statistics off (Debian: on; a global mutex around every allocation). Secure delete is on in both builds.
    private static func configure(_ db: OpaquePointer) throws {
        sqlite3_extended_result_codes(db, 1)
        var code = sesame_sqlite3_refuse_quoted_literals(db)
        if code == SQLITE_OK { code = sqlite3_exec(db, "PRAGMA recursive_triggers = OFF", nil, nil, nil) }
        guard code == SQLITE_OK else { throw SQLiteCallError(code: code, db: db) }
    }

    /// Before SQLite initialises, that is before the process's first open (later it would change nothing).
    private static let memoryStatisticsOff: Void = { _ = sesame_sqlite3_disable_memstatus() }()

    /// Finalises every cached statement and closes the connection; later calls fail with `SQLITE_MISUSE`.
    package func close() {
        state.withLockedValue { state in
            for prepared in state.cache.values { sqlite3_finalize(prepared.statement) }
            state.cache = [:]
            if let db = state.db { sqlite3_close_v2(db) }
            state.db = nil
        }
    }

    /// Runs one statement with its binds and returns its rows.
    package func run(_ sql: String, _ binds: [SQLiteData]) throws -> (columns: SQLiteRowColumns, rows: [[SQLiteData]]) {
        try state.withLockedValue { state in
            guard let db = state.db else {
                throw SQLiteCallError(code: SQLITE_MISUSE, message: "the database is closed")
            }
            let prepared: Prepared
            var cached = true
            if let hit = state.cache[sql] {
                prepared = hit
            } else {
                prepared = try Self.prepare(sql, on: db)
                if state.cache.count < Self.cacheLimit {
                    state.cache[sql] = prepared
                } else {
                    cached = false
                }
            }
            let statement = prepared.statement
            defer {
                if cached {
                    // No `sqlite3_clear_bindings`: every parameter is bound again on the next use (`bind` checks the
                    // count), and clearing expires any statement whose plan looked at a bound value, so SQLite would
                    // prepare it again on every step (the passkey lookup by credential ID was, once per sign-in).
                    sqlite3_reset(statement)
                } else {
                    sqlite3_finalize(statement)
                }
            }
            try Self.bind(binds, to: statement, on: db)
            var rows: [[SQLiteData]] = []
            let width = Int32(prepared.columns.names.count)
            let changesBefore = sqlite3_total_changes64(db)
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    let error = SQLiteCallError(code: code, db: db)
                    if error.isStorageFull { writeSpace.noteFull() }
                    // SQLite may roll a transaction back by itself after an error (SQLITE_FULL among them): its
                    // changes never commit.
                    if sqlite3_get_autocommit(db) != 0 { state.uncommitted = false }
                    throw error
                }
                var row: [SQLiteData] = []
                row.reserveCapacity(Int(width))
                for column in 0..<width { row.append(Self.value(statement, column)) }
                rows.append(row)
            }
            if Self.noteCommit(
                sql, changed: sqlite3_total_changes64(db) != changesBefore, db: db,
                uncommitted: &state.uncommitted)
            {
                writeSpace.noteCommitted()
                commits.add(1, ordering: .relaxed)
            }
            return (prepared.columns, rows)
        }
    }

    /// Whether this statement committed a write (an autocommit statement that changed rows, or the `COMMIT` after
    /// such changes): that shows there is space again, and gives the checkpointer something to copy. `COMMIT` and
    /// `ROLLBACK` count as read-only to SQLite, so the changes made inside a transaction are remembered until
    /// autocommit returns; a rollback (the store's `ROLLBACK`) forgets them.
    ///
    /// `changed`: the statement changed rows, its triggers' included (the passkey sign-in is an `INSERT` into a view
    /// whose trigger does the writes, which `sqlite3_changes` does not count). A write that changed no row (a purge
    /// with nothing to purge) proves nothing about space.
    private static func noteCommit(_ sql: String, changed: Bool, db: OpaquePointer, uncommitted: inout Bool) -> Bool {
        if changed { uncommitted = true }
        guard uncommitted, sqlite3_get_autocommit(db) != 0 else { return false }
        uncommitted = false
        return !sql.utf8.starts(with: "ROLLBACK".utf8)
    }

    private static func prepare(_ sql: String, on db: OpaquePointer) throws -> Prepared {
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let code = sql.withCString { text in
            let code = sqlite3_prepare_v3(db, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            // One statement per call: text after the first statement would otherwise be ignored without a word.
            if code == SQLITE_OK, let tail, !String(cString: tail).allSatisfy(\.isWhitespace) {
                return SQLITE_MISUSE
            }
            return code
        }
        guard code == SQLITE_OK, let statement else {
            let error =
                code == SQLITE_MISUSE && statement != nil
                ? SQLiteCallError(code: code, message: "more than one statement in one call")
                : SQLiteCallError(code: code, db: db)
            sqlite3_finalize(statement)
            throw error
        }
        let count = sqlite3_column_count(statement)
        var names: [String] = []
        names.reserveCapacity(Int(count))
        for column in 0..<count {
            names.append(sqlite3_column_name(statement, column).map { String(cString: $0) } ?? "")
        }
        return Prepared(statement: statement, columns: SQLiteRowColumns(names: names))
    }

    private static func bind(_ binds: [SQLiteData], to statement: OpaquePointer, on db: OpaquePointer) throws {
        guard binds.count == Int(sqlite3_bind_parameter_count(statement)) else {
            throw SQLiteCallError(
                code: SQLITE_RANGE,
                message: "\(binds.count) values for \(sqlite3_bind_parameter_count(statement)) parameters")
        }
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let number):
                code = sqlite3_bind_int64(statement, index, Int64(number))
            case .float(let number):
                code = sqlite3_bind_double(statement, index, number)
            case .text(let text):
                code = sqlite3_bind_text64(
                    statement, index, text, UInt64(text.utf8.count), sqliteTransient, UInt8(SQLITE_UTF8))
            case .blob(let buffer):
                code = buffer.withUnsafeReadableBytes { bytes in
                    // A zero-length blob is bound as such, not as NULL (a nil pointer would mean NULL).
                    sqlite3_bind_blob64(
                        statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(bytes.count),
                        sqliteTransient)
                }
            case .null:
                code = sqlite3_bind_null(statement, index)
            }
            guard code == SQLITE_OK else { throw SQLiteCallError(code: code, db: db) }
        }
    }

    private static func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteData {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(SQLiteInt64(sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT:
            return .float(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let text = sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            if count > 0, let bytes = sqlite3_column_blob(statement, column) {
                buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
            }
            return .blob(buffer)
        default:
            return .null
        }
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies a bound value before the call returns (the macro is not imported into Swift).
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The column names of one prepared statement, shared by all its rows.
package final class SQLiteRowColumns: Sendable {
    package let names: [String]
    package let index: [String: Int]

    package init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (offset, name) in names.enumerated() where index[name] == nil { index[name] = offset }
        self.index = index
    }
}

/// One result row, decoded on demand by SQLiteKit's decoder.
package struct SQLiteHandleRow: SQLRow {
    package let columns: SQLiteRowColumns
    package let values: [SQLiteData]
    package let decoder: SQLiteDataDecoder

    package var allColumns: [String] { columns.names }

    package func contains(column: String) -> Bool { columns.index[column] != nil }

    package func decodeNil(column: String) throws -> Bool {
        guard let offset = columns.index[column] else { return true }
        return values[offset] == .null
    }

    package func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let offset = columns.index[column] else { throw DatabaseError("the row has no column \(column)") }
        return try decoder.decode(D.self, from: values[offset])
    }
}

/// The store's view of an `SQLiteHandle`: sql-kit's interface, SQLite's dialect.
package struct SQLiteHandleDatabase: SQLDatabase {
    package let handle: SQLiteHandle
    package let logger: Logger
    package let eventLoop: any EventLoop
    package let encoder = SQLiteDataEncoder()
    package let decoder = SQLiteDataDecoder()

    package init(handle: SQLiteHandle, logger: Logger, eventLoop: any EventLoop) {
        self.handle = handle
        self.logger = logger
        self.eventLoop = eventLoop
    }

    package var version: (any SQLDatabaseReportedVersion)? { nil }
    package var dialect: any SQLDialect { SQLiteDialect() }
    /// Statements are never logged: binds carry hashes, codes and keys.
    package var queryLogLevel: Logger.Level? { nil }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<
            Void
        >
    {
        eventLoop.makeCompletedFuture { try run(query, onRow) }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try run(query, onRow)
    }

    private func run(_ query: any SQLExpression, _ onRow: (any SQLRow) -> Void) throws {
        let (sql, rawBinds) = serialize(query)
        let binds = try rawBinds.map { try encoder.encode($0) }
        let result = try handle.run(sql, binds)
        for values in result.rows {
            onRow(SQLiteHandleRow(columns: result.columns, values: values, decoder: decoder))
        }
    }
}

/// The live SQLite database and its `-wal` and `-shm` files hold the server secret (and, without a sealing key file,
/// what seals TOTP secrets and signing keys), so they are the server user's alone, like backups and the sealing key
/// file: a new database is created with mode 0600 whatever the umask (SQLite gives its `-wal` and `-shm` files the
/// database file's mode), and an existing one that group or others may read or write is refused before it is opened.
package enum SQLiteFileMode {
    /// The files of the database at `path`: the database, its write-ahead log and its shared-memory index.
    package static func files(of path: String) -> [String] { [path, path + "-wal", path + "-shm"] }

    /// Creates the database file at `path` empty with mode 0600 when it does not exist yet (SQLite then writes its
    /// header into it), so there is no moment at which it exists with the umask's mode.
    /// When it cannot be created (an existing file, a missing directory), SQLite's own open says why.
    package static func createPrivately(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        // The umask can only have removed bits; say exactly 0600.
        fchmod(fd, 0o600)
        close(fd)
    }

    /// Refuses files of the database at `path` that group or others may access, naming the fix.
    package static func checkPrivate(_ path: String) throws(DatabaseError) {
        var exposed: [String] = []
        for file in files(of: path) {
            var status = stat()
            guard stat(file, &status) == 0 else { continue }
            if status.st_mode & 0o077 != 0 { exposed.append(file) }
        }
        guard exposed.isEmpty else { throw .exposedFiles(database: path, exposed: exposed) }
    }
}

extension ServerError where Code == DatabaseErrorCode {
    /// `exposedFiles` for `database`, whose files `exposed` others may read or write.
    package static func exposedFiles(database: String, exposed: [String], file: String = #fileID, line: Int = #line)
        -> DatabaseError
    {
        let quoted = exposed.map { "'\($0)'" }.joined(separator: " ")
        var error = DatabaseError(
            "database \(database): readable or writable by group or others (\(exposed.joined(separator: ", "))),"
                + " and it holds the server secret; make it the server user's only: chmod 600 \(quoted)",
            code: .exposedFiles, file: file, line: line)
        error.extra = ["exposed": exposed.joined(separator: "\n")]
        return error
    }
}
