import Foundation
import SQLKit
import SesameCore

/// An admin API token as stored: never the token, only its SHA-256.
package struct AdminTokenRecord: Sendable, Equatable {
    package let id: String
    package let name: String
    package let tokenHash: [UInt8]
    package let scopes: [AdminScope]
    package let createdAt: Date
    package let expiresAt: Date
    /// `cli`, or the admin who made it through the console (`admin ada`).
    package let createdBy: String
    package var lastUsedAt: Date?
    package var revokedAt: Date?

    package init(
        id: String, name: String, tokenHash: [UInt8], scopes: [AdminScope], createdAt: Date, expiresAt: Date,
        createdBy: String, lastUsedAt: Date? = nil, revokedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.tokenHash = tokenHash
        self.scopes = scopes
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.createdBy = createdBy
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }

    /// Live: not revoked and not expired at `now`.
    package func live(at now: Date) -> Bool { revokedAt == nil && expiresAt > now }

    /// `active`, `expired` or `revoked`, as lists show it.
    package func state(at now: Date) -> String {
        revokedAt != nil ? "revoked" : expiresAt <= now ? "expired" : "active"
    }
}

/// Which audit events a page of the log holds: every field optional, newest first, after a cursor.
package struct AuditFilter: Sendable, Equatable {
    package var userID: String?
    package var kind: String?
    package var outcome: String?
    /// From this instant on (inclusive).
    package var from: Date?
    /// Before this instant (exclusive).
    package var to: Date?
    /// The last event of the page before (its time and id): this page starts after it.
    package var after: (at: Int64, id: String)?

    package init(
        userID: String? = nil, kind: String? = nil, outcome: String? = nil, from: Date? = nil, to: Date? = nil,
        after: (at: Int64, id: String)? = nil
    ) {
        self.userID = userID
        self.kind = kind
        self.outcome = outcome
        self.from = from
        self.to = to
        self.after = after
    }

    package static func == (a: AuditFilter, b: AuditFilter) -> Bool {
        a.userID == b.userID && a.kind == b.kind && a.outcome == b.outcome && a.from == b.from && a.to == b.to
            && a.after?.at == b.after?.at && a.after?.id == b.after?.id
    }
}

/// Admin API tokens, and the audit log as the admin API reads it. Creating and revoking write their audit event in
/// the same transaction.
package protocol AdminTokenStore: Sendable {
    func createAdminToken(_ token: AdminTokenRecord, audit: AuditEvent) async throws
    /// Every token, newest first.
    func adminTokens() async throws -> [AdminTokenRecord]
    func adminToken(id: String) async throws -> AdminTokenRecord?
    /// The token whose SHA-256 is `hash`, live or not.
    func adminToken(hash: [UInt8]) async throws -> AdminTokenRecord?
    /// Revokes a token not revoked yet, with its audit event; false when there is none with that id.
    func revokeAdminToken(id: String, at: Date, audit: AuditEvent) async throws -> Bool
    /// Notes a use, at most once a minute per token (a write per request would flood the table's page).
    func noteAdminTokenUse(id: String, at: Date) async throws
    /// Up to `limit` events that pass `filter`, newest first (time, then id, descending).
    func auditPage(_ filter: AuditFilter, limit: Int) async throws -> [AuditEvent]
}

extension SQLStore: AdminTokenStore {
    private static let tokenColumns: SQLQueryString =
        "id, name, token_hash, scopes, created_at, expires_at, created_by, last_used_at, revoked_at"

    private static func token(_ row: any SQLRow) throws -> AdminTokenRecord {
        AdminTokenRecord(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            tokenHash: [UInt8](try row.decode(column: "token_hash", as: Data.self)),
            scopes: try row.decode(column: "scopes", as: String.self).split(separator: ",").map {
                AdminScope(String($0))
            },
            createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(milliseconds: try row.decode(column: "expires_at", as: Int64.self)),
            createdBy: try row.decode(column: "created_by", as: String.self),
            lastUsedAt: try row.decode(column: "last_used_at", as: Int64?.self).map { Date(milliseconds: $0) },
            revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map { Date(milliseconds: $0) })
    }

    package func createAdminToken(_ token: AdminTokenRecord, audit: AuditEvent) async throws {
        try await engine.withTransaction { db in
            try await db.raw(
                """
                INSERT INTO admin_tokens (\(Self.tokenColumns))
                VALUES (\(bind: token.id), \(bind: token.name), \(bind: Data(token.tokenHash)),
                    \(bind: token.scopes.map(\.rawValue).joined(separator: ",")), \(bind: token.createdAt.milliseconds),
                    \(bind: token.expiresAt.milliseconds), \(bind: token.createdBy), NULL, NULL)
                """
            ).run()
            try await db.raw(Self.auditInsert(audit)).run()
        }
    }

    package func adminTokens() async throws -> [AdminTokenRecord] {
        try await db.raw("SELECT \(Self.tokenColumns) FROM admin_tokens ORDER BY created_at DESC, id").all()
            .map(Self.token)
    }

    package func adminToken(id: String) async throws -> AdminTokenRecord? {
        try await db.raw("SELECT \(Self.tokenColumns) FROM admin_tokens WHERE id = \(bind: id)").first()
            .map(Self.token)
    }

    package func adminToken(hash: [UInt8]) async throws -> AdminTokenRecord? {
        try await db.raw("SELECT \(Self.tokenColumns) FROM admin_tokens WHERE token_hash = \(bind: Data(hash))")
            .first().map(Self.token)
    }

    package func revokeAdminToken(id: String, at: Date, audit: AuditEvent) async throws -> Bool {
        try await engine.withTransaction { db in
            guard
                try await db.raw(
                    """
                    UPDATE admin_tokens SET revoked_at = \(bind: at.milliseconds)
                    WHERE id = \(bind: id) AND revoked_at IS NULL RETURNING id
                    """
                ).first() != nil
            else { return false }
            try await db.raw(Self.auditInsert(audit)).run()
            return true
        }
    }

    package func noteAdminTokenUse(id: String, at: Date) async throws {
        try await db.raw(
            """
            UPDATE admin_tokens SET last_used_at = \(bind: at.milliseconds)
            WHERE id = \(bind: id) AND (last_used_at IS NULL OR last_used_at < \(bind: at.milliseconds - 60_000))
            """
        ).run()
    }

    /// One statement whatever the filter: each condition is sargable, so the planner takes the index that leads
    /// with the filtered column (`audit_events_user_at`, `audit_events_kind_at`) or time (`audit_events_at`) and
    /// reads the page in order; the cursor is `at <= t AND (at < t OR id < i)`, a range on `at` either engine uses.
    package func auditPage(_ filter: AuditFilter, limit: Int) async throws -> [AuditEvent] {
        var conditions: [SQLQueryString] = []
        if let userID = filter.userID { conditions.append("user_id = \(bind: userID)") }
        if let kind = filter.kind { conditions.append("kind = \(bind: kind)") }
        if let outcome = filter.outcome { conditions.append("outcome = \(bind: outcome)") }
        if let from = filter.from { conditions.append("at >= \(bind: from.milliseconds)") }
        if let to = filter.to { conditions.append("at < \(bind: to.milliseconds)") }
        if let after = filter.after {
            conditions.append(
                "at <= \(bind: after.at) AND (at < \(bind: after.at) OR id < \(bind: after.id))")
        }
        let whereClause: SQLQueryString =
            conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try await db.raw(
            """
            SELECT \(Self.auditColumns) FROM audit_events \(whereClause)
            ORDER BY at DESC, id DESC LIMIT \(literal: max(1, limit))
            """
        ).all().map { try $0.decode(model: AuditRow.self).event }
    }
}
