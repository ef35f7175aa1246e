import Foundation
import PostgresNIO
import SQLKit

/// Numbered schema migrations. A migration that has landed on main is never edited: change the schema by
/// appending a new one. Each runs once, in order, inside a transaction, under the migration lock
/// (PostgreSQL advisory lock / SQLite `BEGIN IMMEDIATE`), and is recorded in `sesame_migrations`.
///
/// Column conventions (the same on both engines): times are BIGINT Unix milliseconds, booleans are BIGINT 0/1,
/// byte strings are BLOB (SQLite) / BYTEA (PostgreSQL), identifiers are TEXT.
///
/// Rolling upgrades (docs/deploy.md, "Upgrades"): nodes of the previous version keep serving while a new node
/// migrates the database they share, so a migration either only adds (`expand`) or lands in a version after the one
/// that stopped using what it removes (`contract`), and a node that does not know a recorded contract refuses to
/// start (`Migrations.checkNoUnknownContract`).
package struct Migration: Sendable {
    package let version: Int
    package let name: String
    /// Statements; `{bytes}` is replaced by the engine's byte string type.
    package let statements: [String]
    /// Work SQL alone cannot do (e.g. encrypting rows), run after the statements in the same transaction.
    package var transform: (@Sendable (any SQLDatabase, Date) async throws -> Void)? = nil
    package var change: SchemaChange = .expand

    package init(
        version: Int, name: String, statements: [String],
        transform: (@Sendable (any SQLDatabase, Date) async throws -> Void)? = nil, change: SchemaChange = .expand
    ) {
        self.version = version
        self.name = name
        self.statements = statements
        self.transform = transform
        self.change = change
    }
}

/// What a migration does to nodes of earlier versions still running against the database.
package enum SchemaChange: String, Sendable {
    /// Only adds (tables, indexes, columns that are NULL or have a default): earlier versions keep working.
    case expand
    /// Removes or redefines something earlier versions read or write: only versions that know it may run.
    case contract
}

/// A part of the one database: the migrations a target brings (numbered in the one sequence, never reused), the
/// tables that hold an account's rows, which deleting the account empties (children before parents), and what the
/// core's shared operations must do to the part's tables: rows the purge deletes once past their time, columns sealed
/// at rest (`sesame seal-keys`), and what else ends in the transaction that ends a person's sessions.
package struct SchemaPart: Sendable {
    package let name: String
    package let migrations: [Migration]
    package let accountTables: [String]
    package let expiring: [ExpiringRows]
    package let sealedColumns: [SealedColumn]
    package let whenSessionsEnd: [SessionsEndHook]
    /// SQLite statements run each time the store is opened (TEMP views and triggers, which live in the connection and
    /// are no schema change).
    package let sqliteOnOpen: [SQLQueryString]

    package init(
        name: String, migrations: [Migration], accountTables: [String], expiring: [ExpiringRows] = [],
        sealedColumns: [SealedColumn] = [], whenSessionsEnd: [SessionsEndHook] = [], sqliteOnOpen: [SQLQueryString] = []
    ) {
        self.name = name
        self.migrations = migrations
        self.accountTables = accountTables
        self.expiring = expiring
        self.sealedColumns = sealedColumns
        self.whenSessionsEnd = whenSessionsEnd
        self.sqliteOnOpen = sqliteOnOpen
    }
}

/// Rows that end at a time: every node's purge (each minute) deletes those whose `column` (Unix ms) is past.
package struct ExpiringRows: Sendable, Equatable {
    package let table: String
    package let column: String

    package init(table: String, column: String = "expires_at") {
        self.table = table
        self.column = column
    }
}

/// A column whose values are sealed at rest (``FieldCipher``): its purpose names the key, `rowID` the column whose
/// value is the associated data's "user id" (the account's id, or a signing key's id). `text` columns hold the
/// sealed bytes as base64url text.
package struct SealedColumn: Sendable, Equatable {
    package let purpose: FieldCipher.Purpose
    package let table: String
    package let rowID: String
    package let column: String
    package let text: Bool

    package init(
        purpose: FieldCipher.Purpose, table: String, rowID: String = "user_id", column: String, text: Bool = false
    ) {
        self.purpose = purpose
        self.table = table
        self.rowID = rowID
        self.column = column
        self.text = text
    }
}

/// Run inside the transaction that ends every session of a person (sign out everywhere, a password replaced, the
/// account disabled): what a feature ties to those sessions ends with them, or not at all.
package typealias SessionsEndHook = @Sendable (_ userID: String, _ db: any SQLDatabase, _ at: Date) async throws -> Void

/// The whole schema, put together once by the composition root from the core's part and each feature's: every
/// migration in version order (two parts may not use one number), every account table, every expiring table, every
/// sealed column (one purpose per column) and every hook on ending sessions.
package struct DatabaseSchema: Sendable {
    package let migrations: [Migration]
    package let accountTables: [String]
    package let expiring: [ExpiringRows]
    package let sealedColumns: [SealedColumn]
    package let whenSessionsEnd: [SessionsEndHook]
    package let sqliteOnOpen: [SQLQueryString]

    package init(_ parts: [SchemaPart]) {
        let migrations = parts.flatMap(\.migrations).sorted { $0.version < $1.version }
        for (a, b) in zip(migrations, migrations.dropFirst()) {
            precondition(a.version != b.version, "migration \(a.version) is numbered twice (\(a.name); \(b.name))")
        }
        let sealed = parts.flatMap(\.sealedColumns)
        precondition(
            Set(sealed.map(\.purpose)).count == sealed.count, "a sealing purpose is declared for two columns")
        self.migrations = migrations
        self.accountTables = parts.flatMap(\.accountTables)
        self.expiring = parts.flatMap(\.expiring)
        self.sealedColumns = sealed
        self.whenSessionsEnd = parts.flatMap(\.whenSessionsEnd)
        self.sqliteOnOpen = parts.flatMap(\.sqliteOnOpen)
    }

    /// The newest migration this build knows.
    package var current: Int { migrations.last?.version ?? 0 }

    /// Ends what the parts tie to a person's sessions, in the caller's transaction.
    package func sessionsEnded(userID: String, _ db: any SQLDatabase, at: Date) async throws {
        for hook in whenSessionsEnd { try await hook(userID, db, at) }
    }
}

package enum Migrations {
    /// The core's part: accounts and what every feature shares, and (until each moves to its feature) the tables of
    /// the features that have not taken theirs yet.
    package static let core = SchemaPart(
        name: "core",
        migrations: coreMigrations,
        accountTables: [
            "sessions", "challenges",
        ],
        expiring: [
            ExpiringRows(table: "challenges"), ExpiringRows(table: "used_challenges"), ExpiringRows(table: "sessions"),
            ExpiringRows(table: "mail_outbox", column: "purge_after"),
        ],
        sealedColumns: [SealedColumn(purpose: .mail, table: "mail_outbox", rowID: "id", column: "payload")])

    private static let coreMigrations: [Migration] = [
        Migration(
            version: 1,
            name: "accounts, factors, sessions, challenges, rate limits, audit, secrets",
            statements: [
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    username TEXT NOT NULL,
                    username_key TEXT NOT NULL UNIQUE,
                    display_name TEXT NOT NULL,
                    user_handle {bytes} NOT NULL UNIQUE,
                    disabled BIGINT NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE credentials (
                    id {bytes} PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    public_key {bytes} NOT NULL,
                    sign_count BIGINT NOT NULL,
                    transports TEXT NOT NULL,
                    aaguid {bytes},
                    backup_eligible BIGINT NOT NULL,
                    backed_up BIGINT NOT NULL,
                    user_verified BIGINT NOT NULL,
                    attestation_format TEXT NOT NULL,
                    name TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT
                )
                """,
                "CREATE INDEX credentials_user ON credentials(user_id)",
                """
                CREATE TABLE passwords (
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    hash {bytes} NOT NULL,
                    salt {bytes} NOT NULL,
                    log_n BIGINT NOT NULL,
                    r BIGINT NOT NULL,
                    p BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE totp (
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    secret {bytes} NOT NULL,
                    last_step BIGINT NOT NULL DEFAULT -1,
                    confirmed BIGINT NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE recovery_code_sets (
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    salt {bytes} NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE recovery_codes (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    code_hash {bytes} NOT NULL,
                    used_at BIGINT,
                    PRIMARY KEY (user_id, code_hash)
                )
                """,
                """
                CREATE TABLE sms (
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    phone TEXT NOT NULL,
                    confirmed BIGINT NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE sessions (
                    token_hash {bytes} PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    last_seen_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    user_agent TEXT NOT NULL,
                    method TEXT NOT NULL
                )
                """,
                "CREATE INDEX sessions_user ON sessions(user_id)",
                """
                CREATE TABLE challenges (
                    id {bytes} PRIMARY KEY,
                    purpose TEXT NOT NULL,
                    binding {bytes} NOT NULL,
                    user_id TEXT,
                    payload TEXT NOT NULL,
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX challenges_expiry ON challenges(expires_at)",
                """
                CREATE TABLE rate_limits (
                    bucket TEXT PRIMARY KEY,
                    window_start BIGINT NOT NULL,
                    failures BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE audit_events (
                    id TEXT PRIMARY KEY,
                    at BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    outcome TEXT NOT NULL,
                    user_id TEXT,
                    username TEXT,
                    client_address TEXT NOT NULL,
                    detail TEXT NOT NULL
                )
                """,
                "CREATE INDEX audit_events_at ON audit_events(at)",
                "CREATE INDEX audit_events_user ON audit_events(user_id)",
                """
                CREATE TABLE server_secrets (
                    name TEXT PRIMARY KEY,
                    value {bytes} NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
            ]
        ),
        Migration(
            version: 3,
            name: "sessions remember when their holder last authenticated",
            // Sessions from before this migration count as authenticated long ago: a sensitive change asks them
            // to re-authenticate first.
            statements: ["ALTER TABLE sessions ADD COLUMN authenticated_at BIGINT NOT NULL DEFAULT 0"]
        ),
        Migration(
            version: 11,
            name: "whether a session's passkey was backup-eligible, for amr hwk/swk",
            // NULL: not a passkey session, or one from before this migration (its tokens then say only `pop`).
            statements: [
                "ALTER TABLE sessions ADD COLUMN passkey_backup_eligible BIGINT",
                "ALTER TABLE oauth_grants ADD COLUMN passkey_backup_eligible BIGINT",
            ]
        ),
        Migration(
            version: 12,
            name: "migrations record whether they expand or contract the schema, for nodes of two versions together",
            // Every migration before this one only added; the default says so for their rows.
            statements: ["ALTER TABLE sesame_migrations ADD COLUMN schema_change TEXT NOT NULL DEFAULT 'expand'"]
        ),
        Migration(
            version: 13,
            name: "indexes for the expiry purge every node runs each minute",
            // Without them each purge read every session, grant and rate-limit row, and each expired grant's cascade
            // every authorization code and device code (QueryPlanTests).
            statements: [
                "CREATE INDEX sessions_expiry ON sessions (expires_at)",
                "CREATE INDEX rate_limits_window ON rate_limits (window_start)",
                "CREATE INDEX oauth_grants_expiry ON oauth_grants (expires_at)",
                "CREATE INDEX oauth_device_codes_expiry ON oauth_device_codes (expires_at)",
                "CREATE INDEX oauth_assertion_ids_expiry ON oauth_assertion_ids (expires_at)",
                "CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id)",
                "CREATE INDEX oauth_device_codes_grant ON oauth_device_codes (grant_id)",
            ]
        ),
        Migration(
            version: 14,
            name: "spent sealed sign-in challenges, kept until they expire",
            // Sealed challenges (SealedSignInChallenge) are stored nowhere when issued; each is recorded here when a
            // verify step spends it, so it cannot be used again on any node. Earlier versions never read it.
            statements: [
                "CREATE TABLE used_challenges (id {bytes} PRIMARY KEY, expires_at BIGINT NOT NULL)",
                "CREATE INDEX used_challenges_expiry ON used_challenges (expires_at)",
            ]
        ),
        Migration(
            version: 16,
            name: "the mail outbox: mails written with the change that asks for them, sealed until sent",
            statements: [
                """
                CREATE TABLE mail_outbox (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    payload {bytes},
                    created_at BIGINT NOT NULL,
                    next_attempt_at BIGINT NOT NULL,
                    attempts BIGINT NOT NULL DEFAULT 0,
                    leased_until BIGINT,
                    last_error TEXT,
                    sent_at BIGINT,
                    gave_up_at BIGINT,
                    purge_after BIGINT
                )
                """,
                "CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND gave_up_at IS NULL",
                "CREATE INDEX mail_outbox_purge ON mail_outbox (purge_after)",
            ]
        ),
        Migration(
            version: 20,
            name: "what a session is limited to: a session from recovery by email may only add a passkey",
            // NULL: a full session (every session before this migration). A node of an earlier version reads a
            // limited session as a full one, so `emailRecovery` waits until every node runs this one (docs/email.md).
            statements: ["ALTER TABLE sessions ADD COLUMN limitation TEXT"]
        ),
        Migration(
            version: 26,
            name: "the app an audit event concerns, so the console's audit log links to it",
            // NULL: an event about no app, or one written before this migration (its detail names the app). Nodes of
            // the version before list their columns and leave it NULL.
            statements: ["ALTER TABLE audit_events ADD COLUMN client_id TEXT"]
        ),
    ]

    /// The first migration whose row records its `SchemaChange` (the column comes with it).
    package static let changeRecordedFrom = 12

    /// The newest schema version this build knows.

    /// Applies every migration not yet recorded (up to `through`, for tests that need an older schema). Returns
    /// the versions applied by this call.
    @discardableResult
    package static func run(_ schema: DatabaseSchema, on engine: SQLEngine, now: Date, through: Int = .max)
        async throws -> [Int]
    {
        let bytes = engine.bytes
        let kind = engine.kind
        return try await engine.withMigrationLock { db in
            try await run(schema, on: db, kind: kind, bytes: bytes, now: now, through: through)
        }
    }

    private static func run(
        _ schema: DatabaseSchema, on db: any SQLDatabase, kind: SQLEngineKind, bytes: String, now: Date, through: Int
    ) async throws -> [Int] {
        try await whileBusy(kind) {
            try await db.raw(
                "CREATE TABLE IF NOT EXISTS sesame_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
            ).run()
        }
        var applied: [Int] = []
        for migration in schema.migrations where migration.version <= through {
            // Each migration is its own transaction, retried alone if SQLite reports the database busy, so the
            // versions this call applied are all reported even when a later one had to wait.
            if try await whileBusy(kind, { try await apply(migration, on: db, kind: kind, bytes: bytes, now: now) }) {
                applied.append(migration.version)
            }
        }
        return applied
    }

    /// SQLite: another process may hold the write lock; BEGIN IMMEDIATE waits for it (busy timeout) and the
    /// attempt is retried if SQLite gives up at once. PostgreSQL: nodes of other versions keep serving while this one
    /// migrates (the advisory lock orders only the migrating nodes), so a migration's `ALTER TABLE` can deadlock with
    /// their transactions; PostgreSQL then rolls the migration's transaction back whole (SQLSTATE 40P01), and it is
    /// tried again, a few times, after a short pause.
    private static func whileBusy<T: Sendable>(_ kind: SQLEngineKind, _ body: () async throws -> T) async throws -> T {
        if kind == .sqlite { return try await retryingWhileBusy(body) }
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch  where attempt < postgresAttempts && isDeadlockVictim(error) {
                try await Task.sleep(for: .milliseconds(100 * attempt))
                attempt += 1
            }
        }
    }

    /// How many times a PostgreSQL migration chosen as a deadlock's victim is tried in all.
    package static let postgresAttempts = 6

    /// Whether PostgreSQL rolled the transaction back to end a deadlock (40P01) or a serialization conflict (40001).
    package static func isDeadlockVictim(_ error: any Error) -> Bool {
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    /// Applies one migration unless it is recorded; true if this call applied it.
    private static func apply(
        _ migration: Migration, on db: any SQLDatabase, kind: SQLEngineKind, bytes: String, now: Date
    ) async throws -> Bool {
        try await db.raw(kind == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN").run()
        do {
            let done = try await db.raw(
                "SELECT version FROM sesame_migrations WHERE version = \(bind: migration.version)"
            ).all()
            if done.isEmpty {
                for statement in migration.statements {
                    let text = statement.replacingOccurrences(of: "{bytes}", with: bytes)
                    try await db.raw(SQLQueryString(stringLiteral: text)).run()
                }
                try await migration.transform?(db, now)
                if migration.version >= changeRecordedFrom {
                    try await db.raw(
                        "INSERT INTO sesame_migrations (version, name, applied_at, schema_change) VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: now.milliseconds), \(bind: migration.change.rawValue))"
                    ).run()
                } else {
                    try await db.raw(
                        "INSERT INTO sesame_migrations (version, name, applied_at) VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: now.milliseconds))"
                    ).run()
                }
            }
            try await db.raw("COMMIT").run()
            return done.isEmpty
        } catch {
            _ = try? await db.raw("ROLLBACK").run()
            throw error
        }
    }

    /// Run after `run`: the versions a newer Sesame recorded that this build does not know, when each of them only
    /// expands the schema (this node may run beside that version). Throws `StoreError.newerSchema` when one of them
    /// contracts it: this build may read or write what it removed or changed.
    package static func checkNoUnknownContract(_ schema: DatabaseSchema, on engine: SQLEngine) async throws -> [Int] {
        let current = schema.current
        let rows = try await engine.sql.raw(
            "SELECT version, schema_change FROM sesame_migrations WHERE version > \(bind: current) ORDER BY version"
        ).all()
        var newer: [Int] = []
        for row in rows {
            let version = try row.decode(column: "version", as: Int.self)
            let change = try row.decode(column: "schema_change", as: String.self)
            guard change == SchemaChange.expand.rawValue else {
                throw StoreError.newerSchema(version: version, knownThrough: current)
            }
            newer.append(version)
        }
        return newer
    }

    /// Versions recorded as applied.
    package static func appliedVersions(on engine: SQLEngine) async throws -> [Int] {
        let rows = try await engine.sql.raw("SELECT version FROM sesame_migrations ORDER BY version").all()
        return try rows.map { try $0.decode(column: "version", as: Int.self) }
    }
}
