import NIOCore
import NIOPosix
import PostgresKit
import SQLKit

/// How long the database may take before a request stops waiting for it (`databaseTimeout`).
///
/// A PostgreSQL that has stopped answering without closing its sockets (a stalled disk, a partition that drops
/// packets, a failover that hangs, or its processes stopped) would otherwise hold every request until it returns.
/// Each of the three waits gets the deadline:
/// - **acquiring** a pooled connection (the pool's request timeout);
/// - **connecting**: TCP, TLS, start-up and authentication (postgres-nio's connect timeout covers all of them);
/// - **each statement**: when it passes, the statement's connection is closed, so the statement fails at once and
///   the pool drops the connection and opens a new one once the database answers again.
///
/// The request then answers 503 `unavailable` (`ErrorMiddleware`), as it does when PostgreSQL refuses connections.
/// A statement whose deadline passed may still take effect when the database returns (its bytes were sent); it was
/// never acknowledged, and every operation is one transaction, so nothing is half-written. `/health` has half the
/// deadline of its own (`healthLimit`). SQLite is a local file: its waits are its busy timeout's.
public struct DatabaseDeadline: Sendable, Equatable {
    public let limit: TimeAmount

    public init(seconds: Double) {
        limit = .nanoseconds(Int64((seconds * 1_000_000_000).rounded()))
    }

    /// `/health` answers within this much whatever the database does, so a probe that times out itself sees 503.
    public var healthLimit: TimeAmount { .nanoseconds(limit.nanoseconds / 2) }
}

/// How far a wait on the database had come when its deadline passed (`DatabaseError.timeout`).
public enum DatabaseTimeoutStage: String, Sendable {
    case acquire = "acquiring a connection"
    case statement = "a statement"
    case check = "the health check"
}

extension ServerError where Code == DatabaseErrorCode {
    /// A wait on the database passed its deadline (`DatabaseDeadline`): `timeout`, with the stage in the message and
    /// in `extra["stage"]`. Carries no statement text or binds.
    package static func timeout(_ stage: DatabaseTimeoutStage, file: String = #fileID, line: Int = #line)
        -> DatabaseError
    {
        var error = DatabaseError(
            "the database did not answer in time (\(stage.rawValue))", code: .timeout, file: file, line: line)
        error.extra = ["stage": stage.rawValue]
        return error
    }
}

extension DatabaseDeadline {
    /// Runs `body` on `connection`; when the deadline passes first, closes the connection (failing what is in
    /// flight on it) and throws `DatabaseError.timeout` at once, without waiting for `body` (a statement written to a
    /// connection that closed meanwhile may never be answered). A connection already closed (by an earlier
    /// deadline in the same transaction) fails at once the same way.
    package func run<T: Sendable>(on connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T
    {
        guard !connection.isClosed else { throw DatabaseError.timeout(.statement) }
        return try await Self.first(within: limit, stage: .statement, on: connection.eventLoop, body) {
            let closing: EventLoopFuture<Void> = connection.close()
            closing.whenComplete { _ in }
        }
    }

    /// Returns `operation`'s result, or throws `DatabaseError.timeout` when `limit` passes first, after calling
    /// `expired`; the operation then goes on by itself and its result is dropped (`/health` must answer whatever
    /// the pool does; a statement's connection is closed by `expired`).
    package static func first<T: Sendable>(
        within limit: TimeAmount, stage: DatabaseTimeoutStage,
        on eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any(),
        _ operation: @escaping @Sendable () async throws -> T, expired: @escaping @Sendable () -> Void = {}
    ) async throws -> T {
        let promise = eventLoop.makePromise(of: T.self)
        // A promise completed twice keeps the first result: whichever of the two comes first wins.
        promise.completeWithTask(operation)
        let timer = eventLoop.scheduleTask(in: limit) {
            promise.fail(DatabaseError.timeout(stage))
            expired()
        }
        defer { timer.cancel() }
        return try await promise.futureResult.get()
    }
}

/// One PostgreSQL connection whose every statement has the deadline (a transaction's connection).
package struct DeadlineConnectionDatabase: SQLDatabase {
    package let connection: PostgresConnection
    package let deadline: DatabaseDeadline
    package let base: any SQLDatabase

    package init(connection: PostgresConnection, deadline: DatabaseDeadline) {
        self.connection = connection
        self.deadline = deadline
        self.base = connection.sql(queryLogLevel: nil)
    }

    package var logger: Logger { base.logger }
    package var eventLoop: any EventLoop { base.eventLoop }
    package var version: (any SQLDatabaseReportedVersion)? { base.version }
    package var dialect: any SQLDialect { base.dialect }
    package var queryLogLevel: Logger.Level? { nil }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        eventLoop.makeFutureWithTask { try await execute(sql: query, onRow) }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await deadline.run(on: connection) { try await base.execute(sql: query, onRow) }
    }
}

/// The pool as one database: each statement takes a connection (within the deadline), runs with the deadline, and
/// gives the connection back (the pool drops it if the deadline closed it).
package struct DeadlinePoolDatabase: SQLDatabase {
    package let pool: PoolBox
    package let deadline: DatabaseDeadline
    package let logger: Logger
    package let dialect: any SQLDialect = PostgresDialect()

    package var eventLoop: any EventLoop { pool.pool.eventLoopGroup.any() }
    package var queryLogLevel: Logger.Level? { nil }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        eventLoop.makeFutureWithTask { try await execute(sql: query, onRow) }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await pool.withConnection(logger: logger) { connection in
            try await DeadlineConnectionDatabase(connection: connection, deadline: deadline).execute(sql: query, onRow)
        }
    }
}

extension PoolBox {
    /// A pooled connection for `body`, given back afterwards; a pool that cannot give one within its request timeout
    /// throws `DatabaseError.timeout(.acquire)`.
    package func withConnection<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T)
        async throws -> T
    {
        let connection: PostgresConnection
        do {
            connection = try await pool.requestConnection(logger: logger).get()
        } catch ConnectionPoolTimeoutError.connectionRequestTimeout {
            throw DatabaseError.timeout(.acquire)
        }
        defer { pool.releaseConnection(connection, logger: logger) }
        return try await body(connection)
    }
}
