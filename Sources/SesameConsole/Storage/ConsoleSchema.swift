import SesameCore

/// The console's part of the one database (migration 22): the nodes seen, and the index the Overview's sign-in
/// figures read.
///
/// `node_heartbeats` holds one row per running `sesame serve` (`NodeHeartbeats`): `id` is random per process,
/// `version` what `sesame --version` says, `started_at` and `last_seen_at` in Unix ms; `expires_at` is a day after
/// `last_seen_at`, so the purge deletes a node that stopped a day ago. `audit_events_kind_at` lets the Overview count
/// today's sign-ins by kind and outcome from the index alone, however long the audit log is; with the event's id
/// after the time, the audit log's filter by kind (`SesameAdminTokens`) pages through the same index in order.
package enum ConsoleSchema {
    package static let part = SchemaPart(
        name: "console",
        migrations: [
            Migration(
                version: 22,
                name: "console: the nodes seen, and audit events by kind and time",
                statements: [
                    """
                    CREATE TABLE node_heartbeats (
                        id TEXT PRIMARY KEY,
                        version TEXT NOT NULL,
                        started_at BIGINT NOT NULL,
                        last_seen_at BIGINT NOT NULL,
                        expires_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX node_heartbeats_expires ON node_heartbeats (expires_at)",
                    "CREATE INDEX audit_events_kind_at ON audit_events (kind, at, id, outcome)",
                ]
            )
        ],
        accountTables: [],
        expiring: [ExpiringRows(table: "node_heartbeats")])
}
