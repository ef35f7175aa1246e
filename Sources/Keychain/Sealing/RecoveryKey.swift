import Crypto
import Foundation
import SesameBytes

/// The recovery key: 256 bits from the CSPRNG, shown once when the vault is made, for the person to write down.
/// With it (and the sync server) everything comes back after every device is lost.
///
/// Text form: 55 Crockford Base32 characters in 11 groups of 5, e.g. `K7QMX-3XP29-…`. The 275 bits are the 256
/// key bits followed by a 19-bit checksum (the first bits of SHA-256 over a label and the key), so a typo is
/// reported as a typo (``KeychainError/Code/recoveryKeyChecksum``) rather than as a wrong key; `O`/`I`/`L` read as
/// `0`/`1`/`1`, case and separators do not matter.
///
/// The key itself is never stored. Devices keep only what lets them wrap new vault keys for it: an X25519 public
/// key and a pre-shared key, both derived from it with HKDF-SHA256 (``RecoveryKey/Derived``). Opening a recovery
/// wrap needs the private half, which only the written key gives.
public struct RecoveryKey: Sendable, CustomStringConvertible {
    static let checksumBits = 19
    static let characterCount = 55

    let secret: [UInt8]

    public static func generate() -> RecoveryKey { RecoveryKey(secret: SecureRandom.bytes(32)) }

    init(secret: [UInt8]) { self.secret = secret }

    /// Reads the text form.
    public init(text: String) throws(KeychainError) {
        guard let values = Crockford32.values(text) else {
            throw KeychainError(
                .recoveryKeyMalformed, reason: "a recovery key holds only digits and letters (no I, L, O or U)")
        }
        guard values.count == Self.characterCount, let bits = Crockford32.bits(values, count: 256 + Self.checksumBits)
        else {
            throw KeychainError(
                .recoveryKeyMalformed,
                reason: "a recovery key has \(Self.characterCount) characters; this has \(values.count)")
        }
        let secret = Array(bits.prefix(32))
        guard ConstantTime.equal(Self.checksum(secret), Array(bits[32...])) else {
            throw KeychainError(
                .recoveryKeyChecksum, reason: "the recovery key has a typo: its checksum does not match")
        }
        self.secret = secret
    }

    /// The text to show once and write down.
    public var text: String {
        let bits = secret + Self.checksum(secret)
        return Crockford32.grouped(Crockford32.encode(bits: bits, count: 256 + Self.checksumBits), size: 5)
    }

    /// Redacted: the key is shown only through ``text``.
    public var description: String { "RecoveryKey(redacted)" }

    /// 19 checksum bits, left-aligned in 3 bytes.
    static func checksum(_ secret: [UInt8]) -> [UInt8] {
        let hash = Array(SHA256.hash(data: Domain.bytes(Domain.recoveryChecksum) + secret))
        return [hash[0], hash[1], hash[2] & 0xE0]
    }

    /// The X25519 key pair and pre-shared key this recovery key stands for.
    var derived: Derived {
        let ikm = SymmetricKey(data: secret)
        let salt = Domain.bytes(Domain.recoveryDerive)
        let privateBytes = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("x25519".utf8), outputByteCount: 32)
        let psk = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("psk".utf8), outputByteCount: 32)
        // Any 32 bytes are a valid X25519 private key (RFC 7748 clamps them).
        let privateKey = try! Curve25519.KeyAgreement.PrivateKey(
            rawRepresentation: privateBytes.withUnsafeBytes { Array($0) })
        return Derived(
            privateKey: privateKey,
            publicInfo: RecoveryPublicInfo(
                publicKey: Array(privateKey.publicKey.rawRepresentation), psk: psk.withUnsafeBytes { Array($0) }))
    }

    struct Derived {
        let privateKey: Curve25519.KeyAgreement.PrivateKey
        let publicInfo: RecoveryPublicInfo
    }
}

/// What every device keeps about the recovery key (inside the sealed manifest): enough to wrap a new vault key for
/// it, not enough to open such a wrap.
struct RecoveryPublicInfo: Sendable, Hashable {
    let publicKey: [UInt8]
    let psk: [UInt8]
}
