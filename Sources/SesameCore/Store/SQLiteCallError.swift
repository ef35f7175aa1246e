import SystemSQLite

/// A failed call into SQLite (`SQLiteHandle`): the extended result code and SQLite's message for it. The message
/// names tables, columns and constraints, never bound values.
package struct SQLiteCallError: Error, CustomStringConvertible {
    /// The extended result code (e.g. `SQLITE_CONSTRAINT_UNIQUE`); `primary` is its low byte.
    package let code: Int32
    package let message: String

    package init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The connection's last error message (or the code's generic text when there is no connection).
    package init(code: Int32, db: OpaquePointer?) {
        self.code = code
        if let db, let text = sqlite3_errmsg(db) {
            message = String(cString: text)
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
    }

    package var primary: Int32 { code & 0xFF }

    /// Another connection holds a lock for longer than the busy timeout (`SQLITE_BUSY`, `SQLITE_LOCKED`).
    package var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }

    /// A constraint refused the statement (UNIQUE, PRIMARY KEY, FOREIGN KEY, CHECK, NOT NULL or a trigger's
    /// `RAISE(ABORT)`); the store reads the unique and primary-key cases as a conflict, as it did before.
    package var isConstraintViolation: Bool { primary == SQLITE_CONSTRAINT }

    /// The disk or file system holding the database (or its WAL) is full (`SQLITE_FULL`); also what a
    /// `PRAGMA max_page_count` limit reports.
    package var isStorageFull: Bool { primary == SQLITE_FULL }

    package var description: String { "SQLite error \(code): \(message)" }
}
