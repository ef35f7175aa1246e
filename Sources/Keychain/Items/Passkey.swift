import Foundation

/// A passkey: a WebAuthn discoverable credential the keychain made or imported, with its private key.
public struct Passkey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The relying party identifier the credential is scoped to (a domain, in ASCII).
    public var rpId: String
    /// The credential ID, byte for byte as the relying party stored it (1 to 1023 bytes).
    public var credentialId: [UInt8]
    /// The relying party's user handle (`user.id`, 1 to 64 bytes).
    public var userHandle: [UInt8]
    /// `user.name` at registration.
    public var userName: String
    /// `user.displayName` at registration; may be empty.
    public var displayName: String
    public var algorithm: PasskeyAlgorithm
    /// The private key: the P-256 scalar (32 bytes) or the Ed25519 seed (32 bytes).
    public var privateKey: [UInt8]
    /// When the passkey last signed in; nil if never.
    public var lastUsed: Date?
    /// Hidden because the relying party left it out of `signalAllAcceptedCredentials` (WebAuthn L3 §5.1.10.2):
    /// kept, but not offered for sign-in, until the relying party lists it again.
    public var hidden: Bool
    /// The credential's HMAC secrets for the `prf` extension (WebAuthn L3 §10.1.4) and CTAP2.1 hmac-secret; nil
    /// for passkeys made before the keychain answered `prf`, which then report it unavailable.
    public var hmacSecret: HMACSecret?
    /// The blob a relying party stored with the `largeBlob` extension (WebAuthn L3 §10.1.5); nil when none.
    public var largeBlob: [UInt8]?

    /// The largest blob kept per passkey.
    public static let largeBlobMaximum = 2048

    public init(
        rpId: String, credentialId: [UInt8], userHandle: [UInt8], userName: String, displayName: String,
        algorithm: PasskeyAlgorithm, privateKey: [UInt8], lastUsed: Date? = nil, hidden: Bool = false,
        hmacSecret: HMACSecret? = nil, largeBlob: [UInt8]? = nil
    ) {
        self.rpId = rpId
        self.credentialId = credentialId
        self.userHandle = userHandle
        self.userName = userName
        self.displayName = displayName
        self.algorithm = algorithm
        self.privateKey = privateKey
        self.lastUsed = lastUsed.map(ItemTime.truncate)
        self.hidden = hidden
        self.hmacSecret = hmacSecret
        self.largeBlob = largeBlob
    }

    public var description: String {
        "Passkey(\(rpId), \(credentialId.count)-byte credential ID, \(algorithm), private key redacted)"
    }
    public var debugDescription: String { description }

    func validate() throws(KeychainError) {
        guard DomainName.isValid(rpId), rpId == rpId.lowercased() else {
            throw KeychainError(.invalidItem, reason: "passkey RP ID is not a lower-case DNS name")
        }
        guard (1...1023).contains(credentialId.count) else {
            throw KeychainError(.invalidItem, reason: "credential ID must be 1 to 1023 bytes")
        }
        guard (1...64).contains(userHandle.count) else {
            throw KeychainError(.invalidItem, reason: "user handle must be 1 to 64 bytes")
        }
        try ItemLimits.checkText(userName, field: "user name", allowEmpty: true)
        try ItemLimits.checkText(displayName, field: "display name", allowEmpty: true)
        _ = try CredentialKey(algorithm: algorithm, privateKey: privateKey)
        if let largeBlob, largeBlob.count > Self.largeBlobMaximum {
            throw KeychainError(.invalidItem, reason: "a passkey's large blob is over \(Self.largeBlobMaximum) bytes")
        }
        if let hmacSecret {
            guard hmacSecret.withUV.count == HMACSecret.length, hmacSecret.withoutUV.count == HMACSecret.length else {
                throw KeychainError(.invalidItem, reason: "passkey HMAC secrets must be 32 bytes each")
            }
        }
    }

    /// A credential's two random HMAC keys, as CTAP2.1 §12.5 (hmac-secret) gives every credential that has the
    /// extension: one for requests where the user was verified and one for the others. The `prf` extension uses
    /// only the first (WebAuthn L3 §10.1.4); the second is kept so that CXF (`hmacCredentials`) carries both.
    public struct HMACSecret: Sendable, Hashable {
        public static let length = 32
        public var withUV: [UInt8]
        public var withoutUV: [UInt8]
        public init(withUV: [UInt8], withoutUV: [UInt8]) {
            self.withUV = withUV
            self.withoutUV = withoutUV
        }
        static func generate() -> HMACSecret {
            HMACSecret(withUV: SecureRandom.bytes(length), withoutUV: SecureRandom.bytes(length))
        }
    }
}

/// The signature algorithms the keychain makes and uses passkeys with, by COSE identifier (IANA "COSE
/// Algorithms").
public enum PasskeyAlgorithm: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ECDSA over P-256 with SHA-256: the default, accepted by every relying party.
    case es256 = -7
    /// EdDSA with Ed25519, when asked for.
    case edDSA = -8

    public var description: String {
        switch self {
        case .es256: "ES256"
        case .edDSA: "EdDSA"
        }
    }
}
