import Foundation
import PostgresKit
import SQLKit
import SesameCore

/// A registered passkey or security key.
public struct StoredCredential: Sendable, Equatable {
    public var id: [UInt8]
    public var userID: String
    /// COSE_Key bytes as the authenticator produced them.
    public var publicKey: [UInt8]
    public var signCount: UInt32
    public var transports: [String]
    public var aaguid: [UInt8]?
    public var backupEligible: Bool
    public var backedUp: Bool
    public var userVerified: Bool
    public var attestationFormat: String
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?

    public init(
        id: [UInt8], userID: String, publicKey: [UInt8], signCount: UInt32, transports: [String], aaguid: [UInt8]?,
        backupEligible: Bool, backedUp: Bool, userVerified: Bool, attestationFormat: String, name: String,
        createdAt: Date, lastUsedAt: Date?
    ) {
        self.id = id
        self.userID = userID
        self.publicKey = publicKey
        self.signCount = signCount
        self.transports = transports
        self.aaguid = aaguid
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.userVerified = userVerified
        self.attestationFormat = attestationFormat
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// What `CredentialStore.recordPasskeySignIn` did.
public enum PasskeySignInOutcome: Sendable, Equatable {
    case signedIn
    /// The stored count was not below the reported one (a cloned authenticator, or a concurrent assertion with the
    /// same counter got there first).
    case signCountRegression
    /// The sealed challenge was spent already (a replay, or a concurrent verify of the same challenge).
    case challengeSpent
}

/// What creating an account with its first way in did.
public enum AccountCreation: Sendable, Equatable {
    case created
    case usernameTaken
    case credentialExists
}

/// Passkeys and security keys.
public protocol CredentialStore {
    /// Passkey sign-up: the account, its passkey, the audit event and the first session, in one transaction; then
    /// `also` (an invitation spent and its groups joined: `SignUpInvitations.redeem`; the address a sign-up gave and
    /// its verification mail: `SignUpAddresses.begin`) in the same transaction, whose error undoes it all.
    func createAccount(
        _ user: User, credential: StoredCredential, audit: AuditEvent, sessionTokenHash: [UInt8],
        session: SessionRecord,
        also: (@Sendable (any SQLDatabase) async throws -> Void)?
    ) async throws -> AccountCreation

    /// `StoreError.conflict` when the credential ID is registered already.
    func addCredential(_ credential: StoredCredential) async throws
    func credentials(userID: String) async throws -> [StoredCredential]
    func credential(id: [UInt8]) async throws -> StoredCredential?
    /// The credential and its account (nil if the account row is missing), in one query.
    func credentialWithUser(id: [UInt8]) async throws -> (credential: StoredCredential, user: User?)?
    /// The credentials of the account with this username key, in one query; empty when there is no such account or
    /// it has none.
    func credentials(usernameKey: String) async throws -> [StoredCredential]
    /// Records a verified assertion: the sign count the authenticator reported, its backup state and the time, only
    /// while the stored count is below `signCount` or both are 0. False (nothing written) when the guard fails: a
    /// concurrent assertion with the same counter got there first, or the count would go backwards.
    func recordCredentialUse(id: [UInt8], signCount: UInt32, backedUp: Bool, at: Date) async throws -> Bool
    /// The writes of a verified passkey sign-in, all or nothing: records the credential's use (as
    /// `recordCredentialUse`, with the same guard), appends `audit` and creates the session (as `createSession`).
    /// With `spending`, the sealed challenge the assertion signed is recorded as spent in the same statement (as
    /// `spendChallenge`): `.challengeSpent`, with nothing written, when it was spent already. `.signCountRegression`,
    /// with nothing written but the spent challenge, when the sign count guard fails. A stored challenge is not
    /// part of it (`spending` nil): it was consumed on its own before the assertion was checked.
    func recordPasskeySignIn(
        credentialID: [UInt8], signCount: UInt32, backedUp: Bool, at: Date, audit: AuditEvent,
        sessionTokenHash: [UInt8], session: SessionRecord, spending: SpentChallenge?
    ) async throws -> PasskeySignInOutcome
    func renameCredential(userID: String, id: [UInt8], name: String) async throws -> Bool
    /// Refused (`lastWayIn`) when it is the account's last passkey and the account has no password.
    func deleteCredential(userID: String, id: [UInt8]) async throws -> RemovalOutcome
}

/// The passkey changes the account's owner is told about by mail: each gives its notice (`AccountNotice`) in the
/// change's own transaction, so a refused or rolled-back change mails nothing.
package protocol NoticedCredentialChanges {
    /// As `CredentialStore.addCredential`, with the notice in the same transaction.
    func addCredential(_ credential: StoredCredential, notice: AccountNotice?) async throws
    /// As `CredentialStore.deleteCredential`; the notice only when the passkey was removed. With `administrators`,
    /// the removal also keeps the last-administrator rule (`AdministratorRule`) in its transaction.
    func deleteCredential(
        userID: String, id: [UInt8], notice: AccountNotice?, administrators: AdministratorRule?
    ) async throws -> RemovalOutcome
}

extension CredentialStore {
    /// Passkey sign-up with nothing else in its transaction.
    public func createAccount(
        _ user: User, credential: StoredCredential, audit: AuditEvent, sessionTokenHash: [UInt8], session: SessionRecord
    ) async throws -> AccountCreation {
        try await createAccount(
            user, credential: credential, audit: audit, sessionTokenHash: sessionTokenHash, session: session, also: nil)
    }
}

extension SQLStore: CredentialStore {
    public func createAccount(
        _ user: User, credential: StoredCredential, audit: AuditEvent, sessionTokenHash: [UInt8],
        session: SessionRecord,
        also: (@Sendable (any SQLDatabase) async throws -> Void)?
    ) async throws -> AccountCreation {
        try await engine.withTransaction { db in
            // Looked up first, so the answer names what was taken; a concurrent sign-up that slips in between still
            // hits the unique constraints, and the transaction then changes nothing.
            if try await db.raw("SELECT id FROM users WHERE username_key = \(bind: Usernames.key(user.username))")
                .first() != nil
            {
                return .usernameTaken
            }
            if try await db.raw("SELECT id FROM credentials WHERE id = \(bind: Data(credential.id))").first() != nil {
                return .credentialExists
            }
            do { try await db.raw(Self.userInsert(user)).run() } catch  where Self.isUniqueViolation(error) {
                return .usernameTaken
            }
            do { try await db.raw(Self.credentialInsert(credential)).run() } catch  where Self.isUniqueViolation(error)
            {
                throw StoreError.conflict
            }
            try await db.raw(Self.auditInsert(audit)).run()
            try await db.raw(Self.sessionInsert(tokenHash: sessionTokenHash, session)).run()
            try await also?(db)
            return .created
        }
    }

    package static let credentialColumnNames = """
        id, user_id, public_key, sign_count, transports, aaguid, backup_eligible, backed_up, user_verified, \
        attestation_format, name, created_at, last_used_at
        """
    package static let credentialColumns = SQLQueryString(credentialColumnNames)

    /// `credentialColumns` qualified with the table alias `c`, for joins.
    package static let joinedCredentialColumnNames = """
        c.id, c.user_id, c.public_key, c.sign_count, c.transports, c.aaguid, c.backup_eligible, c.backed_up, c.user_verified, \
        c.attestation_format, c.name, c.created_at, c.last_used_at
        """

    /// The account's credentials in the order they were added; PostgreSQL runs it prepared (username-first sign-in,
    /// and every page that lists passkeys).
    package enum CredentialsOfUser: PostgresStatementText {
        package static let name = "sesame_credentials_of_user"
        package static let sql =
            "SELECT \(credentialColumnNames) FROM credentials WHERE user_id = $1 ORDER BY created_at, id"
        package static let parameterTypes: [PostgresDataType] = [.text]
    }

    /// The credential and its account, `u_`-prefixed (`userColumns`), in one read (the passkey sign-in), up to its
    /// `WHERE c.id = …`.
    package static let credentialWithUserSelect = """
        SELECT \(joinedCredentialColumnNames), u.id AS u_id, u.username AS u_username, u.display_name AS u_display_name,
            u.user_handle AS u_user_handle, u.disabled AS u_disabled, u.created_at AS u_created_at
        FROM credentials c LEFT JOIN users u ON u.id = c.user_id
        """

    package enum CredentialWithUser: PostgresStatementText {
        package static let name = "sesame_credential_with_user"
        package static let sql = "\(credentialWithUserSelect) WHERE c.id = $1"
        package static let parameterTypes: [PostgresDataType] = [.bytea]
    }

    /// The credentials of the account with this username key (the username-first sign-in's options step), up to
    /// its `WHERE u.username_key = …`.
    package static let credentialsOfUsernameSelect = """
        SELECT \(joinedCredentialColumnNames) FROM users u JOIN credentials c ON c.user_id = u.id
        """

    package enum CredentialsOfUsername: PostgresStatementText {
        package static let name = "sesame_credentials_of_username"
        package static let sql = "\(credentialsOfUsernameSelect) WHERE u.username_key = $1 ORDER BY c.created_at, c.id"
        package static let parameterTypes: [PostgresDataType] = [.text]
    }

    /// A `credentials` row (column names as in `credentialColumns`).
    package struct CredentialRow: Decodable {
        /// Column names spelled out: a key strategy converts every name again for every row (a few per cent of a sign-in).
        package enum CodingKeys: String, CodingKey {
            case id, userId = "user_id", publicKey = "public_key", signCount = "sign_count", transports, aaguid,
                backupEligible = "backup_eligible", backedUp = "backed_up", userVerified = "user_verified",
                attestationFormat = "attestation_format", name, createdAt = "created_at", lastUsedAt = "last_used_at"
        }

        package let id: Data
        package let userId: String
        package let publicKey: Data
        package let signCount: Int64
        /// Comma-separated.
        package let transports: String
        package let aaguid: Data?
        package let backupEligible: Int64
        package let backedUp: Int64
        package let userVerified: Int64
        package let attestationFormat: String
        package let name: String
        package let createdAt: Int64
        package let lastUsedAt: Int64?

        package var credential: StoredCredential {
            StoredCredential(
                id: [UInt8](id), userID: userId, publicKey: [UInt8](publicKey), signCount: UInt32(clamping: signCount),
                transports: transports.split(separator: ",").map(String.init), aaguid: aaguid.map { [UInt8]($0) },
                backupEligible: backupEligible != 0, backedUp: backedUp != 0, userVerified: userVerified != 0,
                attestationFormat: attestationFormat, name: name, createdAt: Date(milliseconds: createdAt),
                lastUsedAt: lastUsedAt.map(Date.init(milliseconds:))
            )
        }
    }

    package static func credential(_ row: any SQLRow) throws -> StoredCredential {
        try row.decode(model: CredentialRow.self).credential
    }

    package static func credentialInsert(_ c: StoredCredential) -> SQLQueryString {
        """
        INSERT INTO credentials (\(Self.credentialColumns)) VALUES (
            \(bind: Data(c.id)), \(bind: c.userID), \(bind: Data(c.publicKey)), \(bind: Int64(c.signCount)),
            \(bind: c.transports.joined(separator: ",")), \(bind: c.aaguid.map { Data($0) }),
            \(bind: c.backupEligible.column), \(bind: c.backedUp.column), \(bind: c.userVerified.column),
            \(bind: c.attestationFormat), \(bind: c.name), \(bind: c.createdAt.milliseconds), \(bind: c.lastUsedAt?.milliseconds))
        """
    }

    public func addCredential(_ c: StoredCredential) async throws {
        try await addCredential(c, notice: nil)
    }

    public func credentials(userID: String) async throws -> [StoredCredential] {
        if engine.kind == .postgres {
            return try await engine.runPrepared(CredentialsOfUser.self, [.text(userID)]).map {
                try Self.credential($0.sql())
            }
        }
        return try await db.raw(
            "SELECT \(Self.credentialColumns) FROM credentials WHERE user_id = \(bind: userID) ORDER BY created_at, id"
        )
        .all().map(Self.credential)
    }

    public func credential(id: [UInt8]) async throws -> StoredCredential? {
        try await db.raw("SELECT \(Self.credentialColumns) FROM credentials WHERE id = \(bind: Data(id))").first().map(
            Self.credential)
    }

    public func credentialWithUser(id: [UInt8]) async throws -> (credential: StoredCredential, user: User?)? {
        let found: (any SQLRow)? =
            if engine.kind == .postgres {
                try await engine.runPrepared(CredentialWithUser.self, [.bytes(id)]).first?.sql()
            } else {
                try await db.raw("\(unsafeRaw: Self.credentialWithUserSelect) WHERE c.id = \(bind: Data(id))").first()
            }
        guard let row = found else { return nil }
        let user = try row.decode(column: "u_id", as: String?.self) == nil ? nil : try Self.user(row, prefix: "u_")
        return (try Self.credential(row), user)
    }

    public func credentials(usernameKey: String) async throws -> [StoredCredential] {
        // As in `user(usernameKey:)`: a key with control characters names no account (PostgreSQL refuses NUL).
        guard !usernameKey.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return []
        }
        if engine.kind == .postgres {
            return try await engine.runPrepared(CredentialsOfUsername.self, [.text(usernameKey)]).map {
                try Self.credential($0.sql())
            }
        }
        return try await db.raw(
            """
            \(unsafeRaw: Self.credentialsOfUsernameSelect) WHERE u.username_key = \(bind: usernameKey) ORDER BY c.created_at, c.id
            """
        ).all().map(Self.credential)
    }

    public func recordCredentialUse(id: [UInt8], signCount: UInt32, backedUp: Bool, at: Date) async throws -> Bool {
        !(try await db.raw(
            "\(Self.credentialUse(id: id, signCount: signCount, backedUp: backedUp, at: at)) RETURNING id"
        ).all()).isEmpty
    }

    /// The guarded update of a credential's use: only while the stored count is below the one the authenticator
    /// reported, or both are 0 (an authenticator without a counter). Of two assertions carrying the same counter,
    /// the second finds the count already there and changes nothing, and a count never goes backwards.
    package static func credentialUse(id: [UInt8], signCount: UInt32, backedUp: Bool, at: Date) -> SQLQueryString {
        let count = Int64(signCount)
        return """
            UPDATE credentials SET sign_count = \(bind: count), backed_up = \(bind: backedUp.column), last_used_at = \(bind: at.milliseconds)
            WHERE id = \(bind: Data(id)) AND (sign_count < \(bind: count) OR (sign_count = 0 AND \(bind: count) = 0))
            """
    }

    /// The message the SQLite sign-in trigger aborts with when the sign count guard fails.
    package static let signCountGuardMessage = "sesame: sign count did not grow"
    /// The message the SQLite sign-in trigger aborts with when the sealed challenge was spent already.
    package static let challengeSpentMessage = "sesame: challenge spent"

    /// SQLite: the verify step's writes as one statement. On SQLite the cost of a sign-in is mostly the number of
    /// statements (each is a round trip through the thread pool), so rather than `BEGIN`, three statements and
    /// `COMMIT`, one `INSERT` into this connection's TEMP view runs them from its INSTEAD OF trigger. A statement is
    /// atomic in SQLite: when any part fails (the sign count guard, or the session's token hash exists) the
    /// statement is aborted and the writes it made so far are undone. TEMP objects live in the connection, not in
    /// the database file, so this is no schema change and is made again each time the store is opened.
    package static let sqliteSignInStatements: [SQLQueryString] = [
        """
        CREATE TEMP VIEW IF NOT EXISTS passkey_sign_in (credential_id, sign_count, backed_up, last_used_at, audit_id, audit_at,
            audit_kind, audit_outcome, audit_user_id, audit_username, audit_client_address, audit_detail, token_hash, session_id,
            user_id, created_at, last_seen_at, expires_at, user_agent, method, authenticated_at, passkey_backup_eligible,
            spent_id, spent_expires_at)
        AS SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            NULL, NULL
        """,
        """
        CREATE TEMP TRIGGER IF NOT EXISTS passkey_sign_in_guarded INSTEAD OF INSERT ON passkey_sign_in BEGIN
            SELECT RAISE(ABORT, 'sesame: challenge spent') WHERE NEW.spent_id IS NOT NULL
                AND EXISTS (SELECT 1 FROM used_challenges WHERE id = NEW.spent_id);
            INSERT INTO used_challenges (id, expires_at) SELECT NEW.spent_id, NEW.spent_expires_at WHERE NEW.spent_id IS NOT NULL;
            SELECT RAISE(ABORT, 'sesame: sign count did not grow') WHERE NOT EXISTS (SELECT 1 FROM credentials
                WHERE id = NEW.credential_id AND (sign_count < NEW.sign_count OR (sign_count = 0 AND NEW.sign_count = 0)));
            UPDATE credentials SET sign_count = NEW.sign_count, backed_up = NEW.backed_up, last_used_at = NEW.last_used_at
                WHERE id = NEW.credential_id;
            INSERT INTO audit_events (id, at, kind, outcome, user_id, username, client_address, detail) VALUES (NEW.audit_id,
                NEW.audit_at, NEW.audit_kind, NEW.audit_outcome, NEW.audit_user_id, NEW.audit_username, NEW.audit_client_address,
                NEW.audit_detail);
            INSERT INTO sessions (token_hash, id, user_id, created_at, last_seen_at, expires_at, user_agent, method, authenticated_at,
                passkey_backup_eligible)
                VALUES (NEW.token_hash, NEW.session_id, NEW.user_id, NEW.created_at, NEW.last_seen_at, NEW.expires_at, NEW.user_agent,
                NEW.method, NEW.authenticated_at, NEW.passkey_backup_eligible);
        END
        """,
    ]

    /// PostgreSQL: the verify step's writes as one statement, so one round trip and one commit: PostgreSQL runs every
    /// data-modifying WITH clause to completion, and the statement as a whole succeeds or changes nothing. The
    /// credential's use is written only if the challenge was not spent before (a concurrent spend of the same
    /// challenge waits for this one's unique index entry, then finds it), the audit event and the session only from
    /// the row the guarded update changed (as in `credentialUse`): a concurrent assertion with the same counter waits
    /// for this one's row lock, then finds the guard false. The spent challenge stays spent when the guard fails.
    /// Parameters: the credential's use ($1 to $4), the audit event ($5 to $12), the session ($13 to $22) and, when
    /// `spent` spends a sealed challenge, its entry ($23, $24).
    package static func postgresSignIn(spent: String) -> String {
        """
        WITH spent AS (\(spent)),
        used AS (
            UPDATE credentials SET sign_count = $1, backed_up = $2, last_used_at = $3
            WHERE id = $4 AND (sign_count < $1 OR (sign_count = 0 AND $1 = 0)) AND EXISTS (SELECT 1 FROM spent) RETURNING id),
        audited AS (
            INSERT INTO audit_events (id, at, kind, outcome, user_id, username, client_address, detail)
            SELECT $5, $6, $7, $8, $9, $10, $11, $12 FROM used RETURNING id),
        signed AS (
            INSERT INTO sessions (token_hash, id, user_id, created_at, last_seen_at, expires_at, user_agent, method,
                authenticated_at, passkey_backup_eligible)
            SELECT $13, $14, $15, $16, $17, $18, $19, $20, $21, $22 FROM used RETURNING id)
        SELECT (SELECT COUNT(*) FROM spent) AS spent, (SELECT COUNT(*) FROM signed) AS signed
        """
    }

    package static let postgresSignInTypes: [PostgresDataType] = [
        .int8, .int8, .int8, .bytea,
        .text, .int8, .text, .text, .text, .text, .text, .text,
        .bytea, .text, .text, .int8, .int8, .int8, .text, .text, .int8, .int8,
    ]

    /// The sign-in that spends its sealed challenge in `used_challenges` (as `spendChallenge`).
    package enum SignInSpending: PostgresStatementText {
        package static let name = "sesame_sign_in_spending"
        package static let sql = postgresSignIn(
            spent:
                "INSERT INTO used_challenges (id, expires_at) VALUES ($23, $24) ON CONFLICT (id) DO NOTHING RETURNING id"
        )
        package static let parameterTypes = postgresSignInTypes + [.bytea, .int8]
    }

    /// The sign-in with a stored challenge, consumed on its own before the assertion was checked.
    package enum SignIn: PostgresStatementText {
        package static let name = "sesame_sign_in"
        package static let sql = postgresSignIn(spent: "SELECT 1 AS id")
        package static let parameterTypes = postgresSignInTypes
    }

    public func recordPasskeySignIn(
        credentialID: [UInt8], signCount: UInt32, backedUp: Bool, at: Date, audit: AuditEvent,
        sessionTokenHash: [UInt8], session: SessionRecord, spending: SpentChallenge?
    ) async throws -> PasskeySignInOutcome {
        let e = audit
        let s = session
        do {
            switch engine.kind {
            case .postgres:
                let count = Int64(signCount)
                var binds: [PreparedBind] = [
                    .integer(count), .integer(backedUp.column), .integer(at.milliseconds), .bytes(credentialID),
                    .text(e.id), .integer(e.at.milliseconds), .text(e.kind), .text(e.outcome), .text(e.userID),
                    .text(e.username), .text(e.clientAddress), .text(e.detail),
                    .bytes(sessionTokenHash), .text(s.id), .text(s.userID), .integer(s.createdAt.milliseconds),
                    .integer(s.lastSeenAt.milliseconds), .integer(s.expiresAt.milliseconds), .text(s.userAgent),
                    .text(s.method), .integer(s.authenticatedAt.milliseconds),
                    .integer(s.passkeyBackupEligible?.column),
                ]
                let rows: [PostgresRow]
                if let spending {
                    binds += [.bytes(spending.id), .integer(spending.expiresAt.milliseconds)]
                    rows = try await engine.runPrepared(SignInSpending.self, binds)
                } else {
                    rows = try await engine.runPrepared(SignIn.self, binds)
                }
                guard let row = rows.first?.sql() else { throw DatabaseError("sign-in statement returned nothing") }
                if try row.decode(column: "spent", as: Int.self) == 0 { return .challengeSpent }
                return try row.decode(column: "signed", as: Int.self) == 0 ? .signCountRegression : .signedIn
            case .sqlite:
                try await db.raw(
                    """
                    INSERT INTO passkey_sign_in VALUES (\(bind: Data(credentialID)), \(bind: Int64(signCount)), \(bind: backedUp.column),
                        \(bind: at.milliseconds), \(bind: e.id), \(bind: e.at.milliseconds), \(bind: e.kind), \(bind: e.outcome), \(bind: e.userID),
                        \(bind: e.username), \(bind: e.clientAddress), \(bind: e.detail), \(bind: Data(sessionTokenHash)), \(bind: s.id),
                        \(bind: s.userID), \(bind: s.createdAt.milliseconds), \(bind: s.lastSeenAt.milliseconds), \(bind: s.expiresAt.milliseconds),
                        \(bind: s.userAgent), \(bind: s.method), \(bind: s.authenticatedAt.milliseconds),
                        \(bind: s.passkeyBackupEligible?.column), \(bind: spending.map { Data($0.id) }),
                        \(bind: spending?.expiresAt.milliseconds))
                    """
                ).run()
                return .signedIn
            }
        } catch let error as SQLiteCallError where error.message.contains(Self.signCountGuardMessage) {
            // The guard aborted the whole statement, the challenge's entry with it: spend it on its own.
            if let spending { _ = try await spendChallenge(spending) }
            return .signCountRegression
        } catch let error as SQLiteCallError where error.message.contains(Self.challengeSpentMessage) {
            return .challengeSpent
        } catch  where Self.isUniqueViolation(error) {
            throw StoreError.conflict
        }
    }

    public func renameCredential(userID: String, id: [UInt8], name: String) async throws -> Bool {
        !(try await db.raw(
            "UPDATE credentials SET name = \(bind: name) WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID) RETURNING id"
        ).all()).isEmpty
    }

    public func deleteCredential(userID: String, id: [UInt8]) async throws -> RemovalOutcome {
        try await deleteCredential(userID: userID, id: id, notice: nil, administrators: nil)
    }
}

extension SQLStore: NoticedCredentialChanges {
    package func addCredential(_ c: StoredCredential, notice: AccountNotice?) async throws {
        guard let notice else { return try await insert(Self.credentialInsert(c)) }
        try await engine.withTransaction { db in
            do { try await db.raw(Self.credentialInsert(c)).run() } catch  where Self.isUniqueViolation(error) {
                throw StoreError.conflict
            }
            try await notice.give(in: db)
        }
    }

    package func deleteCredential(
        userID: String, id: [UInt8], notice: AccountNotice?, administrators: AdministratorRule?
    ) async throws -> RemovalOutcome {
        try await engine.withTransaction { [self] db in
            guard let administrators else {
                return try await deleteCredential(userID: userID, id: id, notice: notice, db)
            }
            return try await administrators.guarding(db) {
                try await deleteCredential(userID: userID, id: id, notice: notice, db)
            }
        }
    }

    /// The owner's removal inside `db`: refused as the last way in when it is the last passkey and there is no
    /// password.
    private func deleteCredential(userID: String, id: [UInt8], notice: AccountNotice?, _ db: any SQLDatabase)
        async throws -> RemovalOutcome
    {
        try await lockUser(db, userID)
        let deleted = try await db.raw(
            """
            DELETE FROM credentials WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID) AND (
                EXISTS (SELECT 1 FROM passwords WHERE user_id = \(bind: userID))
                OR (SELECT COUNT(*) FROM credentials WHERE user_id = \(bind: userID)) > 1)
            RETURNING id
            """
        ).all()
        if !deleted.isEmpty {
            try await notice.give(in: db)
            return .removed
        }
        let exists = try await db.raw(
            "SELECT id FROM credentials WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID)"
        ).first()
        return exists == nil ? .notFound : .lastWayIn
    }
}

extension SQLStore {
    /// Removes one passkey of the account inside the caller's transaction `db` (an operator's change, with its
    /// audit event and the last-administrator rule); unlike the owner's removal it may take the last way in, which
    /// the operator decides. False when the account has no such passkey.
    package func deleteCredential(userID: String, id: [UInt8], in db: any SQLDatabase) async throws -> Bool {
        !(try await db.raw(
            "DELETE FROM credentials WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID) RETURNING id"
        ).all()).isEmpty
    }
}
