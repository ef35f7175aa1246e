import SesameCore

/// The keychain sync tables, this feature's part of the one database (migration 5): ciphertext and public values
/// only. Deleting an account empties them, children before the vaults they belong to.
package enum KeychainSyncSchema {
    package static let part = SchemaPart(
        name: "keychain sync",
        migrations: [
            Migration(
                version: 5,
                name: "keychain sync: device enrollments, vaults, sealed records, key wraps, devices, joins, shares",
                // Ciphertext and public values only (docs/keychain.md, "Sync over sesame serve"): every blob is sealed
                // or HPKE-wrapped by the keychain, every ID is random, and the enrollment token is stored as its hash.
                statements: [
                    """
                    CREATE TABLE keychain_enrollments (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        device {bytes},
                        token_hash {bytes} NOT NULL,
                        created_at BIGINT NOT NULL,
                        last_used_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX keychain_enrollments_user ON keychain_enrollments (user_id, device)",
                    """
                    CREATE TABLE keychain_vaults (
                        user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                        vault {bytes} NOT NULL,
                        version BIGINT NOT NULL,
                        manifest {bytes} NOT NULL,
                        recovery_epoch BIGINT NOT NULL,
                        recovery {bytes} NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    """
                    CREATE TABLE keychain_records (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        id {bytes} NOT NULL,
                        version BIGINT NOT NULL,
                        blob {bytes} NOT NULL,
                        written_at BIGINT NOT NULL,
                        PRIMARY KEY (user_id, id)
                    )
                    """,
                    "CREATE INDEX keychain_records_written ON keychain_records (user_id, written_at)",
                    """
                    CREATE TABLE keychain_wraps (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        device {bytes} NOT NULL,
                        epoch BIGINT NOT NULL,
                        sender {bytes} NOT NULL,
                        blob {bytes} NOT NULL,
                        PRIMARY KEY (user_id, device, epoch)
                    )
                    """,
                    """
                    CREATE TABLE keychain_devices (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        id {bytes} NOT NULL,
                        public_key {bytes} NOT NULL,
                        position BIGINT NOT NULL,
                        PRIMARY KEY (user_id, id)
                    )
                    """,
                    """
                    CREATE TABLE keychain_join_requests (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        request {bytes} NOT NULL,
                        device {bytes} NOT NULL,
                        public_key {bytes} NOT NULL,
                        approval {bytes},
                        created_at BIGINT NOT NULL,
                        PRIMARY KEY (user_id, request)
                    )
                    """,
                    """
                    CREATE TABLE keychain_shares (
                        id {bytes} PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        sender {bytes} NOT NULL,
                        recipient {bytes} NOT NULL,
                        blob {bytes} NOT NULL,
                        created_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX keychain_shares_recipient ON keychain_shares (recipient)",
                    "CREATE INDEX keychain_shares_user ON keychain_shares (user_id, sender)",
                ]
            )
        ],
        accountTables: [
            "keychain_enrollments", "keychain_records", "keychain_wraps", "keychain_devices", "keychain_join_requests",
            "keychain_shares", "keychain_vaults",
        ])
}
