import SesameCore

/// The groups feature's part of the one database (migration 18).
///
/// `account_groups`: one row per group, its `slug` unique (`GroupSlugs`: checked before it is stored, never folded),
/// a display name, and `claims`, a JSON object of custom claims the group adds under the `groups` scope (`{}` when
/// none). `group_members`: who is in which group and since when; an account table, so deleting the account removes
/// its memberships, and removing a group removes its memberships in the same transaction.
///
/// The same migration gives the identity provider's clients the two settings that name groups or claims:
/// `allowed_groups` (a JSON list of slugs; NULL: anyone who can sign in may use the client) and `id_token_claims`
/// (1: the scope claims go in the ID token as well as UserInfo; 1 for the clients already registered, whose ID
/// tokens always carried them, 0 for new ones unless asked). Both have defaults, so nodes of the version before
/// keep registering and reading clients (`SchemaChange.expand`). And `users.updated_at`, when the profile the
/// `profile` scope gives (the display name) last changed (NULL until it does: the account's creation stands in).
package enum GroupsSchema {
    package static let part = SchemaPart(
        name: "groups",
        migrations: [
            Migration(
                version: 18,
                name: "groups and memberships; clients' allowed groups and claims in the ID token; profile updated_at",
                statements: [
                    // `users` first: its strongest lock is taken before the memberships' foreign key takes a weaker
                    // one, so the migration never upgrades a lock on it while another version's sign-ups wait
                    // (that upgrade deadlocked with them on PostgreSQL).
                    "ALTER TABLE users ADD COLUMN updated_at BIGINT",
                    """
                    CREATE TABLE account_groups (
                        id TEXT PRIMARY KEY,
                        slug TEXT NOT NULL,
                        name TEXT NOT NULL,
                        claims TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE UNIQUE INDEX account_groups_slug ON account_groups (slug)",
                    """
                    CREATE TABLE group_members (
                        group_id TEXT NOT NULL REFERENCES account_groups(id) ON DELETE CASCADE,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        added_at BIGINT NOT NULL,
                        PRIMARY KEY (group_id, user_id)
                    )
                    """,
                    "CREATE INDEX group_members_user ON group_members (user_id)",
                    "ALTER TABLE oauth_clients ADD COLUMN allowed_groups TEXT",
                    "ALTER TABLE oauth_clients ADD COLUMN id_token_claims BIGINT NOT NULL DEFAULT 0",
                    // Clients registered before: their ID tokens carried the scope claims, and keep doing so.
                    "UPDATE oauth_clients SET id_token_claims = 1",
                ]
            )
        ],
        accountTables: ["group_members"])
}
