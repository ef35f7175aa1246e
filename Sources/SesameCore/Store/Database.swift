import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import ServiceLifecycle
import SystemSQLite

/// The two SQL engines behind the one store. Everything above this file speaks sql-kit; the only
/// engine-specific parts are connection setup, the migration lock and a few column type names.
public enum SQLEngineKind: String, Sendable {
    case sqlite
    case postgres
}

/// The database could not be opened or answered what no correct database answers (a row missing after its insert).
/// The server's error shape (`ServerError`); the message names the setting or statement, never a bind or a
/// password (URLs are given redacted).
public typealias DatabaseError = ServerError<DatabaseErrorCode>

/// The codes of `DatabaseError`.
public struct DatabaseErrorCode: ServerErrorCode {
    public let name: String
    private init(_ name: String) { self.name = name }
    public var description: String { name }

    /// The database the settings name cannot be used (a wrong URL, no configuration for the engine).
    public static let unusable = DatabaseErrorCode("unusable")
    /// A statement answered what it cannot (nothing where a row must be).
    public static let unexpectedAnswer = DatabaseErrorCode("unexpectedAnswer")
    /// The SQLite database's files may be read or written by group or others (`SQLiteFileMode`): the server refuses
    /// to open it. The message names the files and the command that fixes them; `extra["exposed"]` lists the files.
    public static let exposedFiles = DatabaseErrorCode("exposedFiles")
    /// A wait on the database passed its deadline (`databaseTimeout`): a connection, a statement or the health
    /// check (`DatabaseError.timeout`).
    public static let timeout = DatabaseErrorCode("timeout")
}

extension ServerError where Code == DatabaseErrorCode {
    /// A database error that is a broken promise of the database (`unexpectedAnswer`) unless told otherwise.
    package init(
        _ message: String, code: DatabaseErrorCode = .unexpectedAnswer, file: String = #fileID, line: Int = #line
    ) {
        self.init(code: code, message: message, file: file, line: line)
    }
}

/// An open database: a single serialised SQLite connection (WAL, busy timeout; called directly, see `SQLiteHandle`)
/// or a PostgreSQL connection pool.
/// Queries never log their binds (`queryLogLevel: nil`): binds carry hashes, codes and keys.
///
/// SQLite settings: `journal_mode = WAL` (readers and the writer do not block each other), `synchronous = NORMAL`
/// (in WAL mode a commit is durable across a crash of the server process; a power loss or kernel crash can lose
/// the last transactions committed before it, never corrupt the file), `busy_timeout = 5000` (another process
/// holding the write lock is waited for up to 5 s) and `foreign_keys = ON`.
public final class SQLEngine: Sendable {
    public let kind: SQLEngineKind
    /// Statements outside transactions. On SQLite each one passes `gate` (see `SQLiteGate`).
    public let sql: any SQLDatabase
    /// SQLite: the connection itself, used only by a transaction holding `gate` exclusively.
    private let sqliteConnection: (any SQLDatabase)?
    private let gate: SQLiteGate?
    package let location: DatabaseLocation
    private let close: @Sendable () async throws -> Void
    /// PostgreSQL: what the pool connects with (its connect timeout is the deadline's).
    package let postgresConfiguration: SQLPostgresConfiguration?
    package let postgresPool: PoolBox?
    /// PostgreSQL: the pool's connections at most, over all event loops.
    package let postgresPoolSize: Int
    package let logger: Logger
    package let observer: StatementObserver?
    /// PostgreSQL: how long a connection, a new connection and each statement may take (`DatabaseDeadline`).
    package let deadline: DatabaseDeadline
    /// SQLite: whether the last write failed for lack of disk space (nil on PostgreSQL, which reports a full disk
    /// as an error of its own).
    package let writeSpace: WriteSpace?
    /// SQLite's serving connection (nil on PostgreSQL), for the checkpoint service's count of commits.
    package let sqliteHandle: SQLiteHandle?

    private init(
        kind: SQLEngineKind, sql: any SQLDatabase, location: DatabaseLocation,
        postgresConfiguration: SQLPostgresConfiguration?,
        postgresPool: PoolBox? = nil, postgresPoolSize: Int = 0, sqliteHandle: SQLiteHandle? = nil, logger: Logger,
        observer: StatementObserver?, deadline: DatabaseDeadline,
        close: @escaping @Sendable () async throws -> Void
    ) {
        self.deadline = deadline
        self.writeSpace = sqliteHandle?.writeSpace
        self.sqliteHandle = sqliteHandle
        self.postgresPool = postgresPool
        self.postgresPoolSize = postgresPoolSize
        self.kind = kind
        self.observer = observer
        let sql = observer.map { ObservedSQLDatabase(base: sql, observer: $0) } ?? sql
        if kind == .sqlite {
            let gate = SQLiteGate()
            self.gate = gate
            self.sqliteConnection = sql
            self.sql = GatedSQLDatabase(base: sql, gate: gate)
        } else {
            self.gate = nil
            self.sqliteConnection = nil
            self.sql = sql
        }
        self.location = location
        self.postgresConfiguration = postgresConfiguration
        self.logger = logger
        self.close = close
    }

    /// Opens the database. SQLite files are created if missing and switched to WAL.
    /// - Parameter searchPath: PostgreSQL schema to use (tests give each run its own).
    public static func open(_ location: DatabaseLocation, searchPath: String? = nil, logger: Logger) async throws
        -> SQLEngine
    {
        try await open(location, searchPath: searchPath, logger: logger, observer: nil)
    }

    /// As above; `observer` sees every statement (tests reading query plans); `postgresConnectionsPerLoop` sizes
    /// PostgreSQL's pool (connections per event loop, so per core; `ServerConfiguration.postgresConnections`);
    /// `deadline` bounds PostgreSQL's waits (`ServerConfiguration.databaseTimeout`).
    package static func open(
        _ location: DatabaseLocation, searchPath: String? = nil, logger: Logger, observer: StatementObserver?,
        postgresConnectionsPerLoop: Int = ServerConfiguration.defaultPostgresConnections,
        deadline: DatabaseDeadline = DatabaseDeadline(seconds: ServerConfiguration.defaultDatabaseTimeout)
    ) async throws -> SQLEngine {
        switch location {
        case .sqlite(let path):
            let handle = try SQLiteHandle.open(path: path)
            let sql = SQLiteHandleDatabase(
                handle: handle, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any())
            let close: @Sendable () async throws -> Void = { handle.close() }
            do {
                // The busy timeout first: switching to WAL takes a lock other starting processes may hold, and
                // SQLite answers that lock request with SQLITE_BUSY at once, so it is retried.
                try await sql.raw("PRAGMA busy_timeout = 5000").run()
                try await retryingWhileBusy { try await sql.raw("PRAGMA journal_mode = WAL").run() }
                try await sql.raw("PRAGMA foreign_keys = ON").run()
                try await sql.raw("PRAGMA synchronous = NORMAL").run()
                // The server checkpoints off the event loops (`SQLiteCheckpointService`); this is the backstop.
                try await sql.raw("PRAGMA wal_autocheckpoint = \(unsafeRaw: String(SQLiteCheckpointer.backstopPages))")
                    .run()
            } catch {
                try? await close()
                throw error
            }
            return SQLEngine(
                kind: .sqlite, sql: sql, location: location, postgresConfiguration: nil,
                sqliteHandle: handle, logger: logger, observer: observer, deadline: deadline, close: close)
        case .postgres(let url):
            var configuration: SQLPostgresConfiguration
            do { configuration = try SQLPostgresConfiguration(url: url) } catch {
                // The URL error would carry the password; say only what is wrong.
                throw DatabaseError(
                    "database URL is not a valid postgres:// URL (\(location.redacted))", code: .unusable)
            }
            if let searchPath { configuration.searchPath = [searchPath] }
            // Connecting (TCP, TLS, start-up, authentication) within the deadline.
            configuration.coreConfiguration.options.connectTimeout = deadline.limit
            let group = MultiThreadedEventLoopGroup.singleton
            let perEventLoop = max(1, postgresConnectionsPerLoop)
            let pool = EventLoopGroupConnectionPool(
                source: PostgresConnectionSource(sqlConfiguration: configuration),
                maxConnectionsPerEventLoop: perEventLoop,
                requestTimeout: deadline.limit,
                logger: logger,
                on: group
            )
            let sql = DeadlinePoolDatabase(pool: PoolBox(pool: pool), deadline: deadline, logger: logger)
            var loops = 0
            for _ in group.makeIterator() { loops += 1 }
            return SQLEngine(
                kind: .postgres, sql: sql, location: location, postgresConfiguration: configuration,
                postgresPool: PoolBox(pool: pool), postgresPoolSize: perEventLoop * loops, logger: logger,
                observer: observer, deadline: deadline,
                close: { [box = PoolBox(pool: pool)] in try await box.pool.shutdownAsync() }
            )
        }
    }

    /// Migration versions recorded in this database.
    public func appliedMigrations() async throws -> [Int] {
        try await Migrations.appliedVersions(on: self)
    }

    public func shutdown() async throws {
        try await close()
    }

    /// Runs `body` while holding the migration lock, on a database handle that is one connection.
    /// PostgreSQL: a session-level advisory lock on a dedicated connection, so several nodes starting at once
    /// migrate one after the other. SQLite: the one connection, inside `BEGIN IMMEDIATE` taken by the migrator.
    package func withMigrationLock<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    {
        switch kind {
        case .sqlite:
            return try await body(sql)
        case .postgres:
            guard let configuration = postgresConfiguration else {
                throw DatabaseError("no PostgreSQL configuration", code: .unusable)
            }
            let connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(),
                configuration: configuration.coreConfiguration,
                id: 1,
                logger: logger
            )
            let db = connection.sql(queryLogLevel: nil)
            do {
                try await db.raw("SELECT pg_advisory_lock(\(literal: Self.migrationLockKey))").run()
                // Inside the lock: CREATE SCHEMA IF NOT EXISTS is not safe against itself running concurrently.
                if let path = configuration.searchPath, let schema = path.first {
                    try await db.raw("CREATE SCHEMA IF NOT EXISTS \(ident: schema)").run()
                    try await db.raw("SET search_path TO \(ident: schema)").run()
                }
                let result: T
                do {
                    result = try await body(db)
                } catch {
                    _ = try? await db.raw("SELECT pg_advisory_unlock(\(literal: Self.migrationLockKey))").run()
                    throw error
                }
                try await db.raw("SELECT pg_advisory_unlock(\(literal: Self.migrationLockKey))").run()
                try await connection.close()
                return result
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// Runs `body` in a transaction: all its statements take effect or none. PostgreSQL: `BEGIN` … `COMMIT` on one
    /// pooled connection. SQLite: `BEGIN IMMEDIATE` … `COMMIT` on the one connection while holding its gate alone,
    /// so no other request's statement runs inside the transaction. `body` must use only the handle it is given
    /// (on SQLite, a statement through `sql` inside `body` would wait for the gate `body` holds).
    package func withTransaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T)
        async throws -> T
    {
        if kind == .sqlite, let gate, let connection = sqliteConnection {
            await gate.enterTransaction()
            defer { gate.leaveTransaction() }
            return try await Self.inTransaction(connection, begin: "BEGIN IMMEDIATE", body)
        }
        guard kind == .postgres, let box = postgresPool else { return try await body(sql) }
        return try await box.withConnection(logger: logger) { connection in
            // Each statement of the transaction has the deadline; one that passes it closes the connection, which
            // ends the transaction on the server without a commit.
            let db = DeadlineConnectionDatabase(connection: connection, deadline: deadline)
            let observed = observer.map { ObservedSQLDatabase(base: db, observer: $0) as any SQLDatabase } ?? db
            return try await Self.inTransaction(observed, begin: "BEGIN", body)
        }
    }

    private static func inTransaction<T: Sendable>(
        _ db: any SQLDatabase, begin: String, _ body: @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await db.raw(SQLQueryString(begin)).run()
        do {
            let result = try await body(db)
            try await db.raw("COMMIT").run()
            return result
        } catch {
            _ = try? await db.raw("ROLLBACK").run()
            throw error
        }
    }

    /// Arbitrary constant naming Sesame's migration lock among other users of the same PostgreSQL database.
    package static let migrationLockKey = 0x5E5A_3E00_0000_0001

    /// Column type for byte strings.
    package var bytes: String { kind == .postgres ? "BYTEA" : "BLOB" }
}

/// Runs `body` again while SQLite reports the database busy (up to about ten seconds).
package func retryingWhileBusy<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    var attempt = 0
    while true {
        do {
            return try await body()
        } catch let error as SQLiteCallError where error.primary == SQLITE_BUSY && attempt < 100 {
            attempt += 1
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// AsyncKit's pool synchronises its own state (a lock per event loop pool) but is not annotated `Sendable`;
/// this box states that it is shared across tasks.
package struct PoolBox: @unchecked Sendable {
    package let pool: EventLoopGroupConnectionPool<PostgresConnectionSource>
}

/// Closes the database after the HTTP server has stopped (services shut down in reverse order).
package struct DatabaseService: Service {
    package let engine: SQLEngine

    package init(engine: SQLEngine) {
        self.engine = engine
    }

    package func run() async throws {
        try? await gracefulShutdown()
        try await engine.shutdown()
    }
}
