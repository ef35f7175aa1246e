extension VirtualAuthenticator {
    /// What the authenticator is: its algorithms, whether it can verify the user, its counter and backup flags
    /// and its attestation. Fixed for the authenticator's life; per-call deviations go in ``Behaviour``.
    public struct Configuration: Sendable, Hashable {
        /// Algorithms the authenticator supports; the client picks the first of the options' `pubKeyCredParams`
        /// found here.
        public var algorithms: [Algorithm]
        /// Whether the authenticator performs user verification (PIN, biometrics). Without it, options with
        /// `userVerification: "required"` are refused with `NotAllowedError`.
        public var userVerification: Bool
        /// Whether new credentials keep a signature counter (incrementing) or always report 0.
        public var signCounter: Bool
        /// BE flag of new credentials.
        public var backupEligible: Bool
        /// BS flag of new credentials. Setting it without ``backupEligible`` makes invalid responses on purpose.
        public var backedUp: Bool
        /// Attestation statement the authenticator makes.
        public var attestation: Attestation
        /// AAGUID in attested credential data (16 bytes).
        public var aaguid: [UInt8]
        /// Transports reported by `getTransports()`.
        public var transports: [String]
        /// `authenticatorAttachment` of the responses: `platform` or `cross-platform`.
        public var attachment: String
        /// Length of new credential IDs in bytes (16...1023).
        public var credentialIdLength: Int
        /// Whether the authenticator can store discoverable credentials. Without, `residentKey: "preferred"`
        /// gives a server-side credential and `"required"` is refused with `NotAllowedError`.
        public var residentKeys: Bool

        public init(
            algorithms: [Algorithm] = [.es256, .edDSA, .rs256],
            userVerification: Bool = true,
            signCounter: Bool = true,
            backupEligible: Bool = false,
            backedUp: Bool = false,
            attestation: Attestation = .none,
            aaguid: [UInt8] = VirtualAuthenticator.defaultAAGUID,
            transports: [String] = ["internal"],
            attachment: String = "platform",
            credentialIdLength: Int = 32,
            residentKeys: Bool = true
        ) {
            self.algorithms = algorithms
            self.userVerification = userVerification
            self.signCounter = signCounter
            self.backupEligible = backupEligible
            self.backedUp = backedUp
            self.attestation = attestation
            self.aaguid = aaguid
            self.transports = transports
            self.attachment = attachment
            self.credentialIdLength = credentialIdLength
            self.residentKeys = residentKeys
        }
    }

    /// The attestation statement formats this authenticator can make (W3C WebAuthn Level 3 §8).
    ///
    /// The configured statement is sent whatever the options' `attestation` preference: with `"none"` a client
    /// replaces only potentially identifying attestation (§5.4.7), and neither `none` nor self attestation
    /// identifies anything beyond the credential key.
    public enum Attestation: String, Sendable, Hashable, Codable, CaseIterable {
        /// `fmt: "none"`, empty statement (§8.7).
        case none
        /// `fmt: "packed"` self attestation: `{alg, sig}` signed by the credential key itself, no `x5c` (§8.2).
        case packedSelf = "packed"
    }

    /// The AAGUID new credentials carry unless configured otherwise: `5e5a3e00-5e5a-4e00-8000-000000000001`,
    /// a fixed identifier for this software authenticator.
    public static let defaultAAGUID: [UInt8] = [
        0x5e, 0x5a, 0x3e, 0x00, 0x5e, 0x5a, 0x4e, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    ]

    /// Deviations from a correct client and authenticator, for making negative test cases. The default value
    /// behaves correctly. Changes marked "signed" are made before signing (the signature stays valid and the
    /// relying party must catch the content); ``tamper`` changes bytes after signing.
    public struct Behaviour: Sendable, Hashable {
        /// UP flag (signed). `false` is what a conditional-mediation create or a broken authenticator gives.
        public var userPresent = true
        /// Forces the UV flag (signed); `nil` lets the ceremony decide.
        public var userVerified: Bool? = nil
        /// XOR mask on the flags byte (signed): e.g. `0x08` flips BE, `0x10` flips BS, `0x40` flips AT.
        public var flagsXOR: UInt8 = 0
        /// Client data `type` instead of `webauthn.create` / `webauthn.get` (signed).
        public var clientDataType: String? = nil
        /// Client data `origin` instead of the calling origin (signed); the RP ID check still uses the real one.
        public var clientDataOrigin: String? = nil
        /// Client data `crossOrigin` (signed).
        public var crossOrigin = false
        /// Client data `topOrigin`, written when ``crossOrigin`` is true (signed).
        public var topOrigin: String? = nil
        /// Flip the last bit of the challenge written into client data (signed).
        public var tamperChallenge = false
        /// Hash this RP ID into authenticator data instead of the real one (signed).
        public var rpIdForHash: String? = nil
        /// Report this signature counter instead of the credential's (signed); the stored counter is unchanged.
        public var signCount: UInt32? = nil
        /// `userHandle` of an assertion: as the credential says, omitted, or these bytes.
        public var userHandle: UserHandle = .automatic
        /// `id` / `rawId` in the JSON instead of the credential ID (the bytes in authenticator data stay).
        public var responseCredentialId: [UInt8]? = nil
        /// Byte changes made after signing.
        public var tamper: [Tamper] = []

        public init() {}
    }

    public enum UserHandle: Sendable, Hashable {
        case automatic
        case omitted
        case bytes([UInt8])
    }

    /// One byte changed (XOR 0x01) after signing. The index counts from the start, modulo the length (so -1 is
    /// the last byte). In a registration, `signature` changes the packed statement's `sig` (nothing with `none`),
    /// and `authenticatorData` changes the copy inside the attestation object too.
    public enum Tamper: Sendable, Hashable {
        case authenticatorData(at: Int)
        case signature(at: Int)
        case clientDataJSON(at: Int)
    }
}
