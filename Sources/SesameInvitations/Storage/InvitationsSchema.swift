import SesameCore

/// The invitations feature's part of the one database (migration 19): one row per invitation.
///
/// `id` is the invitation's public half (16 hex characters, what `sesame invites list` and `revoke` name); the
/// link's secret half is kept only as its SHA-256 (`secret_hash`). `group_slugs` are the groups the new account
/// joins, comma-separated. An invitation is usable while `used_at` and `revoked_at` are NULL and `expires_at` is
/// ahead; `used_by` is the account made with it. The purge deletes rows past `expires_at`.
package enum InvitationsSchema {
    package static let part = SchemaPart(
        name: "invitations",
        migrations: [
            Migration(
                version: 19,
                name: "invitations: single-use sign-up links, their groups and address",
                statements: [
                    """
                    CREATE TABLE invitations (
                        id TEXT PRIMARY KEY,
                        secret_hash {bytes} NOT NULL,
                        email TEXT,
                        group_slugs TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        expires_at BIGINT NOT NULL,
                        used_at BIGINT,
                        used_by TEXT REFERENCES users(id) ON DELETE SET NULL,
                        revoked_at BIGINT
                    )
                    """,
                    "CREATE INDEX invitations_expires ON invitations (expires_at)",
                ]
            )
        ],
        accountTables: [],
        expiring: [ExpiringRows(table: "invitations")])
}
