import Crypto
import Foundation

/// The HPKE (RFC 9180) messages the keychain sends between keys: vault keys to devices and to the recovery key,
/// items to other keychains.
///
/// One suite, fixed in the code and written into every message: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
/// AES-256-GCM (suite IDs 0x0020, 0x0001, 0x0002). A message naming another suite is refused, never tried.
///
/// Field layout:
/// ```
/// offset  size  field
///  0       1    format        1
///  1       1    mode          0 base, 1 psk, 2 auth (RFC 9180 §5)
///  2       2    suite         0x0001 = the suite above (the only one)
///  4      32    enc           the encapsulated X25519 key
/// 36       n    ciphertext    one HPKE seal (plaintext + 16-byte tag)
/// ```
/// What the message is for is bound through HPKE's `info` (a domain label plus the vault, device, epoch or share
/// it belongs to); the caller supplies the same `info` when opening.
struct HPKEBox: Sendable, Hashable {
    enum Mode: UInt8, Sendable {
        case base = 0
        case psk = 1
        case auth = 2
    }

    static let format: UInt8 = 1
    static let suiteID: UInt16 = 1
    static let suite = HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_256)
    static let maximumSize = 4 * 1024 * 1024

    let mode: Mode
    let bytes: [UInt8]

    init(bytes: [UInt8]) throws(KeychainError) {
        guard bytes.count <= Self.maximumSize else {
            throw KeychainError(.malformedRecord, reason: "HPKE message longer than \(Self.maximumSize) bytes")
        }
        var reader = BinaryReader(bytes, shortCode: .malformedRecord, what: "HPKE message")
        let format = try reader.readUInt8()
        guard format == Self.format else {
            throw KeychainError(.unsupportedFormat, reason: "HPKE message format \(format) is not \(Self.format)")
        }
        guard let mode = Mode(rawValue: try reader.readUInt8()) else {
            throw KeychainError(.unsupportedFormat, reason: "unknown HPKE mode")
        }
        guard try reader.readUInt16() == Self.suiteID else {
            throw KeychainError(.unsupportedFormat, reason: "HPKE suite is not X25519/HKDF-SHA256/AES-256-GCM")
        }
        _ = try reader.read(32)
        guard reader.remaining >= 16 else { throw KeychainError(.malformedRecord, reason: "HPKE ciphertext too short") }
        self.mode = mode
        self.bytes = bytes
    }

    private var enc: Data { Data(bytes[4..<36]) }
    private var ciphertext: Data { Data(bytes[36...]) }

    private static func assemble(mode: Mode, enc: Data, ciphertext: Data) throws(KeychainError) -> HPKEBox {
        var w = BinaryWriter()
        w.write(Self.format)
        w.write(mode.rawValue)
        w.write(Self.suiteID)
        w.write(enc)
        w.write(ciphertext)
        return try HPKEBox(bytes: w.bytes)
    }

    /// Seals to `recipient`. With `sender`, auth mode (the recipient learns which key sent it); with `psk`, psk
    /// mode (only someone who knows the secret could have made it). Not both.
    static func seal(
        _ plaintext: [UInt8], to recipient: Curve25519.KeyAgreement.PublicKey, info: [UInt8],
        sender: Curve25519.KeyAgreement.PrivateKey? = nil, psk: (key: SymmetricKey, id: [UInt8])? = nil
    ) throws(KeychainError) -> HPKEBox {
        do {
            var context: HPKE.Sender
            let mode: Mode
            if let sender {
                context = try HPKE.Sender(
                    recipientKey: recipient, ciphersuite: suite, info: Data(info), authenticatedBy: sender)
                mode = .auth
            } else if let psk {
                context = try HPKE.Sender(
                    recipientKey: recipient, ciphersuite: suite, info: Data(info), presharedKey: psk.key,
                    presharedKeyIdentifier: Data(psk.id))
                mode = .psk
            } else {
                context = try HPKE.Sender(recipientKey: recipient, ciphersuite: suite, info: Data(info))
                mode = .base
            }
            let ciphertext = try context.seal(plaintext)
            return try assemble(mode: mode, enc: context.encapsulatedKey, ciphertext: ciphertext)
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.cryptoFailure, reason: "HPKE sealing failed")
        }
    }

    /// Opens with the recipient's private key. The mode must be the one the caller expects, and the sender key
    /// or psk must be the one the caller trusts; any mismatch is `failure`.
    func open(
        with recipient: Curve25519.KeyAgreement.PrivateKey, info: [UInt8], expecting expected: Mode,
        sender: Curve25519.KeyAgreement.PublicKey? = nil, psk: (key: SymmetricKey, id: [UInt8])? = nil,
        failure: KeychainError.Code = .recordAuthenticationFailed
    ) throws(KeychainError) -> [UInt8] {
        guard mode == expected else {
            throw KeychainError(failure, reason: "HPKE message in mode \(mode), expected \(expected)")
        }
        do {
            var context: HPKE.Recipient
            switch mode {
            case .auth:
                guard let sender else { throw KeychainError(failure, reason: "no trusted sender key") }
                context = try HPKE.Recipient(
                    privateKey: recipient, ciphersuite: Self.suite, info: Data(info), encapsulatedKey: enc,
                    authenticatedBy: sender)
            case .psk:
                guard let psk else { throw KeychainError(failure, reason: "no pre-shared key") }
                context = try HPKE.Recipient(
                    privateKey: recipient, ciphersuite: Self.suite, info: Data(info), encapsulatedKey: enc,
                    presharedKey: psk.key, presharedKeyIdentifier: Data(psk.id))
            case .base:
                context = try HPKE.Recipient(
                    privateKey: recipient, ciphersuite: Self.suite, info: Data(info), encapsulatedKey: enc)
            }
            return Array(try context.open(ciphertext))
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(failure, reason: "an HPKE message failed to open")
        }
    }
}
