import Crypto
import Foundation
import WebAuthn
import SesameBytes

/// Encryption at rest for stored secrets that must be read back (TOTP secrets, SMS phone numbers).
///
/// Each purpose has its own AES-256-GCM key, derived with HKDF-SHA256 (purpose label as `info`) from one of two
/// sources:
///
/// - the **database key**: the server secret, a row of `server_secrets` in the same database. A value sealed under
///   it is `0x01 || nonce (12) || ciphertext || tag (16)`;
/// - a **file key**: a 256-bit key from the sealing key file (`sealingKeyFile`), held outside the database. A value
///   sealed under it is `0x02 || key id (8) || nonce (12) || ciphertext || tag (16)`; the key id (`SealingKey.id`)
///   says which file key opens it, so several keys can be in use while a deployment rotates.
///
/// A fresh random nonce is used per write. The associated data names the row the value belongs to (purpose and
/// user id, each length-prefixed; for version 2 also the version byte and key id), so a ciphertext copied into
/// another user's row, or from one table into another, fails authentication instead of decrypting.
///
/// What this protects: with a file key, a copy of the database (a full dump included) without the key file; with
/// only the database key, a copy of the secret columns without the `server_secrets` table.
package struct FieldCipher: Sendable {
    package static let databaseKeyVersion: UInt8 = 1
    package static let fileKeyVersion: UInt8 = 2
    package static let nonceLength = 12
    package static let tagLength = 16

    package let purpose: Purpose
    private let databaseKey: SymmetricKey
    /// Per-purpose keys derived from the file keys, by key id.
    private let fileKeys: [[UInt8]: SymmetricKey]
    /// The key new values are sealed under.
    package let sealingKey: SealedUnder

    /// What a sealed value is for: the label its key is derived for, declared by the feature that owns the column
    /// (`totp`, `sms`, `signing_key`). Two columns of one purpose share a key, so purposes are never reused.
    package struct Purpose: RawRepresentable, Hashable, Sendable {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
    }

    /// Which key a stored value names (read from its header, without opening it).
    package enum SealedUnder: Sendable, Hashable, CustomStringConvertible {
        case database
        case file(id: [UInt8])
        /// Too short or an unknown format version.
        case unrecognised

        package var description: String {
            switch self {
            case .database: return "database key"
            case .file(let id): return "file key \(Hex.encode(id))"
            case .unrecognised: return "unrecognised format"
            }
        }
    }

    package init(serverSecret: [UInt8], purpose: Purpose, keys: SealingKeyFile? = nil) {
        self.purpose = purpose
        databaseKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: serverSecret),
            salt: Array("sesame field encryption".utf8),
            info: Array("sesame/v1/\(purpose.rawValue)".utf8),
            outputByteCount: 32
        )
        var fileKeys: [[UInt8]: SymmetricKey] = [:]
        for case .key(let key) in keys?.entries ?? [] {
            fileKeys[key.id] = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: key.material,
                salt: Array("sesame field encryption".utf8),
                info: Array("sesame/v2/\(purpose.rawValue)".utf8),
                outputByteCount: 32
            )
        }
        self.fileKeys = fileKeys
        switch keys?.entries.first {
        case .key(let key)?: sealingKey = .file(id: key.id)
        case .database?, nil: sealingKey = .database
        }
    }

    /// 4-byte big-endian length + UTF-8 bytes.
    private static func field(_ string: String) -> [UInt8] {
        let bytes = Array(string.utf8)
        let count = UInt32(clamping: bytes.count)
        return [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
            + bytes
    }

    /// The associated data: the purpose and the row's user id; a version 2 value adds its header (version, key id).
    private func associatedData(userID: String, header: [UInt8]) -> [UInt8] {
        Self.field(purpose.rawValue) + Self.field(userID) + header
    }

    package func seal(_ plaintext: [UInt8], userID: String) throws -> [UInt8] {
        let header: [UInt8]
        let key: SymmetricKey
        switch sealingKey {
        case .file(let id):
            guard let fileKey = fileKeys[id] else {
                throw StoreError.unknownSealingKey(purpose.rawValue, keyID: Hex.encode(id))
            }
            header = [Self.fileKeyVersion] + id
            key = fileKey
        case .database, .unrecognised:
            header = [Self.databaseKeyVersion]
            key = databaseKey
        }
        // Version 1 values authenticate the purpose and user id only (their format predates the header in the AAD).
        let aad = associatedData(userID: userID, header: header.count > 1 ? header : [])
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: aad)
        return header + Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
    }

    /// The key a stored value was sealed under, from its header.
    package func sealedUnder(_ sealed: [UInt8]) -> SealedUnder {
        switch sealed.first {
        case Self.databaseKeyVersion? where sealed.count >= 1 + Self.nonceLength + Self.tagLength:
            return .database
        case Self.fileKeyVersion? where sealed.count >= 1 + SealingKey.idLength + Self.nonceLength + Self.tagLength:
            return .file(id: Array(sealed[1..<(1 + SealingKey.idLength)]))
        default:
            return .unrecognised
        }
    }

    /// Opens a sealed value. Any damage, a wrong row, a wrong key or an unknown version is
    /// `StoreError.undecryptable`; a value naming a file key that is not in the key file is
    /// `StoreError.unknownSealingKey`. Neither carries secret bytes.
    package func open(_ sealed: [UInt8], userID: String) throws -> [UInt8] {
        let key: SymmetricKey
        let headerLength: Int
        let aad: [UInt8]
        switch sealedUnder(sealed) {
        case .database:
            key = databaseKey
            headerLength = 1
            aad = associatedData(userID: userID, header: [])
        case .file(let id):
            guard let fileKey = fileKeys[id] else {
                throw StoreError.unknownSealingKey(purpose.rawValue, keyID: Hex.encode(id))
            }
            key = fileKey
            headerLength = 1 + SealingKey.idLength
            aad = associatedData(userID: userID, header: Array(sealed[0..<headerLength]))
        case .unrecognised:
            throw StoreError.undecryptable(purpose.rawValue)
        }
        do {
            let nonce = try AES.GCM.Nonce(data: sealed[headerLength..<(headerLength + Self.nonceLength)])
            let box = try AES.GCM.SealedBox(
                nonce: nonce,
                ciphertext: sealed[(headerLength + Self.nonceLength)..<(sealed.count - Self.tagLength)],
                tag: sealed[(sealed.count - Self.tagLength)...]
            )
            return Array(try AES.GCM.open(box, using: key, authenticating: aad))
        } catch {
            throw StoreError.undecryptable(purpose.rawValue)
        }
    }

    /// The value sealed again under the sealing key, or nil when it already is.
    package func resealed(_ sealed: [UInt8], userID: String) throws -> [UInt8]? {
        guard sealedUnder(sealed) != sealingKey else { return nil }
        return try seal(try open(sealed, userID: userID), userID: userID)
    }

    /// Whether values under `key` are sealed by this cipher, only opened, or cannot be opened.
    package func state(of key: SealedUnder) -> SealedSecretCount.KeyState {
        if key == sealingKey { return .sealing }
        switch key {
        case .database: return .openOnly
        case .file(let id): return fileKeys[id] == nil ? .missing : .openOnly
        case .unrecognised: return .unrecognised
        }
    }

    /// Text columns (the phone number) keep the sealed bytes as unpadded base64url.
    package func sealText(_ plaintext: String, userID: String) throws -> String {
        Base64URL.encode(try seal(Array(plaintext.utf8), userID: userID))
    }

    package func openText(_ stored: String, userID: String) throws -> String {
        guard let sealed = try? Base64URL.decode(stored) else { throw StoreError.undecryptable(purpose.rawValue) }
        guard let text = String(bytes: try open(sealed, userID: userID), encoding: .utf8) else {
            throw StoreError.undecryptable(purpose.rawValue)
        }
        return text
    }

    package func sealedUnder(text stored: String) -> SealedUnder {
        guard let sealed = try? Base64URL.decode(stored) else { return .unrecognised }
        return sealedUnder(sealed)
    }

    package func resealedText(_ stored: String, userID: String) throws -> String? {
        guard let sealed = try? Base64URL.decode(stored) else { throw StoreError.undecryptable(purpose.rawValue) }
        return try resealed(sealed, userID: userID).map(Base64URL.encode)
    }
}

/// The ciphers of every purpose, derived from the server secret and the sealing key file: once, for the purposes
/// the schema declares (`SealedColumn`), and on demand for any other.
package struct FieldCiphers: Sendable {
    private let serverSecret: [UInt8]
    private let keys: SealingKeyFile?
    private let derived: [FieldCipher.Purpose: FieldCipher]

    package init(serverSecret: [UInt8], keys: SealingKeyFile? = nil, purposes: [FieldCipher.Purpose] = []) {
        self.serverSecret = serverSecret
        self.keys = keys
        derived = Dictionary(
            purposes.map { ($0, FieldCipher(serverSecret: serverSecret, purpose: $0, keys: keys)) },
            uniquingKeysWith: { first, _ in first })
    }

    package func cipher(_ purpose: FieldCipher.Purpose) -> FieldCipher {
        derived[purpose] ?? FieldCipher(serverSecret: serverSecret, purpose: purpose, keys: keys)
    }
}

/// The server secret's row name and how a new one is made; shared by the store, the migrations and the app.
package enum ServerSecret {
    package static let name = "server"
    @Sendable package static func generate() -> [UInt8] { Secrets.random(32) }
}
