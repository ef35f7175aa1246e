import Crypto
import WebAuthn
import SesameCore
import AuthenticatorSigning

/// The allow list sign-in options carry for a username with no passkey (no such account, or an account without
/// passkeys), shaped like a real account's so that the options do not say whether the account exists.
///
/// Everything is derived with HKDF-SHA256 from the server secret and the case-folded username, so the list is the
/// same on every call, on every node and after restarts, and cannot be predicted without the secret:
///
/// - **count**: 1 (5/8 of usernames), 2 (1/4) or 3 (1/8), skewed like real accounts, most of which have one passkey;
/// - **each descriptor**: an authenticator profile (credential ID length and transports) picked with fixed weights
///   from profiles seen in real registrations, then an ID of that length.
///
/// What it cannot hide: an account with more passkeys than 3, or with an authenticator whose ID length or
/// transports are not among the profiles, and a list that changes when its owner adds a passkey (a fake one never
/// changes). docs/server.md, "Unknown usernames", says so.
package struct FakeCredentials: Sendable {
    /// A credential ID length and the transports `getTransports()` reports (lexicographic order), with a weight out
    /// of 256. The ID lengths are those of real registrations published as test vectors by Yubico's
    /// java-webauthn-server (`RealExamples.scala`: Apple 20 bytes, Windows Hello 32, YubiKey 5 64, YubiKey Bio 48)
    /// and kanidm's webauthn-rs (`core.rs` tests: macOS passkey 20 bytes with hybrid + internal, Pixel 3a 65); the
    /// weights are ours, favouring synced platform passkeys.
    package struct Profile: Sendable, Equatable {
        package let idLength: Int
        package let transports: [AuthenticatorTransport]
        package let weight: Int
    }

    package static let profiles: [Profile] = [
        Profile(idLength: 20, transports: [.hybrid, .internal], weight: 96),  // Apple platform / iCloud Keychain
        Profile(idLength: 65, transports: [.hybrid, .internal], weight: 64),  // Android platform
        Profile(idLength: 32, transports: [.internal], weight: 48),  // Windows Hello
        Profile(idLength: 64, transports: [.nfc, .usb], weight: 32),  // security key (NFC + USB)
        Profile(idLength: 48, transports: [.usb], weight: 16),  // security key (USB), discoverable
    ]

    package let serverSecret: [UInt8]

    /// The most descriptors a fake list has.
    package static let maximumCount = 3
    private static let longestID = profiles.map(\.idLength).max() ?? 0

    /// One HKDF-SHA256 output per username: byte 0 picks the count, bytes 1...3 the profiles, then one
    /// `longestID`-byte slot per descriptor whose prefix is its ID. One derivation keeps the work small and the same
    /// for every name.
    private func material(_ usernameKey: String) -> [UInt8] {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: serverSecret),
            salt: Array("sesame unknown-user credentials".utf8),
            info: Array("allow list\u{0}\(usernameKey)".utf8),
            outputByteCount: 1 + Self.maximumCount + Self.maximumCount * Self.longestID
        ).withUnsafeBytes { Array($0) }
    }

    private static func count(_ byte: UInt8) -> Int {
        byte < 160 ? 1 : byte < 224 ? 2 : 3
    }

    private static func profile(_ byte: UInt8) -> Profile {
        var pick = Int(byte)
        for profile in profiles {
            if pick < profile.weight { return profile }
            pick -= profile.weight
        }
        return profiles[0]
    }

    /// The descriptors, in the shape `PasskeyRoutes` gives a real account's credentials.
    package func allowList(_ usernameKey: String) -> [PublicKeyCredentialDescriptorJSON] {
        let bytes = material(usernameKey)
        return (0..<Self.count(bytes[0])).map { index in
            let profile = Self.profile(bytes[1 + index])
            let start = 1 + Self.maximumCount + index * Self.longestID
            return PublicKeyCredentialDescriptorJSON(
                id: Array(bytes[start..<(start + profile.idLength)]), transports: profile.transports)
        }
    }

    /// The credential record a decoy ID is checked against when an assertion names it: a P-256 key derived from the
    /// server secret (its private half is never kept, so no assertion verifies), sign count 0, and the backup
    /// eligibility a credential with these transports would have (a security key is not backup eligible). The
    /// assertion then fails at the same step, with the same error, as a wrong assertion for a real passkey.
    package func decoyRecord(id: [UInt8], transports: [AuthenticatorTransport]) -> CredentialRecord {
        let eligible = transports.contains(.internal) || transports.contains(.hybrid)
        return CredentialRecord(
            id: id, publicKey: decoyKey, signCount: 0, transports: transports, backupEligible: eligible,
            backupState: eligible,
            uvInitialized: true
        )
    }

    /// COSE_Key bytes of the decoy public key (EC2, ES256, P-256).
    private var decoyKey: [UInt8] {
        var counter: UInt8 = 0
        while true {
            let seed = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: serverSecret), salt: Array("sesame decoy key".utf8),
                info: [counter],
                outputByteCount: 32
            ).withUnsafeBytes { Array($0) }
            // A 32-byte value is a valid P-256 scalar unless it is 0 or at least the group order (chance about 2^-32).
            if let key = try? P256.Signing.PrivateKey(rawRepresentation: seed) {
                return CredentialKey.es256(key).coseKey
            }
            counter &+= 1
        }
    }
}
