import SesameCore

/// The address feature's part of the one database (migration 17): one row per account that gave an address.
///
/// `address` is the verified address (as typed) and `address_key` its lower-cased form, unique across accounts
/// (`email_addresses_key`; NULL while nothing is verified). Beside it, a pending new address waits for its
/// verification: `pending` and `pending_key`, the code's MAC (`pending_code`, HMAC-SHA-256 under the server secret
/// of the account, the address's key and the code; never the code), the link token's SHA-256 (`pending_token`,
/// unique: a link finds its row by it) and when both end (`pending_expires_at`). A pending address is not unique:
/// anyone may type any address, and only its verification decides.
///
/// Migration 21 adds `recovery_links` (`RecoveryLinks`): a single-use link an administrator made for a person, found
/// by its public `id` and checked against the SHA-256 of its secret half (`secret_hash`, never the secret), how it
/// was delivered (`mail` or `show`), who made it (the audit log's actor), when it ends and when it was used. The
/// purge deletes rows past `expires_at`; deleting the account deletes them.
package enum EmailSchema {
    package static let part = SchemaPart(
        name: "email addresses",
        migrations: [
            Migration(
                version: 17,
                name: "email addresses: one per account, verified and pending, unique without regard to case",
                statements: [
                    """
                    CREATE TABLE email_addresses (
                        user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                        address TEXT,
                        address_key TEXT,
                        verified_at BIGINT,
                        pending TEXT,
                        pending_key TEXT,
                        pending_code {bytes},
                        pending_token {bytes},
                        pending_expires_at BIGINT,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE UNIQUE INDEX email_addresses_key ON email_addresses (address_key)",
                    "CREATE UNIQUE INDEX email_addresses_token ON email_addresses (pending_token)",
                ]
            ),
            Migration(
                version: 21,
                name: "recovery links: single-use links an administrator makes for a person",
                statements: [
                    """
                    CREATE TABLE recovery_links (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        secret_hash {bytes} NOT NULL,
                        delivery TEXT NOT NULL,
                        created_by TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        expires_at BIGINT NOT NULL,
                        used_at BIGINT
                    )
                    """,
                    "CREATE INDEX recovery_links_user ON recovery_links (user_id)",
                    "CREATE INDEX recovery_links_expires ON recovery_links (expires_at)",
                ]
            ),
        ],
        accountTables: ["email_addresses", "recovery_links"],
        expiring: [ExpiringRows(table: "recovery_links")])
}
