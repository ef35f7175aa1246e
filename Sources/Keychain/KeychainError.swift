/// The one error type of the `Keychain` library.
///
/// Callers branch on ``code``, an opaque, extensible value: new codes can be added without breaking anyone's
/// `switch`, because there is none to break. Two errors are equal when their codes are equal; ``reason``, ``file``
/// and ``line`` are diagnostics only.
///
/// The ``description`` never contains a passphrase, a key, a password, a one-time code secret, an item's
/// content or any bytes read from a file or the network: every reason is built from fixed text and non-secret
/// numbers (lengths, versions, counts, field names). Keep it that way when adding a throw site.
public struct KeychainError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers compare against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable machine-readable name, e.g. `rollbackDetected`.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        // MARK: Files and the vault directory

        /// No vault in the directory (run `init`, `join` or `recover` first).
        public static let vaultNotFound = Code("vaultNotFound")
        /// `init` found a vault already there; nothing was changed.
        public static let vaultExists = Code("vaultExists")
        /// A file could not be read, created or replaced (permissions, missing directory, disk full).
        public static let fileSystem = Code("fileSystem")
        /// The file does not start with the vault file's magic bytes: it is not a Sesame Keychain vault.
        public static let notAVaultFile = Code("notAVaultFile")
        /// The file is shorter than its own lengths say (a torn copy or a truncated download).
        public static let truncatedFile = Code("truncatedFile")
        /// The file's structure is wrong (bad lengths, trailing bytes, an unknown field), or its contents fail
        /// authentication although the passphrase opened it.
        public static let corruptFile = Code("corruptFile")
        /// A format version this build does not read. There is exactly one; nothing is read in an older one.
        public static let unsupportedFormatVersion = Code("unsupportedFormatVersion")
        /// Key-derivation parameters below the client's minimum (a downgrade), whatever the file says.
        public static let weakKDFParameters = Code("weakKDFParameters")
        /// Key-derivation parameters above what this client will spend (a denial of service).
        public static let kdfParametersTooCostly = Code("kdfParametersTooCostly")
        /// The passphrase does not open this vault.
        public static let wrongPassphrase = Code("wrongPassphrase")
        /// A new passphrase is too short.
        public static let passphraseTooShort = Code("passphraseTooShort")
        /// No passphrase was given and none can be asked for (no terminal).
        public static let passphraseUnavailable = Code("passphraseUnavailable")
        /// The vault is locked: no unlocked session, or it expired after the idle time.
        public static let locked = Code("locked")
        /// The session file is malformed or belongs to another vault; it was removed.
        public static let sessionInvalid = Code("sessionInvalid")
        /// The vault directory's path is unusable (relative `XDG_DATA_HOME`, no home directory).
        public static let invalidDirectory = Code("invalidDirectory")

        // MARK: Items

        /// No item matches.
        public static let itemNotFound = Code("itemNotFound")
        /// More than one item matches; be more specific.
        public static let ambiguousItem = Code("ambiguousItem")
        /// An item's fields are invalid (empty site, over-long text, control characters, a malformed key).
        public static let invalidItem = Code("invalidItem")
        /// The item is not a verification-code generator.
        public static let notACodeGenerator = Code("notACodeGenerator")

        // MARK: Sealing and keys

        /// A sealed record, key wrap or share failed authentication: it was changed, swapped, or made with another
        /// key or for another vault, item or version.
        public static let recordAuthenticationFailed = Code("recordAuthenticationFailed")
        /// A sealed record's header disagrees with where it was found (other vault, item, version or epoch).
        public static let recordMismatch = Code("recordMismatch")
        /// A sealed record's bytes are malformed (length, type, format).
        public static let malformedRecord = Code("malformedRecord")
        /// A recovery key with the wrong length or characters outside its alphabet.
        public static let recoveryKeyMalformed = Code("recoveryKeyMalformed")
        /// A recovery key whose checksum does not match: a typo.
        public static let recoveryKeyChecksum = Code("recoveryKeyChecksum")
        /// A well-formed recovery key that does not open this vault.
        public static let wrongRecoveryKey = Code("wrongRecoveryKey")
        /// The system's cryptography failed for a reason unrelated to the input.
        public static let cryptoFailure = Code("cryptoFailure")

        // MARK: The authenticator (names follow the DOMException a browser would reject with)

        /// The origin is not `https://host[:port]` (or `http://` on a loopback host).
        public static let invalidOrigin = Code("invalidOrigin")
        /// `SecurityError`: the RP ID is not the origin's host or a registrable domain suffix of it, or it is a
        /// public suffix.
        public static let rpIdNotAllowed = Code("rpIdNotAllowed")
        /// `TypeError`: the options JSON is malformed.
        public static let invalidOptions = Code("invalidOptions")
        /// `NotSupportedError`: no offered algorithm is one the keychain makes.
        public static let algorithmNotSupported = Code("algorithmNotSupported")
        /// `NotSupportedError`: an extension input the ceremony does not take (`prf.evalByCredential` at
        /// registration, or at authentication without `allowCredentials`).
        public static let extensionNotSupported = Code("extensionNotSupported")
        /// `SyntaxError`: an extension input that is malformed (a `prf.evalByCredential` key that is not the
        /// base64url ID of a credential in `allowCredentials`).
        public static let invalidExtensionInput = Code("invalidExtensionInput")
        /// `InvalidStateError`: a credential in `excludeCredentials` is already in this keychain.
        public static let credentialExcluded = Code("credentialExcluded")
        /// `NotAllowedError`: no passkey in the keychain can answer this request.
        public static let noCredential = Code("noCredential")
        /// `NotAllowedError`: user verification is required but the vault was not unlocked recently enough.
        public static let userVerificationRequired = Code("userVerificationRequired")
        /// Several passkeys can answer; the caller must pick one.
        public static let ambiguousCredential = Code("ambiguousCredential")
        /// The public suffix list file is missing or unreadable; RP IDs cannot be checked, so nothing is signed.
        public static let publicSuffixListUnavailable = Code("publicSuffixListUnavailable")
        /// The public suffix list file is malformed.
        public static let invalidPublicSuffixList = Code("invalidPublicSuffixList")

        /// The word list for generated passphrases is missing from the installation, or is not the list it should
        /// be (7,776 distinct lower-case words).
        public static let wordListUnavailable = Code("wordListUnavailable")
        /// A Bitwarden or KeePassXC export that is not one this keychain reads (not JSON or CSV, or another shape).
        public static let invalidExport = Code("invalidExport")
        /// An encrypted Bitwarden export: only unencrypted JSON exports are read.
        public static let encryptedExport = Code("encryptedExport")
        /// A passkey in an export whose key is not one the keychain imports from there (Bitwarden's are ECDSA P-256,
        /// ES256): the export is refused whole.
        public static let unsupportedPasskeyKey = Code("unsupportedPasskeyKey")
        /// A passkey in an export whose private key does not read (not base64url, or not a PKCS #8 key): the export
        /// is refused whole.
        public static let malformedPasskeyKey = Code("malformedPasskeyKey")
        /// A password generator was asked for a length or number of words outside its limits.
        public static let invalidGeneratorSettings = Code("invalidGeneratorSettings")

        // MARK: The browser's native host

        /// A native message that is not a frame this host reads, or JSON that is not a request it knows.
        public static let malformedNativeMessage = Code("malformedNativeMessage")
        /// A native message longer than the 1 MiB the host reads or writes.
        public static let nativeMessageTooLarge = Code("nativeMessageTooLarge")

        // MARK: Devices, recovery and sharing

        /// A pairing code with the wrong length or characters.
        public static let pairingCodeMalformed = Code("pairingCodeMalformed")
        /// No pending join request has a key matching the pairing code (the server may have swapped the key).
        public static let pairingCodeMismatch = Code("pairingCodeMismatch")
        /// A join approval does not open with this device's key and pairing secret: not made by an enrolled
        /// device that saw the code.
        public static let joinApprovalInvalid = Code("joinApprovalInvalid")
        /// The join has not been approved yet.
        public static let joinPending = Code("joinPending")
        /// The join request is gone from the server unapproved: an enrolled device refused it (or it expired).
        /// The join has ended; this device must ask again.
        public static let joinRefused = Code("joinRefused")
        /// This directory holds a join in progress, not a usable vault.
        public static let joinInProgress = Code("joinInProgress")
        /// A device (or a key for it) that the vault's authenticated device list does not contain.
        public static let untrustedDeviceKey = Code("untrustedDeviceKey")
        /// This device is no longer in the vault's device list: it was removed.
        public static let deviceRemoved = Code("deviceRemoved")
        /// The device cannot be removed (unknown, or it is this device).
        public static let invalidDeviceRemoval = Code("invalidDeviceRemoval")
        /// A share that does not open, is for another keychain, or is malformed.
        public static let shareInvalid = Code("shareInvalid")
        /// The fingerprint the person confirmed is not the key's fingerprint.
        public static let fingerprintMismatch = Code("fingerprintMismatch")
        /// This share was accepted before.
        public static let shareAlreadyAccepted = Code("shareAlreadyAccepted")
        /// A sharing key string that is malformed.
        public static let invalidSharingKey = Code("invalidSharingKey")

        // MARK: Sync

        /// A sync message that is not the documented JSON shape.
        public static let malformedMessage = Code("malformedMessage")
        /// A message or record in a format, suite or version this client does not accept (a downgrade).
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The server offered a vault state older than one this device has already seen.
        public static let rollbackDetected = Code("rollbackDetected")
        /// The server's records disagree with the vault's authenticated manifest (a record missing, planted,
        /// replayed or changed).
        public static let manifestMismatch = Code("manifestMismatch")
        /// The server's vault moved on since the last pull; pull, merge and push again.
        public static let versionConflict = Code("versionConflict")
        /// The server answered for another vault.
        public static let wrongVault = Code("wrongVault")
        /// The transport failed (network, server error, storage).
        public static let transportFailure = Code("transportFailure")
        /// No sync transport is configured for this vault.
        public static let syncNotConfigured = Code("syncNotConfigured")
        /// The sync server does not accept this device's token: it was never enrolled, its enrollment was
        /// revoked, or another device removed it from the vault (`sesame keychain enroll` makes a new one).
        public static let notEnrolled = Code("notEnrolled")
        /// The sync server refused a request of this device (rate limit, a limit on waiting requests, a token
        /// acting for another device); the reason says which.
        public static let syncRefused = Code("syncRefused")

        // MARK: Credential Exchange Format

        /// A CXF document that cannot be read.
        public static let invalidCXF = Code("invalidCXF")
        /// A CXF version this importer does not read.
        public static let unsupportedCXFVersion = Code("unsupportedCXFVersion")

        // MARK: QR images

        /// `zbarimg` (Debian package zbar-tools), used to read QR images, is not installed.
        public static let qrDecoderUnavailable = Code("qrDecoderUnavailable")
        /// The image holds no readable QR code.
        public static let qrUnreadable = Code("qrUnreadable")
    }

    public let code: Code
    /// Human-readable detail. Never holds secret material or input bytes.
    public let reason: String
    public let file: String
    public let line: UInt

    public init(_ code: Code, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// An error carrying only its code, for comparisons: `#expect(throws: KeychainError(.locked))`.
    public init(_ code: Code) {
        self.init(code, reason: "", file: "", line: 0)
    }

    public var description: String {
        "KeychainError.\(code): \(reason) (\(file):\(line))"
    }

    public static func == (lhs: KeychainError, rhs: KeychainError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
