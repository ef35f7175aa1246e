import Foundation
import SQLKit
import SesameCore

/// The identity provider's part of the one database: clients, signing keys, grants with their codes, refresh tokens
/// and consents, device codes and spent client-assertion ids (migrations 4, 6, 8, 9 and 15; migrations 11 and 13,
/// which touch these tables and the core's together, stay in the core's list as they landed). A person's grants end
/// in the transaction that ends their sessions; expired grants, device codes and assertion ids go in the purge
/// (a grant takes its codes and refresh tokens with it); signing keys are sealed at rest.
package enum IdentityProviderSchema {
    package static let part = SchemaPart(
        name: "identity provider",
        migrations: migrations,
        accountTables: ["oauth_consents", "oauth_grants"],
        // A grant past its absolute end takes its codes and refresh tokens with it (ON DELETE CASCADE); spent
        // codes and refresh tokens stay until then, so a replay is still recognised and still revokes.
        expiring: [
            ExpiringRows(table: "oauth_grants"), ExpiringRows(table: "oauth_device_codes"),
            ExpiringRows(table: "oauth_assertion_ids"),
        ],
        sealedColumns: [
            SealedColumn(purpose: .signingKey, table: "oauth_signing_keys", rowID: "kid", column: "private_key")
        ],
        whenSessionsEnd: [{ userID, db, at in try await SQLStore.revokeGrants(userID: userID, db, at: at) }]
    )

    private static let migrations: [Migration] = [
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
            version: 15,
            name: "a grant without offline_access remembers the session it came from",
            // Its tokens work only while that session (sessions.id, unique) is signed in. NULL: a grant with
            // offline_access, or one from before this migration (or from a node of an earlier version), tied to none.
            statements: ["ALTER TABLE oauth_grants ADD COLUMN session_id TEXT"]
        ),
    ]
}

extension FieldCipher.Purpose {
    /// OpenID Connect token-signing private keys (the "user id" of their associated data is the key id).
    package static let signingKey = Self(rawValue: "signing_key")
}

/// What the identity provider reads and writes: accounts and sessions from the core's store, and its own clients,
/// keys, grants and device codes.
package typealias IdentityProviderStorage = DeviceCodeStore & IdentityProviderStore & Store
