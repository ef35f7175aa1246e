import Logging
import NIOCore
import SQLKit
import Synchronization

/// Lets a transaction run alone on the one SQLite connection.
///
/// The connection runs statements from every request one after another (`SQLiteHandle` runs each call under its
/// lock), so between a `BEGIN` and its `COMMIT` any other request's statement would join the transaction, and
/// a `ROLLBACK` would undo it too. Every ordinary statement therefore holds the gate shared while it runs, and a
/// transaction holds it exclusively: it starts once the statements in flight have finished, and statements that
/// arrive meanwhile wait until it has committed or rolled back. Waiting transactions go before newly arriving
/// statements, and the statements that waited for a transaction go before the next transaction.
package final class SQLiteGate: Sendable {
    private struct State {
        var running = 0
        var exclusive = false
        var waitingStatements: [CheckedContinuation<Void, Never>] = []
        var waitingTransactions: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Waits until no transaction holds or waits for the gate, then counts one statement in.
    package func enterStatement() async {
        if state.withLock({ Self.tryStatement(&$0) }) { return }
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state -> Bool in
                if Self.tryStatement(&state) { return true }
                state.waitingStatements.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    package func leaveStatement() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.running -= 1
            guard state.running == 0, !state.waitingTransactions.isEmpty else { return nil }
            state.exclusive = true
            return state.waitingTransactions.removeFirst()
        }
        next?.resume()
    }

    /// Waits until no statement runs and no other transaction holds the gate, then holds it alone.
    package func enterTransaction() async {
        if state.withLock({ Self.tryTransaction(&$0) }) { return }
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state -> Bool in
                if Self.tryTransaction(&state) { return true }
                state.waitingTransactions.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    package func leaveTransaction() {
        let (statements, transaction) = state.withLock {
            state -> ([CheckedContinuation<Void, Never>], CheckedContinuation<Void, Never>?) in
            if !state.waitingStatements.isEmpty {
                let waiting = state.waitingStatements
                state.waitingStatements = []
                state.exclusive = false
                state.running += waiting.count
                return (waiting, nil)
            }
            if !state.waitingTransactions.isEmpty { return ([], state.waitingTransactions.removeFirst()) }
            state.exclusive = false
            return ([], nil)
        }
        for continuation in statements { continuation.resume() }
        transaction?.resume()
    }

    private static func tryStatement(_ state: inout State) -> Bool {
        guard !state.exclusive, state.waitingTransactions.isEmpty else { return false }
        state.running += 1
        return true
    }

    private static func tryTransaction(_ state: inout State) -> Bool {
        guard !state.exclusive, state.running == 0 else { return false }
        state.exclusive = true
        return true
    }
}

/// The SQLite connection as the store sees it: each statement passes the gate (shared) before it runs.
package struct GatedSQLDatabase: SQLDatabase {
    package let base: any SQLDatabase
    package let gate: SQLiteGate

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
        eventLoop.makeFutureWithTask { try await execute(sql: query, onRow) }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        await gate.enterStatement()
        defer { gate.leaveStatement() }
        try await base.execute(sql: query, onRow)
    }
}
