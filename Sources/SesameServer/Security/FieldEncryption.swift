import Crypto
import Foundation
import WebAuthn

/// Encryption at rest for stored secrets that must be read back (TOTP secrets, SMS phone numbers).
///
/// Each purpose has its own AES-256-GCM key, derived with HKDF-SHA256 from the server secret with a purpose label
/// as `info`. A sealed value is `version (1 byte, 0x01) || nonce (12) || ciphertext || tag (16)`, with a fresh
/// random nonce per write. The associated data names the row the value belongs to (purpose and user id, each
/// length-prefixed), so a ciphertext copied into another user's row, or from one table into another, fails
/// authentication instead of decrypting.
///
/// What this protects: a copy of the secret columns without the server secret (a leaked table, an export of
/// selected columns, a log of row values). What it does not: the server secret lives in the same database
/// (`server_secrets`), so a full dump of the database holds the key too.
struct FieldCipher: Sendable {
    static let version: UInt8 = 1
    static let nonceLength = 12
    static let tagLength = 16

    let purpose: Purpose
    private let key: SymmetricKey

    enum Purpose: String, Sendable, CaseIterable {
        case totp
        case sms
    }

    init(serverSecret: [UInt8], purpose: Purpose) {
        self.purpose = purpose
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: serverSecret),
            salt: Array("sesame field encryption".utf8),
            info: Array("sesame/v1/\(purpose.rawValue)".utf8),
            outputByteCount: 32
        )
    }

    /// The associated data: the purpose and the row's user id, each as 4-byte big-endian length + UTF-8 bytes.
    private func associatedData(userID: String) -> [UInt8] {
        func field(_ string: String) -> [UInt8] {
            let bytes = Array(string.utf8)
            let count = UInt32(clamping: bytes.count)
            return [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)] + bytes
        }
        return field(purpose.rawValue) + field(userID)
    }

    func seal(_ plaintext: [UInt8], userID: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: associatedData(userID: userID))
        return [Self.version] + Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
    }

    /// Opens a sealed value; any damage, a wrong row, a wrong key or an unknown version is
    /// `StoreError.undecryptable` (which names the purpose only, never bytes).
    func open(_ sealed: [UInt8], userID: String) throws -> [UInt8] {
        guard sealed.count >= 1 + Self.nonceLength + Self.tagLength, sealed[0] == Self.version else {
            throw StoreError.undecryptable(purpose.rawValue)
        }
        do {
            let nonce = try AES.GCM.Nonce(data: sealed[1..<(1 + Self.nonceLength)])
            let box = try AES.GCM.SealedBox(
                nonce: nonce,
                ciphertext: sealed[(1 + Self.nonceLength)..<(sealed.count - Self.tagLength)],
                tag: sealed[(sealed.count - Self.tagLength)...]
            )
            return Array(try AES.GCM.open(box, using: key, authenticating: associatedData(userID: userID)))
        } catch {
            throw StoreError.undecryptable(purpose.rawValue)
        }
    }

    /// Text columns (the phone number) keep the sealed bytes as unpadded base64url.
    func sealText(_ plaintext: String, userID: String) throws -> String {
        Base64URL.encode(try seal(Array(plaintext.utf8), userID: userID))
    }

    func openText(_ stored: String, userID: String) throws -> String {
        guard let sealed = try? Base64URL.decode(stored) else { throw StoreError.undecryptable(purpose.rawValue) }
        guard let text = String(bytes: try open(sealed, userID: userID), encoding: .utf8) else {
            throw StoreError.undecryptable(purpose.rawValue)
        }
        return text
    }
}

/// The ciphers of every purpose, derived once from the server secret.
struct FieldCiphers: Sendable {
    let totp: FieldCipher
    let sms: FieldCipher

    init(serverSecret: [UInt8]) {
        totp = FieldCipher(serverSecret: serverSecret, purpose: .totp)
        sms = FieldCipher(serverSecret: serverSecret, purpose: .sms)
    }
}

/// The server secret's row name and how a new one is made; shared by the store, the migrations and the app.
enum ServerSecret {
    static let name = "server"
    @Sendable static func generate() -> [UInt8] { Secrets.random(32) }
}
