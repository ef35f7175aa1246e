import Foundation

/// A user account. `usernameKey` is the case-folded form that is unique.
public struct User: Sendable, Equatable, Codable {
    public var id: String
    public var username: String
    public var displayName: String
    /// WebAuthn user handle: 64 random bytes, never derived from the username.
    public var userHandle: [UInt8]
    public var disabled: Bool
    public var createdAt: Date

    public init(id: String, username: String, displayName: String, userHandle: [UInt8], disabled: Bool, createdAt: Date) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.userHandle = userHandle
        self.disabled = disabled
        self.createdAt = createdAt
    }
}

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

/// An scrypt password hash with the parameters it was made with.
public struct PasswordRecord: Sendable, Equatable {
    public var hash: [UInt8]
    public var salt: [UInt8]
    public var logN: Int
    public var r: Int
    public var p: Int
}

public struct TOTPRecord: Sendable, Equatable {
    public var secret: [UInt8]
    /// Last accepted time step; a code for this step or an earlier one is refused (replay).
    public var lastStep: Int64
    public var confirmed: Bool
    /// The stored (sealed) form of the secret: it changes whenever a new secret is set, so a confirmation can be
    /// made conditional on the secret it checked (`Store.confirmTOTP`).
    public var revision: [UInt8] = []
}

public struct SMSRecord: Sendable, Equatable {
    public var phone: String
    public var confirmed: Bool
}

public struct SessionRecord: Sendable, Equatable {
    /// Public identifier (not the token) used to list and revoke sessions.
    public var id: String
    public var userID: String
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date
    public var userAgent: String
    /// How the session was established: `passkey`, `password`, `password+totp`, ...
    public var method: String
    /// When the holder last proved who they are (sign-in, or re-authentication within the session).
    public var authenticatedAt: Date
}

/// A pending challenge or pending step. `payload` is JSON owned by whoever created it.
public struct ChallengeRecord: Sendable, Equatable {
    public var purpose: String
    public var userID: String?
    public var payload: String
    public var expiresAt: Date
}

public struct AuditEvent: Sendable, Equatable, Codable {
    public var id: String
    public var at: Date
    /// e.g. `sign_in.passkey`, `sign_in.password`, `password.changed`, `passkey.added`, `totp.enabled`.
    public var kind: String
    /// `success`, `failure` or `refused`.
    public var outcome: String
    public var userID: String?
    public var username: String?
    public var clientAddress: String
    /// Non-secret reason, e.g. an error code.
    public var detail: String

    public init(
        id: String = UUID().uuidString.lowercased(), at: Date, kind: String, outcome: String, userID: String?, username: String?,
        clientAddress: String, detail: String
    ) {
        self.id = id
        self.at = at
        self.kind = kind
        self.outcome = outcome
        self.userID = userID
        self.username = username
        self.clientAddress = clientAddress
        self.detail = detail
    }
}

public enum StoreError: Error, Equatable {
    /// A unique constraint refused the row (e.g. username taken, credential ID registered).
    case conflict
    /// A sealed secret (named by its purpose, e.g. `totp`) failed authentication: damaged, moved from another
    /// row, or sealed under another server secret. Carries no secret material.
    case undecryptable(String)
    /// A sealed secret (named by its purpose) names a file key that is not in the sealing key file: the file is
    /// missing a key (or the server runs without one). Carries the key id, a one-way function of the key.
    case unknownSealingKey(String, keyID: String)
}

/// One line of `sesame seal-keys status`: how many values of a purpose are sealed under a key.
public struct SealedSecretCount: Sendable, Equatable {
    public enum KeyState: String, Sendable, Equatable {
        /// New values are sealed under it.
        case sealing
        /// In the key file (or the database key) but not first: opens values, seals none.
        case openOnly = "open only"
        /// A file key id that is not in the key file: these values cannot be opened.
        case missing = "missing"
        /// Not a sealed value this version knows.
        case unrecognised
    }

    public let purpose: String
    /// `database` or a file key id.
    public let key: String
    public let state: KeyState
    public let count: Int
}

/// What `sesame seal-keys rotate` did.
public struct ResealReport: Sendable, Equatable {
    /// Values sealed again under the sealing key.
    public var resealed = 0
    /// Values already under the sealing key.
    public var current = 0
    /// Rows written by someone else between the read and the update (left as they were).
    public var changedMeanwhile = 0
    /// Rows that could not be opened: purpose, user id and the reason (no secret material).
    public var failures: [String] = []
}

/// What deleting a way in did.
public enum RemovalOutcome: Sendable, Equatable {
    case removed
    case notFound
    /// Refused: it is the account's last way in (no other passkey and no password).
    case lastWayIn
}

/// Everything the server keeps. One SQL implementation (`SQLStore`) serves SQLite and PostgreSQL; handlers see
/// only this protocol. Every method that must be atomic across nodes is a single statement or a transaction.
public protocol Store: Sendable {
    func ping() async throws

    /// The named secret, generated with `generate` and stored on first use; every node reads the same value.
    func serverSecret(named name: String, generate: @Sendable () -> [UInt8], now: Date) async throws -> [UInt8]

    // Users
    func createUser(_ user: User) async throws
    func user(id: String) async throws -> User?
    func user(usernameKey: String) async throws -> User?
    func user(userHandle: [UInt8]) async throws -> User?
    func users() async throws -> [User]
    func setDisabled(userID: String, _ disabled: Bool) async throws -> Bool
    /// False when there is no such user.
    func setDisplayName(userID: String, _ displayName: String) async throws -> Bool
    func deleteUser(id: String) async throws -> Bool

    // Credentials
    func addCredential(_ credential: StoredCredential) async throws
    func credentials(userID: String) async throws -> [StoredCredential]
    func credential(id: [UInt8]) async throws -> StoredCredential?
    /// The credential and its account (nil if the account row is missing), in one query.
    func credentialWithUser(id: [UInt8]) async throws -> (credential: StoredCredential, user: User?)?
    /// The credentials of the account with this username key (`credentials(userID:)` of `user(usernameKey:)`), in
    /// one query; empty when there is no such account or it has none.
    func credentials(usernameKey: String) async throws -> [StoredCredential]
    /// Records a verified assertion: the sign count the authenticator reported, its backup state and the time, only
    /// while the stored count is below `signCount` or both are 0. False (nothing written) when the guard fails: a
    /// concurrent assertion with the same counter got there first, or the count would go backwards.
    func recordCredentialUse(id: [UInt8], signCount: UInt32, backedUp: Bool, at: Date) async throws -> Bool
    /// The writes of a verified passkey sign-in, all or nothing: records the credential's use (as
    /// `recordCredentialUse`, with the same guard), appends `audit` and creates the session (as `createSession`).
    /// False, with nothing written, when the sign count guard fails. The challenge is not part of it: it was consumed
    /// on its own before the assertion was checked, so it stays used whatever happens here.
    func recordPasskeySignIn(
        credentialID: [UInt8], signCount: UInt32, backedUp: Bool, at: Date, audit: AuditEvent, sessionTokenHash: [UInt8],
        session: SessionRecord
    ) async throws -> Bool
    func renameCredential(userID: String, id: [UInt8], name: String) async throws -> Bool
    func deleteCredential(userID: String, id: [UInt8]) async throws -> RemovalOutcome

    // Password
    func password(userID: String) async throws -> PasswordRecord?
    func setPassword(userID: String, _ record: PasswordRecord, at: Date) async throws
    func deletePassword(userID: String) async throws -> RemovalOutcome

    // TOTP
    func totp(userID: String) async throws -> TOTPRecord?
    func setPendingTOTP(userID: String, secret: [UInt8], at: Date) async throws
    /// Records `step` as accepted for a confirmed secret, only if it is later than the last accepted step.
    /// Returns false when the step was already used (replay) or there is no confirmed TOTP secret.
    func acceptTOTPStep(userID: String, step: Int64) async throws -> Bool
    /// Confirms the pending secret whose stored form is `revision` and records `step` as accepted; false when the
    /// secret was replaced meanwhile (another setup started), is confirmed already, or the step is not later.
    func confirmTOTP(userID: String, step: Int64, revision: [UInt8]) async throws -> Bool
    func deleteTOTP(userID: String) async throws -> Bool

    // Recovery codes (salted hashes only)
    func replaceRecoveryCodes(userID: String, salt: [UInt8], hashes: [[UInt8]], at: Date) async throws
    /// The set's salt and the hashes of the codes not used yet.
    func recoveryCodes(userID: String) async throws -> (salt: [UInt8], unused: [[UInt8]])?
    /// Marks the code used; false if it does not exist or was used already.
    func useRecoveryCode(userID: String, hash: [UInt8], at: Date) async throws -> Bool
    func unusedRecoveryCodeCount(userID: String) async throws -> Int
    func deleteRecoveryCodes(userID: String) async throws

    // SMS
    func sms(userID: String) async throws -> SMSRecord?
    func setSMS(userID: String, phone: String, confirmed: Bool, at: Date) async throws
    func deleteSMS(userID: String) async throws -> Bool
    /// Starts a phone-number change: keeps `phone` (sealed) as a pending change under `challengeID` until
    /// `expiresAt`, replacing any earlier pending change of the account. The confirmed number stays in force.
    func beginPhoneChange(userID: String, phone: String, challengeID: [UInt8], expiresAt: Date) async throws
    /// Consumes the pending change stored under `challengeID` and makes its number the confirmed one, in one
    /// transaction; returns it, or nil when there is none (wrong code, expired, or replaced by a later change).
    func completePhoneChange(userID: String, challengeID: [UInt8], now: Date) async throws -> String?

    // Sealed secrets (`sesame seal-keys`)
    /// How many stored TOTP secrets and phone numbers are sealed under each key.
    func sealedSecretCounts() async throws -> [SealedSecretCount]
    /// Seals every stored TOTP secret and phone number that is not under the sealing key again under it; each
    /// row is replaced only if it still holds the value that was read (a concurrent write wins).
    func resealSecrets() async throws -> ResealReport

    // Sessions
    func createSession(tokenHash: [UInt8], _ session: SessionRecord) async throws
    func session(tokenHash: [UInt8], now: Date) async throws -> SessionRecord?
    func touchSession(tokenHash: [UInt8], at: Date) async throws
    /// Records a re-authentication: the session's `authenticatedAt` becomes `at` (and its method `method`).
    func markReauthenticated(tokenHash: [UInt8], method: String, at: Date) async throws -> Bool
    func sessions(userID: String, now: Date) async throws -> [SessionRecord]
    func deleteSession(userID: String, id: String) async throws -> Bool
    /// Deletes the user's sessions except `keeping` (a session id); returns how many.
    func deleteSessions(userID: String, keeping: String?) async throws -> Int

    // Challenges
    func insertChallenge(id: [UInt8], binding: [UInt8], _ challenge: ChallengeRecord) async throws
    /// Atomically removes and returns the challenge if it exists, has this purpose and binding, and has not
    /// expired. A second call with the same id returns nil (single use, across nodes).
    func consumeChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws -> ChallengeRecord?
    /// Reads a challenge without consuming it.
    func peekChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws -> ChallengeRecord?
    /// Counts one ceremony start in `bucket` (as `recordFailure`) and, only if the count is then at most `limit`,
    /// stores the challenge (as `insertChallenge`). Returns the bucket's count and window start. The count is exact
    /// across nodes; a challenge is never stored for a start past the limit.
    func startCeremony(
        bucket: String, limit: Int, now: Date, window: TimeInterval, challengeID: [UInt8], binding: [UInt8], _ challenge: ChallengeRecord
    ) async throws -> (count: Int, windowStart: Date)
    func deleteChallenges(userID: String, purpose: String) async throws
    func deleteChallenge(id: [UInt8]) async throws

    // Rate limits (fixed windows of failures, shared by all nodes)
    /// Failures counted in the current window, and when it started.
    func failures(bucket: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowStart: Date)
    /// Adds one failure, starting a new window if the old one ended; returns the new count and window start.
    func recordFailure(bucket: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowStart: Date)
    func clearFailures(bucket: String) async throws
    /// Takes one back (a success counted as an attempt), never below zero.
    func forgiveFailure(bucket: String) async throws

    // Audit
    func appendAudit(_ event: AuditEvent) async throws
    func auditEvents(userID: String?, limit: Int) async throws -> [AuditEvent]

    /// Removes expired challenges, sessions and rate-limit windows.
    func purgeExpired(now: Date, rateLimitWindow: TimeInterval) async throws
}
