import Foundation
import PostgresKit
import SQLKit
import SQLiteKit
import WebAuthn

/// The one `Store` implementation, over sql-kit. Statements are written once in the SQL both engines accept
/// (`INSERT … ON CONFLICT`, `DELETE … RETURNING`, `UPDATE … WHERE <guard>`), so SQLite and PostgreSQL behave alike.
public struct SQLStore: Store {
    let engine: SQLEngine
    var db: any SQLDatabase { engine.sql }
    /// Seal TOTP secrets and phone numbers at rest (keys derived from the server secret).
    let ciphers: FieldCiphers

    /// Opens the store over a migrated engine, loading (or, on first start, generating) the server secret that
    /// the database sealing key comes from; `sealingKeys` (the sealing key file) adds keys held outside it.
    public static func open(engine: SQLEngine, now: Date, sealingKeys: SealingKeyFile? = nil) async throws -> SQLStore {
        let secret = try await loadServerSecret(engine.sql, named: ServerSecret.name, generate: ServerSecret.generate, now: now)
        if engine.kind == .sqlite {
            for statement in sqliteSignInStatements { try await engine.sql.raw(statement).run() }
        }
        return SQLStore(engine: engine, ciphers: FieldCiphers(serverSecret: secret, keys: sealingKeys))
    }

    init(engine: SQLEngine, ciphers: FieldCiphers) {
        self.engine = engine
        self.ciphers = ciphers
    }

    /// Inserts the named secret unless a row exists (another node may race: `ON CONFLICT DO NOTHING`), then reads it.
    static func loadServerSecret(
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

    /// SQLite: the verify step's three writes as one statement. On SQLite the cost of a sign-in is mostly the
    /// number of statements (each is a round trip through the thread pool), so rather than `BEGIN`, three
    /// statements and `COMMIT`, one `INSERT` into this connection's TEMP view runs them from its INSTEAD OF trigger.
    /// A statement is atomic in SQLite: when any of the three fails (e.g. the session's token hash exists) the
    /// statement is aborted and the writes it made so far are undone. TEMP objects live in the connection, not in
    /// the database file, so this is no schema change and is made again each time the store is opened.
    /// The statements are the same as `recordCredentialUse`, `appendAudit` and `createSession`.
    static let sqliteSignInStatements: [SQLQueryString] = [
        """
        CREATE TEMP VIEW IF NOT EXISTS passkey_sign_in (credential_id, sign_count, backed_up, last_used_at, audit_id, audit_at,
            audit_kind, audit_outcome, audit_user_id, audit_username, audit_client_address, audit_detail, token_hash, session_id,
            user_id, created_at, last_seen_at, expires_at, user_agent, method, authenticated_at)
        AS SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
        """,
        """
        CREATE TEMP TRIGGER IF NOT EXISTS passkey_sign_in_guarded INSTEAD OF INSERT ON passkey_sign_in BEGIN
            SELECT RAISE(ABORT, 'sesame: sign count did not grow') WHERE NOT EXISTS (SELECT 1 FROM credentials
                WHERE id = NEW.credential_id AND (sign_count < NEW.sign_count OR (sign_count = 0 AND NEW.sign_count = 0)));
            UPDATE credentials SET sign_count = NEW.sign_count, backed_up = NEW.backed_up, last_used_at = NEW.last_used_at
                WHERE id = NEW.credential_id;
            INSERT INTO audit_events (id, at, kind, outcome, user_id, username, client_address, detail) VALUES (NEW.audit_id,
                NEW.audit_at, NEW.audit_kind, NEW.audit_outcome, NEW.audit_user_id, NEW.audit_username, NEW.audit_client_address,
                NEW.audit_detail);
            INSERT INTO sessions (token_hash, id, user_id, created_at, last_seen_at, expires_at, user_agent, method, authenticated_at)
                VALUES (NEW.token_hash, NEW.session_id, NEW.user_id, NEW.created_at, NEW.last_seen_at, NEW.expires_at, NEW.user_agent,
                NEW.method, NEW.authenticated_at);
        END
        """,
    ]

    private static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "23505" }
        if let error = error as? SQLiteError {
            return error.reason == .constraint || error.reason == .constraintUniqueFailed || error.reason == .constraintPrimaryKeyFailed
        }
        return false
    }

    private func insert(_ query: SQLQueryString) async throws {
        do { try await db.raw(query).run() } catch where Self.isUniqueViolation(error) { throw StoreError.conflict }
    }

    public func ping() async throws {
        _ = try await db.raw("SELECT 1 AS one").all()
    }

    public func serverSecret(named name: String, generate: @Sendable () -> [UInt8], now: Date) async throws -> [UInt8] {
        try await Self.loadServerSecret(db, named: name, generate: generate, now: now)
    }

    // MARK: Users

    private static func user(_ row: any SQLRow) throws -> User { try user(row, prefix: "") }

    /// A user from a row whose user columns carry `prefix` (joins name them `u_id`, `u_username`, ...).
    private static func user(_ row: any SQLRow, prefix: String) throws -> User {
        User(
            id: try row.decode(column: prefix + "id", as: String.self),
            username: try row.decode(column: prefix + "username", as: String.self),
            displayName: try row.decode(column: prefix + "display_name", as: String.self),
            userHandle: [UInt8](try row.decode(column: prefix + "user_handle", as: Data.self)),
            disabled: try row.decode(column: prefix + "disabled", as: Int64.self) != 0,
            createdAt: Date(milliseconds: try row.decode(column: prefix + "created_at", as: Int64.self))
        )
    }

    private static let userColumns: SQLQueryString = "id, username, display_name, user_handle, disabled, created_at"

    public func createUser(_ user: User) async throws {
        try await insert(
            """
            INSERT INTO users (id, username, username_key, display_name, user_handle, disabled, created_at)
            VALUES (\(bind: user.id), \(bind: user.username), \(bind: Usernames.key(user.username)), \(bind: user.displayName),
                    \(bind: Data(user.userHandle)), \(bind: Int64(user.disabled ? 1 : 0)), \(bind: user.createdAt.milliseconds))
            """
        )
    }

    public func user(id: String) async throws -> User? {
        try await db.raw("SELECT \(Self.userColumns) FROM users WHERE id = \(bind: id)").first().map(Self.user)
    }

    public func user(usernameKey: String) async throws -> User? {
        // Stored keys come from validated usernames, which never hold control characters; PostgreSQL refuses
        // NUL in text outright, so such a lookup answers "no such user" without asking the database.
        guard !usernameKey.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
        return try await db.raw("SELECT \(Self.userColumns) FROM users WHERE username_key = \(bind: usernameKey)").first().map(Self.user)
    }

    public func user(userHandle: [UInt8]) async throws -> User? {
        try await db.raw("SELECT \(Self.userColumns) FROM users WHERE user_handle = \(bind: Data(userHandle))").first().map(Self.user)
    }

    public func users() async throws -> [User] {
        try await db.raw("SELECT \(Self.userColumns) FROM users ORDER BY username_key").all().map(Self.user)
    }

    public func setDisabled(userID: String, _ disabled: Bool) async throws -> Bool {
        let rows = try await db.raw(
            "UPDATE users SET disabled = \(bind: Int64(disabled ? 1 : 0)) WHERE id = \(bind: userID) RETURNING id"
        ).all()
        if disabled && !rows.isEmpty { _ = try await deleteSessions(userID: userID, keeping: nil) }
        return !rows.isEmpty
    }

    public func setDisplayName(userID: String, _ displayName: String) async throws -> Bool {
        let rows = try await db.raw(
            "UPDATE users SET display_name = \(bind: displayName) WHERE id = \(bind: userID) RETURNING id"
        ).all()
        return !rows.isEmpty
    }

    public func deleteUser(id: String) async throws -> Bool {
        // Children first: SQLite enforces ON DELETE CASCADE only with foreign_keys on, which is per connection.
        for table in ["credentials", "passwords", "totp", "recovery_codes", "recovery_code_sets", "sms", "sessions"] {
            try await db.raw("DELETE FROM \(ident: table) WHERE user_id = \(bind: id)").run()
        }
        try await db.raw("DELETE FROM challenges WHERE user_id = \(bind: id)").run()
        return !(try await db.raw("DELETE FROM users WHERE id = \(bind: id) RETURNING id").all()).isEmpty
    }

    // MARK: Credentials

    private static let credentialColumns: SQLQueryString = """
        id, user_id, public_key, sign_count, transports, aaguid, backup_eligible, backed_up, user_verified, \
        attestation_format, name, created_at, last_used_at
        """

    private static func credential(_ row: any SQLRow) throws -> StoredCredential {
        let transports = try row.decode(column: "transports", as: String.self)
        return StoredCredential(
            id: [UInt8](try row.decode(column: "id", as: Data.self)),
            userID: try row.decode(column: "user_id", as: String.self),
            publicKey: [UInt8](try row.decode(column: "public_key", as: Data.self)),
            signCount: UInt32(clamping: try row.decode(column: "sign_count", as: Int64.self)),
            transports: transports.split(separator: ",").map(String.init),
            aaguid: try row.decode(column: "aaguid", as: Data?.self).map { [UInt8]($0) },
            backupEligible: try row.decode(column: "backup_eligible", as: Int64.self) != 0,
            backedUp: try row.decode(column: "backed_up", as: Int64.self) != 0,
            userVerified: try row.decode(column: "user_verified", as: Int64.self) != 0,
            attestationFormat: try row.decode(column: "attestation_format", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: try row.decode(column: "last_used_at", as: Int64?.self).map(Date.init(milliseconds:))
        )
    }

    public func addCredential(_ c: StoredCredential) async throws {
        try await insert(
            """
            INSERT INTO credentials (\(Self.credentialColumns)) VALUES (
                \(bind: Data(c.id)), \(bind: c.userID), \(bind: Data(c.publicKey)), \(bind: Int64(c.signCount)),
                \(bind: c.transports.joined(separator: ",")), \(bind: c.aaguid.map { Data($0) }),
                \(bind: Int64(c.backupEligible ? 1 : 0)), \(bind: Int64(c.backedUp ? 1 : 0)), \(bind: Int64(c.userVerified ? 1 : 0)),
                \(bind: c.attestationFormat), \(bind: c.name), \(bind: c.createdAt.milliseconds), \(bind: c.lastUsedAt?.milliseconds))
            """
        )
    }

    public func credentials(userID: String) async throws -> [StoredCredential] {
        try await db.raw("SELECT \(Self.credentialColumns) FROM credentials WHERE user_id = \(bind: userID) ORDER BY created_at, id")
            .all().map(Self.credential)
    }

    public func credential(id: [UInt8]) async throws -> StoredCredential? {
        try await db.raw("SELECT \(Self.credentialColumns) FROM credentials WHERE id = \(bind: Data(id))").first().map(Self.credential)
    }

    /// `credentialColumns` qualified with the table alias `c`, for joins.
    private static let joinedCredentialColumns: SQLQueryString = """
        c.id, c.user_id, c.public_key, c.sign_count, c.transports, c.aaguid, c.backup_eligible, c.backed_up, c.user_verified, \
        c.attestation_format, c.name, c.created_at, c.last_used_at
        """

    public func credentialWithUser(id: [UInt8]) async throws -> (credential: StoredCredential, user: User?)? {
        guard let row = try await db.raw(
            """
            SELECT \(Self.joinedCredentialColumns), u.id AS u_id, u.username AS u_username, u.display_name AS u_display_name,
                u.user_handle AS u_user_handle, u.disabled AS u_disabled, u.created_at AS u_created_at
            FROM credentials c LEFT JOIN users u ON u.id = c.user_id WHERE c.id = \(bind: Data(id))
            """
        ).first() else { return nil }
        let user = try row.decode(column: "u_id", as: String?.self) == nil ? nil : try Self.user(row, prefix: "u_")
        return (try Self.credential(row), user)
    }

    public func credentials(usernameKey: String) async throws -> [StoredCredential] {
        // As in `user(usernameKey:)`: a key with control characters names no account (PostgreSQL refuses NUL).
        guard !usernameKey.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return [] }
        return try await db.raw(
            """
            SELECT \(Self.joinedCredentialColumns) FROM users u JOIN credentials c ON c.user_id = u.id
            WHERE u.username_key = \(bind: usernameKey) ORDER BY c.created_at, c.id
            """
        ).all().map(Self.credential)
    }

    public func recordCredentialUse(id: [UInt8], signCount: UInt32, backedUp: Bool, at: Date) async throws -> Bool {
        !(try await db.raw("\(Self.credentialUse(id: id, signCount: signCount, backedUp: backedUp, at: at)) RETURNING id").all()).isEmpty
    }

    /// The guarded update of a credential's use: only while the stored count is below the one the authenticator
    /// reported, or both are 0 (an authenticator without a counter). Of two assertions carrying the same counter,
    /// the second finds the count already there and changes nothing, and a count never goes backwards.
    private static func credentialUse(id: [UInt8], signCount: UInt32, backedUp: Bool, at: Date) -> SQLQueryString {
        let count = Int64(signCount)
        return """
            UPDATE credentials SET sign_count = \(bind: count), backed_up = \(bind: Int64(backedUp ? 1 : 0)),
                last_used_at = \(bind: at.milliseconds)
            WHERE id = \(bind: Data(id)) AND (sign_count < \(bind: count) OR (sign_count = 0 AND \(bind: count) = 0))
            """
    }

    /// The message the SQLite sign-in trigger aborts with when the sign count guard fails.
    static let signCountGuardMessage = "sesame: sign count did not grow"

    public func recordPasskeySignIn(
        credentialID: [UInt8], signCount: UInt32, backedUp: Bool, at: Date, audit: AuditEvent, sessionTokenHash: [UInt8],
        session: SessionRecord
    ) async throws -> Bool {
        do {
            switch engine.kind {
            case .postgres:
                let use = Self.credentialUse(id: credentialID, signCount: signCount, backedUp: backedUp, at: at)
                let e = audit
                let s = session
                // One statement, so one round trip and one commit: PostgreSQL runs every data-modifying WITH
                // clause to completion, and the statement as a whole succeeds or changes nothing. The audit event
                // and the session are written only from the row the guarded update changed: a concurrent
                // assertion with the same counter waits for this one's row lock, then finds the guard false.
                let rows = try await db.raw(
                    """
                    WITH used AS (\(use) RETURNING id),
                    audited AS (
                        INSERT INTO audit_events (id, at, kind, outcome, user_id, username, client_address, detail)
                        SELECT \(bind: e.id), \(bind: e.at.milliseconds), \(bind: e.kind), \(bind: e.outcome), \(bind: e.userID),
                            \(bind: e.username), \(bind: e.clientAddress), \(bind: e.detail) FROM used RETURNING id)
                    INSERT INTO sessions (token_hash, id, user_id, created_at, last_seen_at, expires_at, user_agent, method, authenticated_at)
                    SELECT \(bind: Data(sessionTokenHash)), \(bind: s.id), \(bind: s.userID), \(bind: s.createdAt.milliseconds),
                        \(bind: s.lastSeenAt.milliseconds), \(bind: s.expiresAt.milliseconds), \(bind: s.userAgent), \(bind: s.method),
                        \(bind: s.authenticatedAt.milliseconds) FROM used
                    RETURNING id
                    """
                ).all()
                return !rows.isEmpty
            case .sqlite:
                let e = audit
                let s = session
                try await db.raw(
                    """
                    INSERT INTO passkey_sign_in VALUES (\(bind: Data(credentialID)), \(bind: Int64(signCount)), \(bind: Int64(backedUp ? 1 : 0)),
                        \(bind: at.milliseconds), \(bind: e.id), \(bind: e.at.milliseconds), \(bind: e.kind), \(bind: e.outcome), \(bind: e.userID),
                        \(bind: e.username), \(bind: e.clientAddress), \(bind: e.detail), \(bind: Data(sessionTokenHash)), \(bind: s.id),
                        \(bind: s.userID), \(bind: s.createdAt.milliseconds), \(bind: s.lastSeenAt.milliseconds), \(bind: s.expiresAt.milliseconds),
                        \(bind: s.userAgent), \(bind: s.method), \(bind: s.authenticatedAt.milliseconds))
                    """
                ).run()
                return true
            }
        } catch let error as SQLiteError where error.message.contains(Self.signCountGuardMessage) {
            return false
        } catch where Self.isUniqueViolation(error) {
            throw StoreError.conflict
        }
    }

    public func renameCredential(userID: String, id: [UInt8], name: String) async throws -> Bool {
        !(try await db.raw(
            "UPDATE credentials SET name = \(bind: name) WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID) RETURNING id"
        ).all()).isEmpty
    }

    /// On PostgreSQL the user row is locked first, so two concurrent removals cannot both see "another way in".
    private func lockUser(_ db: any SQLDatabase, _ userID: String) async throws {
        if engine.kind == .postgres {
            try await db.raw("SELECT id FROM users WHERE id = \(bind: userID) FOR UPDATE").run()
        }
    }

    public func deleteCredential(userID: String, id: [UInt8]) async throws -> RemovalOutcome {
        try await engine.withTransaction { [self] db in
            try await lockUser(db, userID)
            let deleted = try await db.raw(
                """
                DELETE FROM credentials WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID) AND (
                    EXISTS (SELECT 1 FROM passwords WHERE user_id = \(bind: userID))
                    OR (SELECT COUNT(*) FROM credentials WHERE user_id = \(bind: userID)) > 1)
                RETURNING id
                """
            ).all()
            if !deleted.isEmpty { return .removed }
            let exists = try await db.raw("SELECT id FROM credentials WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID)").first()
            return exists == nil ? .notFound : .lastWayIn
        }
    }

    // MARK: Password

    public func password(userID: String) async throws -> PasswordRecord? {
        guard let row = try await db.raw("SELECT hash, salt, log_n, r, p FROM passwords WHERE user_id = \(bind: userID)").first() else {
            return nil
        }
        return PasswordRecord(
            hash: [UInt8](try row.decode(column: "hash", as: Data.self)),
            salt: [UInt8](try row.decode(column: "salt", as: Data.self)),
            logN: try row.decode(column: "log_n", as: Int.self),
            r: try row.decode(column: "r", as: Int.self),
            p: try row.decode(column: "p", as: Int.self)
        )
    }

    public func setPassword(userID: String, _ record: PasswordRecord, at: Date) async throws {
        try await db.raw(
            """
            INSERT INTO passwords (user_id, hash, salt, log_n, r, p, updated_at)
            VALUES (\(bind: userID), \(bind: Data(record.hash)), \(bind: Data(record.salt)), \(bind: record.logN), \(bind: record.r),
                    \(bind: record.p), \(bind: at.milliseconds))
            ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, salt = excluded.salt, log_n = excluded.log_n,
                r = excluded.r, p = excluded.p, updated_at = excluded.updated_at
            """
        ).run()
    }

    public func deletePassword(userID: String) async throws -> RemovalOutcome {
        try await engine.withTransaction { [self] db in
            try await lockUser(db, userID)
            let deleted = try await db.raw(
                """
                DELETE FROM passwords WHERE user_id = \(bind: userID)
                    AND EXISTS (SELECT 1 FROM credentials WHERE user_id = \(bind: userID))
                RETURNING user_id
                """
            ).all()
            if !deleted.isEmpty { return .removed }
            let exists = try await db.raw("SELECT user_id FROM passwords WHERE user_id = \(bind: userID)").first()
            return exists == nil ? .notFound : .lastWayIn
        }
    }

    // MARK: TOTP

    public func totp(userID: String) async throws -> TOTPRecord? {
        guard let row = try await db.raw("SELECT secret, last_step, confirmed FROM totp WHERE user_id = \(bind: userID)").first() else {
            return nil
        }
        let sealed = [UInt8](try row.decode(column: "secret", as: Data.self))
        return TOTPRecord(
            secret: try ciphers.totp.open(sealed, userID: userID),
            lastStep: try row.decode(column: "last_step", as: Int64.self),
            confirmed: try row.decode(column: "confirmed", as: Int64.self) != 0,
            revision: sealed
        )
    }

    public func setPendingTOTP(userID: String, secret: [UInt8], at: Date) async throws {
        // Replacing a confirmed secret needs it disabled first; only an unconfirmed one is overwritten.
        try await db.raw(
            """
            INSERT INTO totp (user_id, secret, last_step, confirmed, created_at)
            VALUES (\(bind: userID), \(bind: Data(try ciphers.totp.seal(secret, userID: userID))), -1, 0, \(bind: at.milliseconds))
            ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, last_step = -1, created_at = excluded.created_at
                WHERE totp.confirmed = 0
            """
        ).run()
    }

    public func acceptTOTPStep(userID: String, step: Int64) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE totp SET last_step = \(bind: step)
            WHERE user_id = \(bind: userID) AND last_step < \(bind: step) AND confirmed = 1 RETURNING user_id
            """
        ).all()).isEmpty
    }

    public func confirmTOTP(userID: String, step: Int64, revision: [UInt8]) async throws -> Bool {
        // The secret column must still hold the sealed bytes the code was checked against: a setup started
        // meanwhile (a new random secret, sealed under a new nonce) makes this update change nothing.
        !(try await db.raw(
            """
            UPDATE totp SET last_step = \(bind: step), confirmed = 1
            WHERE user_id = \(bind: userID) AND confirmed = 0 AND secret = \(bind: Data(revision)) AND last_step < \(bind: step)
            RETURNING user_id
            """
        ).all()).isEmpty
    }

    public func deleteTOTP(userID: String) async throws -> Bool {
        !(try await db.raw("DELETE FROM totp WHERE user_id = \(bind: userID) RETURNING user_id").all()).isEmpty
    }

    // MARK: Recovery codes

    public func replaceRecoveryCodes(userID: String, salt: [UInt8], hashes: [[UInt8]], at: Date) async throws {
        try await engine.withTransaction { db in
            try await db.raw("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)").run()
            try await db.raw(
                """
                INSERT INTO recovery_code_sets (user_id, salt, created_at) VALUES (\(bind: userID), \(bind: Data(salt)), \(bind: at.milliseconds))
                ON CONFLICT (user_id) DO UPDATE SET salt = excluded.salt, created_at = excluded.created_at
                """
            ).run()
            for hash in hashes {
                try await db.raw("INSERT INTO recovery_codes (user_id, code_hash) VALUES (\(bind: userID), \(bind: Data(hash)))").run()
            }
        }
    }

    public func recoveryCodes(userID: String) async throws -> (salt: [UInt8], unused: [[UInt8]])? {
        guard let set = try await db.raw("SELECT salt FROM recovery_code_sets WHERE user_id = \(bind: userID)").first() else { return nil }
        let rows = try await db.raw("SELECT code_hash FROM recovery_codes WHERE user_id = \(bind: userID) AND used_at IS NULL").all()
        return (
            [UInt8](try set.decode(column: "salt", as: Data.self)),
            try rows.map { [UInt8](try $0.decode(column: "code_hash", as: Data.self)) }
        )
    }

    public func useRecoveryCode(userID: String, hash: [UInt8], at: Date) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE recovery_codes SET used_at = \(bind: at.milliseconds)
            WHERE user_id = \(bind: userID) AND code_hash = \(bind: Data(hash)) AND used_at IS NULL RETURNING user_id
            """
        ).all()).isEmpty
    }

    public func unusedRecoveryCodeCount(userID: String) async throws -> Int {
        let row = try await db.raw("SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = \(bind: userID) AND used_at IS NULL").first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    public func deleteRecoveryCodes(userID: String) async throws {
        try await db.raw("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)").run()
        try await db.raw("DELETE FROM recovery_code_sets WHERE user_id = \(bind: userID)").run()
    }

    // MARK: SMS

    public func sms(userID: String) async throws -> SMSRecord? {
        guard let row = try await db.raw("SELECT phone, confirmed FROM sms WHERE user_id = \(bind: userID)").first() else { return nil }
        return SMSRecord(
            phone: try ciphers.sms.openText(try row.decode(column: "phone", as: String.self), userID: userID),
            confirmed: try row.decode(column: "confirmed", as: Int64.self) != 0
        )
    }

    public func setSMS(userID: String, phone: String, confirmed: Bool, at: Date) async throws {
        try await db.raw(
            """
            INSERT INTO sms (user_id, phone, confirmed, created_at) VALUES (\(bind: userID), \(bind: try ciphers.sms.sealText(phone, userID: userID)), \(bind: Int64(confirmed ? 1 : 0)), \(bind: at.milliseconds))
            ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone, confirmed = excluded.confirmed, created_at = excluded.created_at
            """
        ).run()
    }

    /// The purpose of the challenge row that holds a pending phone-number change.
    static let phoneChangePurpose = "sms_setup"

    public func beginPhoneChange(userID: String, phone: String, challengeID: [UInt8], expiresAt: Date) async throws {
        let sealed = Base64URL.encode(try ciphers.sms.seal(Array(phone.utf8), userID: userID))
        try await engine.withTransaction { db in
            try await db.raw("DELETE FROM challenges WHERE user_id = \(bind: userID) AND purpose = \(bind: Self.phoneChangePurpose)").run()
            try await db.raw(
                """
                INSERT INTO challenges (id, purpose, binding, user_id, payload, expires_at) VALUES (\(bind: Data(challengeID)),
                    \(bind: Self.phoneChangePurpose), \(bind: Data()), \(bind: userID), \(bind: sealed), \(bind: expiresAt.milliseconds))
                """
            ).run()
        }
    }

    public func completePhoneChange(userID: String, challengeID: [UInt8], now: Date) async throws -> String? {
        try await engine.withTransaction { [self] db in
            guard
                let row = try await db.raw(
                    """
                    DELETE FROM challenges WHERE id = \(bind: Data(challengeID)) AND purpose = \(bind: Self.phoneChangePurpose)
                        AND user_id = \(bind: userID) AND expires_at > \(bind: now.milliseconds)
                    RETURNING payload
                    """
                ).first()
            else { return nil }
            guard let sealed = try? Base64URL.decode(try row.decode(column: "payload", as: String.self)) else {
                throw StoreError.undecryptable(FieldCipher.Purpose.sms.rawValue)
            }
            let phone = String(decoding: try ciphers.sms.open(sealed, userID: userID), as: UTF8.self)
            try await db.raw(
                """
                INSERT INTO sms (user_id, phone, confirmed, created_at) VALUES (\(bind: userID), \(bind: try ciphers.sms.sealText(phone, userID: userID)), 1, \(bind: now.milliseconds))
                ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone, confirmed = 1, created_at = excluded.created_at
                """
            ).run()
            return phone
        }
    }

    public func deleteSMS(userID: String) async throws -> Bool {
        !(try await db.raw("DELETE FROM sms WHERE user_id = \(bind: userID) RETURNING user_id").all()).isEmpty
    }

    // MARK: Sealed secrets

    /// One page of sealed values: (user id, sealed bytes), ordered by user id, after `after`.
    private func sealedPage(_ purpose: FieldCipher.Purpose, after: String, limit: Int) async throws -> [(String, [UInt8])] {
        switch purpose {
        case .totp:
            return try await db.raw(
                "SELECT user_id, secret FROM totp WHERE user_id > \(bind: after) ORDER BY user_id LIMIT \(bind: limit)"
            ).all().map { (try $0.decode(column: "user_id", as: String.self), [UInt8](try $0.decode(column: "secret", as: Data.self))) }
        case .sms:
            return try await db.raw(
                "SELECT user_id, phone FROM sms WHERE user_id > \(bind: after) ORDER BY user_id LIMIT \(bind: limit)"
            ).all().map { (try $0.decode(column: "user_id", as: String.self), Array(try $0.decode(column: "phone", as: String.self).utf8)) }
        }
    }

    /// Calls `body` with every sealed value of a purpose (bytes as stored: the phone column's base64url text as UTF-8),
    /// reading a page at a time.
    private func forEachSealed(_ purpose: FieldCipher.Purpose, _ body: (String, [UInt8]) async throws -> Void) async throws {
        var after = ""
        while true {
            let page = try await sealedPage(purpose, after: after, limit: 500)
            for (userID, stored) in page { try await body(userID, stored) }
            guard let last = page.last, page.count == 500 else { return }
            after = last.0
        }
    }

    private func cipher(_ purpose: FieldCipher.Purpose) -> FieldCipher {
        purpose == .totp ? ciphers.totp : ciphers.sms
    }

    private func sealedUnder(_ purpose: FieldCipher.Purpose, _ stored: [UInt8]) -> FieldCipher.SealedUnder {
        purpose == .totp ? ciphers.totp.sealedUnder(stored) : ciphers.sms.sealedUnder(text: String(decoding: stored, as: UTF8.self))
    }

    public func sealedSecretCounts() async throws -> [SealedSecretCount] {
        var counts: [SealedSecretCount] = []
        for purpose in FieldCipher.Purpose.allCases {
            var byKey: [FieldCipher.SealedUnder: Int] = [:]
            try await forEachSealed(purpose) { _, stored in byKey[sealedUnder(purpose, stored), default: 0] += 1 }
            for (key, count) in byKey {
                let name: String
                switch key {
                case .database: name = "database"
                case .file(let id): name = SealingKey.hex(id)
                case .unrecognised: name = "unrecognised"
                }
                counts.append(SealedSecretCount(purpose: purpose.rawValue, key: name, state: cipher(purpose).state(of: key), count: count))
            }
        }
        return counts.sorted { ($0.purpose, $0.key) < ($1.purpose, $1.key) }
    }

    public func resealSecrets() async throws -> ResealReport {
        var report = ResealReport()
        for purpose in FieldCipher.Purpose.allCases {
            try await forEachSealed(purpose) { userID, stored in
                do {
                    let updated: Bool
                    switch purpose {
                    case .totp:
                        guard let new = try ciphers.totp.resealed(stored, userID: userID) else { report.current += 1; return }
                        updated = !(try await db.raw(
                            "UPDATE totp SET secret = \(bind: Data(new)) WHERE user_id = \(bind: userID) AND secret = \(bind: Data(stored)) RETURNING user_id"
                        ).all()).isEmpty
                    case .sms:
                        let text = String(decoding: stored, as: UTF8.self)
                        guard let new = try ciphers.sms.resealedText(text, userID: userID) else { report.current += 1; return }
                        updated = !(try await db.raw(
                            "UPDATE sms SET phone = \(bind: new) WHERE user_id = \(bind: userID) AND phone = \(bind: text) RETURNING user_id"
                        ).all()).isEmpty
                    }
                    if updated { report.resealed += 1 } else { report.changedMeanwhile += 1 }
                } catch StoreError.unknownSealingKey(_, let keyID) {
                    report.failures.append("\(purpose.rawValue) of user \(userID): sealed under file key \(keyID), which is not in the key file")
                } catch StoreError.undecryptable {
                    report.failures.append("\(purpose.rawValue) of user \(userID): fails authentication (damaged or moved)")
                }
            }
        }
        return report
    }

    // MARK: Sessions

    private static let sessionColumns: SQLQueryString = "id, user_id, created_at, last_seen_at, expires_at, user_agent, method, authenticated_at"

    private static func session(_ row: any SQLRow) throws -> SessionRecord {
        SessionRecord(
            id: try row.decode(column: "id", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            lastSeenAt: Date(milliseconds: try row.decode(column: "last_seen_at", as: Int64.self)),
            expiresAt: Date(milliseconds: try row.decode(column: "expires_at", as: Int64.self)),
            userAgent: try row.decode(column: "user_agent", as: String.self),
            method: try row.decode(column: "method", as: String.self),
            authenticatedAt: Date(milliseconds: try row.decode(column: "authenticated_at", as: Int64.self))
        )
    }

    public func createSession(tokenHash: [UInt8], _ s: SessionRecord) async throws {
        try await insert(Self.sessionInsert(tokenHash: tokenHash, s))
    }

    private static func sessionInsert(tokenHash: [UInt8], _ s: SessionRecord) -> SQLQueryString {
        """
        INSERT INTO sessions (token_hash, \(Self.sessionColumns)) VALUES (\(bind: Data(tokenHash)), \(bind: s.id), \(bind: s.userID),
            \(bind: s.createdAt.milliseconds), \(bind: s.lastSeenAt.milliseconds), \(bind: s.expiresAt.milliseconds),
            \(bind: s.userAgent), \(bind: s.method), \(bind: s.authenticatedAt.milliseconds))
        """
    }

    public func session(tokenHash: [UInt8], now: Date) async throws -> SessionRecord? {
        try await db.raw(
            "SELECT \(Self.sessionColumns) FROM sessions WHERE token_hash = \(bind: Data(tokenHash)) AND expires_at > \(bind: now.milliseconds)"
        ).first().map(Self.session)
    }

    public func touchSession(tokenHash: [UInt8], at: Date) async throws {
        try await db.raw("UPDATE sessions SET last_seen_at = \(bind: at.milliseconds) WHERE token_hash = \(bind: Data(tokenHash))").run()
    }

    public func markReauthenticated(tokenHash: [UInt8], method: String, at: Date) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE sessions SET authenticated_at = \(bind: at.milliseconds), method = \(bind: method), last_seen_at = \(bind: at.milliseconds)
            WHERE token_hash = \(bind: Data(tokenHash)) RETURNING id
            """
        ).all()).isEmpty
    }

    public func sessions(userID: String, now: Date) async throws -> [SessionRecord] {
        try await db.raw(
            "SELECT \(Self.sessionColumns) FROM sessions WHERE user_id = \(bind: userID) AND expires_at > \(bind: now.milliseconds) ORDER BY created_at, id"
        ).all().map(Self.session)
    }

    public func deleteSession(userID: String, id: String) async throws -> Bool {
        !(try await db.raw("DELETE FROM sessions WHERE user_id = \(bind: userID) AND id = \(bind: id) RETURNING id").all()).isEmpty
    }

    public func deleteSessions(userID: String, keeping: String?) async throws -> Int {
        let rows: [any SQLRow]
        if let keeping {
            rows = try await db.raw("DELETE FROM sessions WHERE user_id = \(bind: userID) AND id <> \(bind: keeping) RETURNING id").all()
        } else {
            rows = try await db.raw("DELETE FROM sessions WHERE user_id = \(bind: userID) RETURNING id").all()
        }
        return rows.count
    }

    // MARK: Challenges

    public func insertChallenge(id: [UInt8], binding: [UInt8], _ c: ChallengeRecord) async throws {
        try await insert(
            """
            INSERT INTO challenges (id, purpose, binding, user_id, payload, expires_at) VALUES (\(bind: Data(id)), \(bind: c.purpose),
                \(bind: Data(binding)), \(bind: c.userID), \(bind: c.payload), \(bind: c.expiresAt.milliseconds))
            """
        )
    }

    public func startCeremony(
        bucket: String, limit: Int, now: Date, window: TimeInterval, challengeID: [UInt8], binding: [UInt8], _ c: ChallengeRecord
    ) async throws -> (count: Int, windowStart: Date) {
        let count = Self.failureUpsert(bucket: bucket, now: now, window: window)
        let row: (any SQLRow)?
        do {
            switch engine.kind {
            case .postgres:
                // One statement (one round trip, one commit): the challenge row is inserted only from a count row
                // within the limit, and the count is taken under the bucket's row lock, as in `recordFailure`.
                row = try await db.raw(
                    """
                    WITH counted AS (\(count)),
                    stored AS (
                        INSERT INTO challenges (id, purpose, binding, user_id, payload, expires_at)
                        SELECT \(bind: Data(challengeID)), \(bind: c.purpose), \(bind: Data(binding)), \(bind: c.userID), \(bind: c.payload),
                            \(bind: c.expiresAt.milliseconds)
                        FROM counted WHERE counted.failures <= \(bind: Int64(limit)))
                    SELECT window_start, failures FROM counted
                    """
                ).first()
            case .sqlite:
                // Two statements without a transaction (on SQLite a sign-in's cost is mostly its statement count):
                // the count is atomic on its own, and the challenge is stored only after a count within the limit.
                // Interrupted between the two, a start is counted that stored nothing, which errs on the safe side.
                row = try await db.raw(count).first()
                if let row, try row.decode(column: "failures", as: Int.self) <= limit {
                    try await insertChallenge(id: challengeID, binding: binding, c)
                }
            }
        } catch where Self.isUniqueViolation(error) {
            throw StoreError.conflict
        }
        guard let row else { throw DatabaseError("rate limit upsert returned nothing") }
        return (
            try row.decode(column: "failures", as: Int.self),
            Date(milliseconds: try row.decode(column: "window_start", as: Int64.self))
        )
    }

    private static func challenge(_ row: any SQLRow) throws -> ChallengeRecord {
        ChallengeRecord(
            purpose: try row.decode(column: "purpose", as: String.self),
            userID: try row.decode(column: "user_id", as: String?.self),
            payload: try row.decode(column: "payload", as: String.self),
            expiresAt: Date(milliseconds: try row.decode(column: "expires_at", as: Int64.self))
        )
    }

    public func consumeChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws -> ChallengeRecord? {
        try await db.raw(
            """
            DELETE FROM challenges WHERE id = \(bind: Data(id)) AND purpose = \(bind: purpose) AND binding = \(bind: Data(binding))
                AND expires_at > \(bind: now.milliseconds)
            RETURNING purpose, user_id, payload, expires_at
            """
        ).first().map(Self.challenge)
    }

    public func peekChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws -> ChallengeRecord? {
        try await db.raw(
            """
            SELECT purpose, user_id, payload, expires_at FROM challenges WHERE id = \(bind: Data(id)) AND purpose = \(bind: purpose)
                AND binding = \(bind: Data(binding)) AND expires_at > \(bind: now.milliseconds)
            """
        ).first().map(Self.challenge)
    }

    public func deleteChallenges(userID: String, purpose: String) async throws {
        try await db.raw("DELETE FROM challenges WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose)").run()
    }

    public func deleteChallenge(id: [UInt8]) async throws {
        try await db.raw("DELETE FROM challenges WHERE id = \(bind: Data(id))").run()
    }

    // MARK: Rate limits

    public func failures(bucket: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowStart: Date) {
        let windowMs = Int64(window * 1000)
        guard let row = try await db.raw("SELECT window_start, failures FROM rate_limits WHERE bucket = \(bind: bucket)").first() else {
            return (0, now)
        }
        let start = try row.decode(column: "window_start", as: Int64.self)
        if start + windowMs <= now.milliseconds { return (0, now) }
        return (try row.decode(column: "failures", as: Int.self), Date(milliseconds: start))
    }

    /// Adds one failure to the bucket, starting a new window if the old one ended; returns `window_start, failures`.
    /// One statement: atomic on both engines, so concurrent failures on several nodes all count.
    private static func failureUpsert(bucket: String, now: Date, window: TimeInterval) -> SQLQueryString {
        let nowMs = now.milliseconds
        let expired = nowMs - Int64(window * 1000)
        return """
            INSERT INTO rate_limits (bucket, window_start, failures) VALUES (\(bind: bucket), \(bind: nowMs), 1)
            ON CONFLICT (bucket) DO UPDATE SET
                failures = CASE WHEN rate_limits.window_start <= \(bind: expired) THEN 1 ELSE rate_limits.failures + 1 END,
                window_start = CASE WHEN rate_limits.window_start <= \(bind: expired) THEN \(bind: nowMs) ELSE rate_limits.window_start END
            RETURNING window_start, failures
            """
    }

    public func recordFailure(bucket: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowStart: Date) {
        guard let row = try await db.raw(Self.failureUpsert(bucket: bucket, now: now, window: window)).first() else {
            throw DatabaseError("rate limit upsert returned nothing")
        }
        return (
            try row.decode(column: "failures", as: Int.self),
            Date(milliseconds: try row.decode(column: "window_start", as: Int64.self))
        )
    }

    public func clearFailures(bucket: String) async throws {
        try await db.raw("DELETE FROM rate_limits WHERE bucket = \(bind: bucket)").run()
    }

    public func forgiveFailure(bucket: String) async throws {
        try await db.raw("UPDATE rate_limits SET failures = failures - 1 WHERE bucket = \(bind: bucket) AND failures > 0").run()
    }

    // MARK: Audit

    public func appendAudit(_ e: AuditEvent) async throws {
        try await db.raw(Self.auditInsert(e)).run()
    }

    private static func auditInsert(_ e: AuditEvent) -> SQLQueryString {
        """
        INSERT INTO audit_events (id, at, kind, outcome, user_id, username, client_address, detail) VALUES (\(bind: e.id),
            \(bind: e.at.milliseconds), \(bind: e.kind), \(bind: e.outcome), \(bind: e.userID), \(bind: e.username),
            \(bind: e.clientAddress), \(bind: e.detail))
        """
    }

    public func auditEvents(userID: String?, limit: Int) async throws -> [AuditEvent] {
        let rows: [any SQLRow]
        let columns: SQLQueryString = "id, at, kind, outcome, user_id, username, client_address, detail"
        if let userID {
            rows = try await db.raw(
                "SELECT \(columns) FROM audit_events WHERE user_id = \(bind: userID) ORDER BY at DESC, id LIMIT \(literal: max(1, limit))"
            ).all()
        } else {
            rows = try await db.raw("SELECT \(columns) FROM audit_events ORDER BY at DESC, id LIMIT \(literal: max(1, limit))").all()
        }
        return try rows.map { row in
            AuditEvent(
                id: try row.decode(column: "id", as: String.self),
                at: Date(milliseconds: try row.decode(column: "at", as: Int64.self)),
                kind: try row.decode(column: "kind", as: String.self),
                outcome: try row.decode(column: "outcome", as: String.self),
                userID: try row.decode(column: "user_id", as: String?.self),
                username: try row.decode(column: "username", as: String?.self),
                clientAddress: try row.decode(column: "client_address", as: String.self),
                detail: try row.decode(column: "detail", as: String.self)
            )
        }
    }

    public func purgeExpired(now: Date, rateLimitWindow: TimeInterval) async throws {
        let nowMs = now.milliseconds
        try await db.raw("DELETE FROM challenges WHERE expires_at <= \(bind: nowMs)").run()
        try await db.raw("DELETE FROM sessions WHERE expires_at <= \(bind: nowMs)").run()
        try await db.raw("DELETE FROM rate_limits WHERE window_start <= \(bind: nowMs - Int64(rateLimitWindow * 1000))").run()
    }
}
