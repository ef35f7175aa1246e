import SesameCore

/// The admin tokens' part of the one database (migration 23).
///
/// `admin_tokens`: one row per admin API token. `id` is its public half (16 hex characters, what
/// `sesame admin-tokens list` and `revoke` name and the audit log cites); the token itself is kept only as its
/// SHA-256 (`token_hash`, unique: the gate finds a token by it). `scopes` are `AdminScope` words, comma-separated.
/// A token is live while `revoked_at` is NULL and `expires_at` is ahead; rows stay after either, so the list shows
/// what a token was. `last_used_at` is written at most once a minute per token.
///
/// The same migration gives the core's audit trail the index the console's audit log filters by account (the admin
/// API's `GET /api/admin/audit`, newest first with keyset paging): in time order with the event's id as the
/// tie-break; it replaces migration 1's `audit_events_user`, which it covers. The filter by kind reads migration 22's
/// `audit_events_kind_at` (kind, at, id, outcome).
/// Indexes only, so nodes of the version before keep writing (`SchemaChange.expand`).
package enum AdminTokensSchema {
    package static let part = SchemaPart(
        name: "admin tokens",
        migrations: [
            Migration(
                version: 23,
                name: "admin API tokens; the audit log's filter indexes",
                statements: [
                    """
                    CREATE TABLE admin_tokens (
                        id TEXT PRIMARY KEY,
                        name TEXT NOT NULL,
                        token_hash {bytes} NOT NULL,
                        scopes TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        expires_at BIGINT NOT NULL,
                        created_by TEXT NOT NULL,
                        last_used_at BIGINT,
                        revoked_at BIGINT
                    )
                    """,
                    "CREATE UNIQUE INDEX admin_tokens_hash ON admin_tokens (token_hash)",
                    "CREATE INDEX audit_events_user_at ON audit_events (user_id, at, id)",
                    // Every lookup by account is served by the new index, which leads with the same column.
                    "DROP INDEX audit_events_user",
                ]
            )
        ],
        accountTables: [])
}
