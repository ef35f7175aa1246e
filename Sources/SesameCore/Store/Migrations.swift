import Foundation
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

/// A part of the one database: the migrations a target brings (numbered in the one sequence, never reused) and the
/// tables that hold an account's rows, which deleting the account empties (children before parents).
package struct SchemaPart: Sendable {
    package let name: String
    package let migrations: [Migration]
    package let accountTables: [String]

    package init(name: String, migrations: [Migration], accountTables: [String]) {
        self.name = name
        self.migrations = migrations
        self.accountTables = accountTables
    }
}

/// The whole schema, put together once by the composition root from the core's part and each feature's: every
/// migration in version order (two parts may not use one number), and every account table.
package struct DatabaseSchema: Sendable {
    package let migrations: [Migration]
    package let accountTables: [String]

    package init(_ parts: [SchemaPart]) {
        let migrations = parts.flatMap(\.migrations).sorted { $0.version < $1.version }
        for (a, b) in zip(migrations, migrations.dropFirst()) {
            precondition(a.version != b.version, "migration \(a.version) is numbered twice (\(a.name); \(b.name))")
        }
        self.migrations = migrations
        self.accountTables = parts.flatMap(\.accountTables)
    }

    /// The newest migration this build knows.
    package var current: Int { migrations.last?.version ?? 0 }
}

package enum Migrations {
    /// The core's part: accounts and what every feature shares, and (until each moves to its feature) the tables of
    /// the features that have not taken theirs yet.
    package static let core = SchemaPart(
        name: "core",
        migrations: coreMigrations,
        accountTables: [
            "credentials", "passwords", "totp", "recovery_codes", "recovery_code_sets", "sms", "sessions", "challenges",
        ])

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
            version: 2,
            name: "encrypt TOTP secrets and SMS phone numbers at rest",
            statements: [],
            transform: { db, now in try await sealStoredSecrets(db, now: now) }
        ),
        Migration(
            version: 3,
            name: "sessions remember when their holder last authenticated",
            // Sessions from before this migration count as authenticated long ago: a sensitive change asks them
            // to re-authenticate first.
            statements: ["ALTER TABLE sessions ADD COLUMN authenticated_at BIGINT NOT NULL DEFAULT 0"]
        ),
        Migration(
            version: 4,
            name: "OpenID Connect provider: clients, signing keys, grants, codes, refresh tokens, consents",
            statements: [
                """
                CREATE TABLE oauth_clients (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    secret_hash {bytes},
                    redirect_uris TEXT NOT NULL,
                    post_logout_redirect_uris TEXT NOT NULL,
                    backchannel_logout_uri TEXT,
                    first_party BIGINT NOT NULL,
                    id_token_alg TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE oauth_signing_keys (
                    kid TEXT PRIMARY KEY,
                    alg TEXT NOT NULL,
                    private_key {bytes} NOT NULL,
                    created_at BIGINT NOT NULL,
                    retired_at BIGINT
                )
                """,
                """
                CREATE TABLE oauth_grants (
                    id TEXT PRIMARY KEY,
                    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    scope TEXT NOT NULL,
                    nonce TEXT,
                    auth_time BIGINT NOT NULL,
                    method TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX oauth_grants_user ON oauth_grants (user_id, client_id)",
                """
                CREATE TABLE oauth_codes (
                    code_hash {bytes} PRIMARY KEY,
                    grant_id TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
                    redirect_uri TEXT NOT NULL,
                    code_challenge TEXT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    used_at BIGINT
                )
                """,
                """
                CREATE TABLE oauth_refresh_tokens (
                    token_hash {bytes} PRIMARY KEY,
                    grant_id TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
                    idle_expires_at BIGINT NOT NULL,
                    used_at BIGINT
                )
                """,
                "CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id)",
                """
                CREATE TABLE oauth_consents (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    scope TEXT NOT NULL,
                    granted_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, client_id)
                )
                """,
            ]
        ),
        Migration(
            version: 6,
            name: "OAuth device authorization grant (RFC 8628)",
            statements: [
                """
                CREATE TABLE oauth_device_codes (
                    device_code_hash {bytes} PRIMARY KEY,
                    user_code_hash {bytes} NOT NULL UNIQUE,
                    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    scope TEXT NOT NULL,
                    status TEXT NOT NULL,
                    interval_seconds BIGINT NOT NULL,
                    next_poll_at BIGINT NOT NULL,
                    grant_id TEXT REFERENCES oauth_grants(id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL
                )
                """
            ]
        ),
        Migration(
            version: 8,
            name: "OpenID Connect clients: pairwise subject identifiers",
            statements: ["ALTER TABLE oauth_clients ADD COLUMN subject_type TEXT NOT NULL DEFAULT 'public'"]
        ),
        Migration(
            version: 9,
            name: "OpenID Connect clients: private_key_jwt keys and spent assertion ids",
            statements: [
                "ALTER TABLE oauth_clients ADD COLUMN jwks TEXT",
                """
                CREATE TABLE oauth_assertion_ids (
                    jti_hash {bytes} PRIMARY KEY,
                    expires_at BIGINT NOT NULL
                )
                """,
            ]
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
            version: 15,
            name: "a grant without offline_access remembers the session it came from",
            // Its tokens work only while that session (sessions.id, unique) is signed in. NULL: a grant with
            // offline_access, or one from before this migration (or from a node of an earlier version), tied to none.
            statements: ["ALTER TABLE oauth_grants ADD COLUMN session_id TEXT"]
        ),
    ]

    /// The first migration whose row records its `SchemaChange` (the column comes with it).
    package static let changeRecordedFrom = 12

    /// The newest schema version this build knows.

    /// Migration 2: every TOTP secret and phone number stored in clear by migration 1's code is sealed with
    /// `FieldCipher` (keys from the server secret, generated here if this database never had one).
    package static func sealStoredSecrets(_ db: any SQLDatabase, now: Date) async throws {
        let secret = try await SQLStore.loadServerSecret(
            db, named: ServerSecret.name, generate: ServerSecret.generate, now: now)
        let ciphers = FieldCiphers(serverSecret: secret)
        for row in try await db.raw("SELECT user_id, secret FROM totp").all() {
            let userID = try row.decode(column: "user_id", as: String.self)
            let plain = [UInt8](try row.decode(column: "secret", as: Data.self))
            let sealed = try ciphers.totp.seal(plain, userID: userID)
            try await db.raw("UPDATE totp SET secret = \(bind: Data(sealed)) WHERE user_id = \(bind: userID)").run()
        }
        for row in try await db.raw("SELECT user_id, phone FROM sms").all() {
            let userID = try row.decode(column: "user_id", as: String.self)
            let phone = try row.decode(column: "phone", as: String.self)
            let sealed = try ciphers.sms.sealText(phone, userID: userID)
            try await db.raw("UPDATE sms SET phone = \(bind: sealed) WHERE user_id = \(bind: userID)").run()
        }
    }

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
    /// attempt is retried if SQLite gives up at once. PostgreSQL waits on the advisory lock instead.
    private static func whileBusy<T: Sendable>(_ kind: SQLEngineKind, _ body: () async throws -> T) async throws -> T {
        kind == .sqlite ? try await retryingWhileBusy(body) : try await body()
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
