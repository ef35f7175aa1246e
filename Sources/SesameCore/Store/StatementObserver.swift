import Logging
import NIOCore
import SQLKit

/// Sees every statement the store sends to its engine, as serialised for it (SQL text with the engine's placeholders,
/// and the binds), before it runs. Tests use it to read the query plan of each statement a route runs
/// (`QueryPlanTests`); `sesame serve` has none.
package typealias StatementObserver = @Sendable (_ sql: String, _ binds: [any Encodable & Sendable]) -> Void

/// A database that tells `observer` about each statement, then runs it on `base`.
package struct ObservedSQLDatabase: SQLDatabase {
    package let base: any SQLDatabase
    package let observer: StatementObserver

    package var logger: Logger { base.logger }
    package var eventLoop: any EventLoop { base.eventLoop }
    package var version: (any SQLDatabaseReportedVersion)? { base.version }
    package var dialect: any SQLDialect { base.dialect }
    package var queryLogLevel: Logger.Level? { base.queryLogLevel }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<
            Void
        >
    {
        observe(query)
        return base.execute(sql: query, onRow)
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        observe(query)
        try await base.execute(sql: query, onRow)
    }

    private func observe(_ query: any SQLExpression) {
        var serializer = SQLSerializer(database: base)
        query.serialize(to: &serializer)
        observer(serializer.sql, serializer.binds)
    }
}
