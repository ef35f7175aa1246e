import CBOR
import SesameBytes

/// The flags byte of authenticator data (W3C WebAuthn Level 3 §6.1).
public struct AuthenticatorFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// UP: the user was present (bit 0).
    public static let userPresent = AuthenticatorFlags(rawValue: 0x01)
    /// UV: the user was verified (bit 2).
    public static let userVerified = AuthenticatorFlags(rawValue: 0x04)
    /// BE: the credential may be backed up, i.e. it is a multi-device (synced) credential (bit 3).
    public static let backupEligible = AuthenticatorFlags(rawValue: 0x08)
    /// BS: the credential is currently backed up (bit 4).
    public static let backedUp = AuthenticatorFlags(rawValue: 0x10)
    /// AT: attested credential data follows (bit 6).
    public static let attestedCredentialData = AuthenticatorFlags(rawValue: 0x40)
    /// ED: extension data follows (bit 7).
    public static let extensionData = AuthenticatorFlags(rawValue: 0x80)
}

/// An authenticator model identifier (16 bytes; all zero when the authenticator does not say).
public struct AAGUID: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// The all-zero AAGUID.
    public static let zero = AAGUID(unchecked: [UInt8](repeating: 0, count: 16))

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Exactly 16 bytes, or nil.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses the 8-4-4-4-12 hexadecimal form (either case).
    public init?(uuidString: String) {
        let hex = uuidString.filter { $0 != "-" }
        guard uuidString.count == 36, hex.count == 32, let bytes = Hex.decode(hex) else { return nil }
        self.bytes = bytes
    }

    /// Lower-case 8-4-4-4-12 hexadecimal.
    public var uuidString: String {
        [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { Hex.encode(bytes[$0]) }.joined(separator: "-")
    }

    public var isZero: Bool { bytes.allSatisfy { $0 == 0 } }
    public var description: String { uuidString }
}

/// The credential a registration creates, as the authenticator reports it (§6.5.1).
///
/// ```
/// aaguid (16) ‖ credentialIdLength (2, big-endian) ‖ credentialId (L ≤ 1023) ‖ credentialPublicKey (COSE_Key, CBOR)
/// ```
public struct AttestedCredentialData: Sendable, Hashable {
    public let aaguid: AAGUID
    public let credentialId: [UInt8]
    public let publicKey: COSEKey
    /// The COSE_Key bytes exactly as the authenticator sent them.
    public let publicKeyBytes: [UInt8]

    /// Longest credential ID a relying party accepts (§7.1 step 22; §5.1.10 gives 1023 bytes).
    public static let maximumCredentialIdLength = 1023
}

/// Authenticator data (W3C WebAuthn Level 3 §6.1), parsed with exact length accounting.
///
/// ```
/// rpIdHash (32) ‖ flags (1) ‖ signCount (4, big-endian)
///   ‖ attestedCredentialData (variable, present iff AT)
///   ‖ extensions (CBOR map, present iff ED)
/// ```
/// Every byte must be accounted for: data after the last announced part is refused, and so is an announced
/// part that is missing.
public struct AuthenticatorData: Sendable, Hashable {
    /// The bytes exactly as received; assertion signatures cover them.
    public let bytes: [UInt8]
    public let rpIdHash: [UInt8]
    public let flags: AuthenticatorFlags
    public let signCount: UInt32
    public let attestedCredentialData: AttestedCredentialData?
    /// Authenticator extension outputs (a CBOR map), when ED is set.
    public let extensions: CBOR?

    public init(bytes input: some Collection<UInt8>, options: COSEKeyOptions = .init()) throws(WebAuthnError) {
        let bytes = Array(input)
        guard bytes.count >= 37 else {
            throw WebAuthnError(.authenticatorDataTooShort, detail: "\(bytes.count) bytes, at least 37 needed")
        }
        self.bytes = bytes
        rpIdHash = Array(bytes[0..<32])
        flags = AuthenticatorFlags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37

        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else {
                throw WebAuthnError(.authenticatorDataTooShort, detail: "attested credential data is truncated")
            }
            let aaguid = AAGUID(unchecked: Array(bytes[offset..<offset + 16]))
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard idLength <= AttestedCredentialData.maximumCredentialIdLength else {
                throw WebAuthnError(.credentialIdTooLong, detail: "credential ID is \(idLength) bytes")
            }
            guard bytes.count >= offset + idLength else {
                throw WebAuthnError(.authenticatorDataTooShort, detail: "credential ID is truncated")
            }
            let credentialId = Array(bytes[offset..<offset + idLength])
            offset += idLength
            let keyItem: CBOR
            let keyLength: Int
            do {
                (keyItem, keyLength) = try CBORDecoder(options: .lenientMapOrder).decodePrefix(bytes[offset...])
            } catch {
                throw WebAuthnError(.invalidCOSEKey, detail: "credential public key is not valid CBOR (\(error.code))")
            }
            let keyBytes = Array(bytes[offset..<offset + keyLength])
            offset += keyLength
            let key = try COSEKey(cbor: keyItem, options: options)
            attestedCredentialData = AttestedCredentialData(
                aaguid: aaguid, credentialId: credentialId, publicKey: key, publicKeyBytes: keyBytes)
        } else {
            attestedCredentialData = nil
        }

        if flags.contains(.extensionData) {
            guard offset < bytes.count else {
                throw WebAuthnError(.extensionDataMissing, detail: "ED is set but no extension data follows")
            }
            let item: CBOR
            let length: Int
            do {
                (item, length) = try CBORDecoder(options: .lenientMapOrder).decodePrefix(bytes[offset...])
            } catch {
                throw WebAuthnError(.invalidCBOR, detail: "extension outputs are not valid CBOR (\(error.code))")
            }
            guard case .map = item else {
                throw WebAuthnError(.invalidCBOR, detail: "extension outputs are not a CBOR map")
            }
            extensions = item
            offset += length
        } else {
            extensions = nil
        }

        guard offset == bytes.count else {
            throw WebAuthnError(
                .authenticatorDataLengthMismatch,
                detail: "\(bytes.count - offset) bytes left over after the flagged parts")
        }
    }
}
