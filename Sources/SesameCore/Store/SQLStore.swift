import Foundation
import PostgresKit
import SQLKit
import WebAuthn

/// The one `Store` implementation, over sql-kit. Statements are written once in the SQL both engines accept
/// (`INSERT … ON CONFLICT`, `DELETE … RETURNING`, `UPDATE … WHERE <guard>`), so SQLite and PostgreSQL behave alike.
/// This file holds what every area shares; each area's statements and row decoding are in `Areas/`.
public struct SQLStore: Store {
    package let engine: SQLEngine
    package var db: any SQLDatabase { engine.sql }
    /// Seal TOTP secrets and phone numbers at rest (keys derived from the server secret).
    package let ciphers: FieldCiphers
    /// The schema it was migrated to: which tables hold an account's rows.
    package let schema: DatabaseSchema

    /// Opens the store over a migrated engine, loading (or, on first start, generating) the server secret that
    /// the database sealing key comes from; `sealingKeys` (the sealing key file) adds keys held outside it.
    package static func open(
        engine: SQLEngine, schema: DatabaseSchema, now: Date, sealingKeys: SealingKeyFile? = nil
    ) async throws -> SQLStore {
        let secret = try await loadServerSecret(
            engine.sql, named: ServerSecret.name, generate: ServerSecret.generate, now: now)
        if engine.kind == .sqlite {
            for statement in schema.sqliteOnOpen { try await engine.sql.raw(statement).run() }
        }
        return SQLStore(
            engine: engine,
            ciphers: FieldCiphers(
                serverSecret: secret, keys: sealingKeys, purposes: schema.sealedColumns.map(\.purpose)),
            schema: schema)
    }

    package init(engine: SQLEngine, ciphers: FieldCiphers, schema: DatabaseSchema) {
        self.engine = engine
        self.ciphers = ciphers
        self.schema = schema
    }

    /// Inserts the named secret unless a row exists (another node may race: `ON CONFLICT DO NOTHING`), then reads it.
    package static func loadServerSecret(
        _ db: any SQLDatabase, named name: String, generate: @Sendable () -> [UInt8], now: Date
    ) async throws -> [UInt8] {
        try await db.raw(
            "INSERT INTO server_secrets (name, value, created_at) VALUES (\(bind: name), \(bind: Data(generate())), \(bind: now.milliseconds)) ON CONFLICT (name) DO NOTHING"
        ).run()
        guard let row = try await db.raw("SELECT value FROM server_secrets WHERE name = \(bind: name)").first() else {
            throw DatabaseError("server secret \(name) missing after insert")
        }
        return [UInt8](try row.decode(column: "value", as: Data.self))
    }

    /// On PostgreSQL the user row is locked first, so two concurrent removals cannot both see "another way in".
    package func lockUser(_ db: any SQLDatabase, _ userID: String) async throws {
        if engine.kind == .postgres {
            try await db.raw("SELECT id FROM users WHERE id = \(bind: userID) FOR UPDATE").run()
        }
    }

    package static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "23505" }
        if let error = error as? SQLiteCallError { return error.isConstraintViolation }
        return false
    }

    package func insert(_ query: SQLQueryString) async throws {
        do { try await db.raw(query).run() } catch  where Self.isUniqueViolation(error) { throw StoreError.conflict }
    }

    public func ping() async throws {
        _ = try await db.raw("SELECT 1 AS one").all()
    }

    public var storageFull: Bool { engine.writeSpace?.isExhausted ?? false }

    public func serverSecret(named name: String, generate: @Sendable () -> [UInt8], now: Date) async throws -> [UInt8] {
        try await Self.loadServerSecret(db, named: name, generate: generate, now: now)
    }

    public func purgeExpired(now: Date, rateLimitWindow: TimeInterval) async throws {
        let nowMs = now.milliseconds
        try await db.raw("DELETE FROM rate_limits WHERE window_start <= \(bind: nowMs - Int64(rateLimitWindow * 1000))")
            .run()
        for rows in schema.expiring {
            try await db.raw("DELETE FROM \(ident: rows.table) WHERE \(ident: rows.column) <= \(bind: nowMs)").run()
        }
    }
}
