import Foundation
import SQLKit
import SesameCore

/// A running node as its heartbeat left it (`NodeHeartbeats`).
package struct NodeRecord: Sendable, Equatable {
    package let id: String
    package let version: String
    package let startedAt: Date
    package let lastSeenAt: Date

    package init(id: String, version: String, startedAt: Date, lastSeenAt: Date) {
        self.id = id
        self.version = version
        self.startedAt = startedAt
        self.lastSeenAt = lastSeenAt
    }
}

/// Today's sign-ins of one audit kind with one outcome, as the Overview counts them.
package struct SignInCount: Sendable, Equatable {
    package let kind: String
    package let outcome: String
    package let count: Int
}

/// The nodes' heartbeats (migration 22).
package protocol NodeHeartbeatStore: Sendable {
    /// Writes (or refreshes) the node's row; it expires `keep` after `at`, when the purge deletes it.
    func beat(_ node: NodeRecord, keep: TimeInterval) async throws
    /// The nodes whose last heartbeat is at or after `since`, the longest running first.
    func nodes(seenSince since: Date) async throws -> [NodeRecord]
}

/// What the Overview reads that the core's tables hold: accounts and today's sign-ins.
package protocol OverviewStore: Sendable {
    /// Every account, and those disabled.
    func accountCounts() async throws -> (total: Int, disabled: Int)
    /// Audit events of `kinds` at or after `since`, counted by kind and outcome; read from the index
    /// `audit_events_kind_at` alone (one range per kind).
    func auditCounts(kinds: [String], since: Date) async throws -> [SignInCount]
    /// Mails neither sent nor given up that have failed at least once.
    func failingMails() async throws -> Int
}

extension SQLStore: NodeHeartbeatStore {
    package func beat(_ node: NodeRecord, keep: TimeInterval) async throws {
        let expires = node.lastSeenAt.addingTimeInterval(keep)
        try await db.raw(
            """
            INSERT INTO node_heartbeats (id, version, started_at, last_seen_at, expires_at)
            VALUES (\(bind: node.id), \(bind: node.version), \(bind: node.startedAt.milliseconds),
                \(bind: node.lastSeenAt.milliseconds), \(bind: expires.milliseconds))
            ON CONFLICT (id) DO UPDATE SET version = excluded.version, last_seen_at = excluded.last_seen_at,
                expires_at = excluded.expires_at
            """
        ).run()
    }

    package func nodes(seenSince since: Date) async throws -> [NodeRecord] {
        try await db.raw(
            """
            SELECT id, version, started_at, last_seen_at FROM node_heartbeats
            WHERE last_seen_at >= \(bind: since.milliseconds) ORDER BY started_at, id
            """
        ).all().map { row in
            NodeRecord(
                id: try row.decode(column: "id", as: String.self),
                version: try row.decode(column: "version", as: String.self),
                startedAt: Date(milliseconds: try row.decode(column: "started_at", as: Int64.self)),
                lastSeenAt: Date(milliseconds: try row.decode(column: "last_seen_at", as: Int64.self)))
        }
    }
}

extension SQLStore: OverviewStore {
    package func accountCounts() async throws -> (total: Int, disabled: Int) {
        let row = try await db.raw(
            "SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN disabled <> 0 THEN 1 ELSE 0 END), 0) AS disabled FROM users"
        ).first()
        return (
            Int(try row?.decode(column: "total", as: Int64.self) ?? 0),
            Int(try row?.decode(column: "disabled", as: Int64.self) ?? 0)
        )
    }

    package func auditCounts(kinds: [String], since: Date) async throws -> [SignInCount] {
        guard !kinds.isEmpty else { return [] }
        let list = SQLList(kinds.map { SQLBind($0) }, separator: SQLRaw(", "))
        return try await db.raw(
            """
            SELECT kind, outcome, COUNT(*) AS n FROM audit_events
            WHERE kind IN (\(list)) AND at >= \(bind: since.milliseconds)
            GROUP BY kind, outcome ORDER BY kind, outcome
            """
        ).all().map { row in
            SignInCount(
                kind: try row.decode(column: "kind", as: String.self),
                outcome: try row.decode(column: "outcome", as: String.self),
                count: Int(try row.decode(column: "n", as: Int64.self)))
        }
    }

    package func failingMails() async throws -> Int {
        let row = try await db.raw(
            """
            SELECT COUNT(*) AS n FROM mail_outbox
            WHERE sent_at IS NULL AND gave_up_at IS NULL AND attempts > 0
            """
        ).first()
        return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
    }
}
