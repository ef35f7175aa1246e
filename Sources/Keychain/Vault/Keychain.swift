import Crypto
import Foundation

/// An opened vault: the façade the command line (and later the browser extension's native host) works through.
///
/// Opening takes the directory's lock for the object's life, so two processes never interleave a
/// read-change-write. Nothing is written until ``save()``; a command that fails part-way leaves the file as it was.
public final class Keychain {
    public let directory: VaultDirectory
    private let directoryLock: DirectoryLock
    private var file: VaultFile
    private let fileKey: SymmetricKey
    var state: VaultState
    let clock: any KeychainClock
    /// Whether this opening counts as user verification: the passphrase was entered in this command, or the
    /// session's verification window has not passed.
    public let userVerified: Bool

    private init(
        directory: VaultDirectory, lock: DirectoryLock, file: VaultFile, fileKey: SymmetricKey, state: VaultState,
        clock: any KeychainClock, userVerified: Bool
    ) {
        self.directory = directory
        self.directoryLock = lock
        self.file = file
        self.fileKey = fileKey
        self.state = state
        self.clock = clock
        self.userVerified = userVerified
    }

    // MARK: Creating

    /// Makes a new vault in `directory` (which must not hold one): a device key pair, a vault key, a sharing key
    /// and a recovery key. Returns the keychain and the recovery key, which is shown once and never stored.
    public static func create(
        in directory: VaultDirectory, passphrase: String, deviceName: String,
        parameters: ScryptParameters = .default, policy: KDFPolicy = .standard,
        clock: any KeychainClock = SystemKeychainClock()
    ) throws(KeychainError) -> (Keychain, RecoveryKey) {
        try Passphrase.checkNew(passphrase)
        try ItemLimits.checkText(deviceName, field: "device name")
        let now = clock.now
        let device = LocalDevice.make(name: deviceName)
        let recovery = RecoveryKey.generate()
        let membership = VaultMembership(
            vaultId: SecureRandom.bytes(16), key: .random(epoch: 1),
            roster: [
                RosterEntry(
                    id: device.id, publicKey: device.key.publicKey, name: deviceName, added: ItemTime.truncate(now))
            ],
            recovery: recovery.derived.publicInfo, sharingKey: .generate(), entries: [:], syncedVersion: 0,
            highestSeenVersion: 0, manifestDigest: nil, rosterChanges: RosterChanges(), sentShares: [],
            acceptedShares: [])
        let state = VaultState(device: device, vault: membership, join: nil)
        let keychain = try make(
            in: directory, passphrase: passphrase, state: state, parameters: parameters, policy: policy, clock: clock)
        return (keychain, recovery)
    }

    /// Writes a new vault file for `state`; the directory must not hold one.
    static func make(
        in directory: VaultDirectory, passphrase: String, state: VaultState, parameters: ScryptParameters,
        policy: KDFPolicy, clock: any KeychainClock
    ) throws(KeychainError) -> Keychain {
        try Passphrase.checkNew(passphrase)
        let lock = try directory.lock()
        guard !AtomicFile.exists(directory.vaultFile) else {
            throw KeychainError(.vaultExists, reason: "\(directory.path) already holds a vault")
        }
        let fileKey = SymmetricKey(size: .bits256)
        let bytes = try VaultFile.make(
            fileId: SecureRandom.bytes(16), passphrase: passphrase, parameters: parameters, policy: policy,
            fileKey: fileKey, body: VaultBody.encode(state))
        let file = try VaultFile(bytes: bytes)
        try AtomicFile.write(bytes, to: directory.vaultFile)
        return Keychain(
            directory: directory, lock: lock, file: file, fileKey: fileKey, state: state, clock: clock,
            userVerified: true)
    }

    // MARK: Opening

    /// Opens the vault with the live session if there is one, else with `passphrase`; with neither, `locked`.
    /// A session past its idle time is removed. Using a session moves its "last used" time forward.
    public static func open(
        _ directory: VaultDirectory, passphrase: String? = nil, policy: KDFPolicy = .standard,
        clock: any KeychainClock = SystemKeychainClock()
    ) throws(KeychainError) -> Keychain {
        let lock = try directory.lock()
        let file = try readFile(directory)
        let now = clock.now
        var fileKey: SymmetricKey?
        var verified = false
        if var session = try liveSession(directory, file: file, now: now) {
            fileKey = session.fileKey
            verified = session.verifiesUser(at: now)
            session.lastUsed = ItemTime.truncate(max(now, session.lastUsed))
            try AtomicFile.write(session.bytes, to: directory.sessionFile)
        }
        if let passphrase, !verified {
            fileKey = try file.fileKey(passphrase: passphrase, policy: policy)
            verified = true
        }
        guard let fileKey else {
            throw KeychainError(.locked, reason: "the vault is locked: unlock it or give the passphrase")
        }
        let state = try VaultBody.decode(try file.open(fileKey: fileKey))
        return Keychain(
            directory: directory, lock: lock, file: file, fileKey: fileKey, state: state, clock: clock,
            userVerified: verified)
    }

    static func readFile(_ directory: VaultDirectory) throws(KeychainError) -> VaultFile {
        guard let bytes = try AtomicFile.read(directory.vaultFile) else {
            throw KeychainError(.vaultNotFound, reason: "no vault in \(directory.path)")
        }
        return try VaultFile(bytes: bytes)
    }

    /// The session, when there is one for this file and it is live; a stale or foreign one is removed.
    static func liveSession(_ directory: VaultDirectory, file: VaultFile, now: Date) throws(KeychainError) -> Session? {
        guard let bytes = try AtomicFile.read(directory.sessionFile, maximumSize: 4096) else { return nil }
        guard let session = try? Session(bytes: bytes), session.fileId == file.fileId, session.isLive(at: now) else {
            try AtomicFile.remove(directory.sessionFile)
            return nil
        }
        return session
    }

    // MARK: Sessions

    /// Checks the passphrase and starts a session that ends after `idle` seconds without use; user verification
    /// holds for `verifyWindow` seconds after this unlock.
    public static func unlock(
        _ directory: VaultDirectory, passphrase: String, idle: UInt32 = 600, verifyWindow: UInt32 = 300,
        policy: KDFPolicy = .standard, clock: any KeychainClock = SystemKeychainClock()
    ) throws(KeychainError) -> SessionStatus {
        let lock = try directory.lock()
        defer { withExtendedLifetime(lock) {} }
        let file = try readFile(directory)
        let key = try file.fileKey(passphrase: passphrase, policy: policy)
        _ = try VaultBody.decode(try file.open(fileKey: key))
        let session = Session(
            fileId: file.fileId, fileKey: key, unlockedAt: clock.now, idle: max(idle, 1),
            verifyWindow: min(verifyWindow, max(idle, 1)))
        try AtomicFile.write(session.bytes, to: directory.sessionFile)
        return SessionStatus(session: session, now: clock.now)
    }

    /// Ends the session at once.
    public static func lock(_ directory: VaultDirectory) throws(KeychainError) {
        let lock = try directory.lock()
        defer { withExtendedLifetime(lock) {} }
        try AtomicFile.remove(directory.sessionFile)
    }

    /// Whether the vault is there and unlocked, without a passphrase (an expired session is removed).
    public static func sessionStatus(_ directory: VaultDirectory, clock: any KeychainClock = SystemKeychainClock())
        throws(KeychainError) -> SessionStatus?
    {
        let lock = try directory.lock()
        defer { withExtendedLifetime(lock) {} }
        let file = try readFile(directory)
        return try liveSession(directory, file: file, now: clock.now).map { SessionStatus(session: $0, now: clock.now) }
    }

    // MARK: Saving

    /// Writes the vault (atomically: the old file stays until the new one is complete and flushed).
    public func save() throws(KeychainError) {
        let bytes = try file.replacingBody(VaultBody.encode(state), fileKey: fileKey)
        let reread = try VaultFile(bytes: bytes)
        try AtomicFile.write(bytes, to: directory.vaultFile)
        file = reread
    }

    /// Replaces the passphrase (new salt, same file key).
    public func changePassphrase(
        to passphrase: String, parameters: ScryptParameters = .default, policy: KDFPolicy = .standard
    )
        throws(KeychainError)
    {
        try Passphrase.checkNew(passphrase)
        let bytes = try VaultFile.make(
            fileId: file.fileId, passphrase: passphrase, parameters: parameters, policy: policy, fileKey: fileKey,
            body: VaultBody.encode(state))
        let reread = try VaultFile(bytes: bytes)
        try AtomicFile.write(bytes, to: directory.vaultFile)
        file = reread
    }

    /// The KDF parameters the file uses.
    public var kdfParameters: ScryptParameters { file.kdf }

    // MARK: Access

    /// The vault, or the reason there is none yet.
    func membership() throws(KeychainError) -> VaultMembership {
        guard let vault = state.vault else {
            if state.join != nil {
                throw KeychainError(.joinInProgress, reason: "this device is waiting for its join to be approved")
            }
            throw KeychainError(.vaultNotFound, reason: "this directory holds no vault")
        }
        return vault
    }

    func updateMembership(_ change: (inout VaultMembership) throws(KeychainError) -> Void) throws(KeychainError) {
        var vault = try membership()
        try change(&vault)
        state.vault = vault
    }

    public var deviceId: [UInt8] { state.device.id }
    public var deviceName: String { state.device.name }
    public var deviceFingerprint: KeyFingerprint { state.device.key.fingerprint }
}

/// A live session's times.
public struct SessionStatus: Sendable, Hashable {
    public let unlockedAt: Date
    public let expires: Date
    public let verifiesUserUntil: Date
    public let userVerified: Bool

    init(session: Session, now: Date) {
        unlockedAt = session.unlockedAt
        expires = session.expires
        verifiesUserUntil = session.unlockedAt.addingTimeInterval(Double(session.verifyWindow))
        userVerified = session.verifiesUser(at: now)
    }
}
