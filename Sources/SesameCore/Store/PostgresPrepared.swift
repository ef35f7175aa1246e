import Foundation
import NIOCore
import PostgresKit
import SQLKit

/// A statement of the sign-in path that PostgreSQL parses and plans once per pooled connection instead of on every
/// use. Its SQL text lives in the area file beside the row type it returns; SQLite runs the same queries through
/// its own statement cache (`SQLiteHandle`), so these are PostgreSQL's only.
///
/// Parameters are `$1`, `$2`, … with their types in `parameterTypes`, given to PostgreSQL when it prepares the
/// statement (it cannot always infer them, e.g. a parameter in the select list of an `INSERT … SELECT`).
package protocol PostgresStatementText: SendableMetatype {
    /// The statement's name on each connection; unique among Sesame's, shorter than PostgreSQL's 63-byte limit.
    static var name: String { get }
    static var sql: String { get }
    static var parameterTypes: [PostgresDataType] { get }
}

/// A value bound to one parameter of a prepared statement.
package enum PreparedBind: Sendable {
    case bytes(Data?)
    case integer(Int64?)
    case text(String?)

    package static func bytes(_ bytes: [UInt8]) -> Self { .bytes(Data(bytes)) }

    package var type: PostgresDataType {
        switch self {
        case .bytes: .bytea
        case .integer: .int8
        case .text: .text
        }
    }

    /// The value as sql-kit binds it, for a `StatementObserver`.
    package var encodable: any Encodable & Sendable {
        switch self {
        case .bytes(let value): value
        case .integer(let value): value
        case .text(let value): value
        }
    }

    package func append(to bindings: inout PostgresBindings) throws {
        switch self {
        case .bytes(let value): try bindings.append(value)
        case .integer(let value): bindings.append(value)
        case .text(let value): bindings.append(value)
        }
    }
}

/// postgres-nio's prepared statement for a `PostgresStatementText`: postgres-nio prepares it on a connection the first
/// time it runs there and afterwards sends only its name and binds.
package struct PreparedStatement<Text: PostgresStatementText>: PostgresPreparedStatement {
    package typealias Row = PostgresRow
    package static var name: String { Text.name }
    package static var sql: String { Text.sql }
    package static var bindingDataTypes: [PostgresDataType] { Text.parameterTypes }
    package let binds: [PreparedBind]

    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds { try bind.append(to: &bindings) }
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

extension SQLEngine {
    /// Runs a prepared statement on a pooled connection and returns its rows, for sql-kit's row decoding.
    ///
    /// A prepared statement's result columns are fixed when it is prepared. When a migration changes the type of
    /// a column the statement returns (another node migrating while this one serves, docs/deploy.md "Upgrades"),
    /// PostgreSQL refuses to run it ("cached plan must not change result type", SQLSTATE 0A000) and changes nothing.
    /// postgres-nio keeps a statement prepared for the life of its connection, so that connection is closed (the
    /// pool opens a new one, which prepares the statement again) and the statement runs again. Every pooled
    /// connection can hold the stale statement once, so it is tried at most once more than the pool has connections.
    package func runPrepared<Text: PostgresStatementText>(_ text: Text.Type, _ binds: [PreparedBind]) async throws
        -> [PostgresRow]
    {
        guard let box = postgresPool else { throw DatabaseError("prepared statements are PostgreSQL's") }
        assert(binds.map(\.type) == Text.parameterTypes, "\(Text.name): binds do not match its parameter types")
        observer?(Text.sql, binds.map(\.encodable))
        let statement = PreparedStatement<Text>(binds: binds)
        var attempts = 0
        while true {
            let connection: PostgresConnection
            do {
                connection = try await box.pool.requestConnection(logger: logger).get()
            } catch ConnectionPoolTimeoutError.connectionRequestTimeout {
                throw DatabaseError.timeout(.acquire)
            }
            do {
                let rows = try await deadline.run(on: connection) { [logger] in
                    var rows: [PostgresRow] = []
                    for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
                    return rows
                }
                box.pool.releaseConnection(connection, logger: logger)
                return rows
            } catch let error as PSQLError where Self.isStalePreparedStatement(error) && attempts < postgresPoolSize {
                attempts += 1
                logger.notice("prepared statement outdated by a schema change; preparing it again on a new connection")
                try? await connection.close()
                box.pool.releaseConnection(connection, logger: logger)
            } catch let error as PSQLError where Self.mayHaveFailedPreparing(error) {
                // postgres-nio keeps a failed preparation as that statement's answer for the life of the
                // connection, so the connection would refuse it even after the cause is gone (a migration another
                // node has not finished, a statement timeout while planning). A new connection prepares it afresh.
                logger.notice(
                    "prepared statement failed; closing its connection",
                    metadata: ["sqlstate": "\(error.serverInfo?[.sqlState] ?? "none")"])
                try? await connection.close()
                box.pool.releaseConnection(connection, logger: logger)
                throw error
            } catch {
                box.pool.releaseConnection(connection, logger: logger)
                throw error
            }
        }
    }

    /// Whether a server error may have come from preparing the statement rather than from running it: anything but
    /// data exceptions (class 22), constraint violations (23, e.g. a replayed challenge's key) and transaction
    /// rollbacks (40), which only an execution raises and which an attacker can cause at will, so they must not
    /// cost a connection. Errors without a server answer (a lost connection) are the pool's to handle.
    package static func mayHaveFailedPreparing(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return !["22", "23", "40"].contains(state.prefix(2))
    }

    /// PostgreSQL's "cached plan must not change result type" is SQLSTATE 0A000 (feature_not_supported), which
    /// nothing else in the statements run here raises; the message is not compared, since it follows the server's
    /// language (`lc_messages`).
    package static func isStalePreparedStatement(_ error: PSQLError) -> Bool {
        error.serverInfo?[.sqlState] == "0A000"
    }
}
