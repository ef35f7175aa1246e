import Crypto
import Foundation

/// The local vault file: a small clear header and one AES-256-GCM-encrypted body (``VaultBody``).
///
/// The body is encrypted under a random 256-bit file key. The file key is wrapped under a key derived from the
/// passphrase with scrypt; an unlocked session keeps the file key (not the passphrase) for its idle time.
///
/// Field layout (big-endian), format 1:
/// ```
/// offset  size  field
///   0       8   magic             "SESAMEKC"
///   8       1   format            1 (the only one this client reads or writes)
///   9      16   file ID           random, fixed when the file is made; sessions are bound to it
///  25       1   KDF               1 = scrypt
///  26       1   log2 N
///  27       4   r
///  31       4   p
///  35      32   salt
///  67      12   file-key nonce
///  79      48   wrapped file key  AES-256-GCM(KEK, file key) ciphertext (32) || tag (16)
/// 127       4   body length n     ciphertext and tag, 16 ≤ n ≤ 256 MiB
/// 131      12   body nonce
/// 143       n   body              AES-256-GCM(file key, VaultBody) ciphertext || tag
/// 143+n         end of file (nothing may follow)
/// ```
/// Associated data: the wrapped key authenticates `"sesame-keychain/file-key/v1" || bytes[0..<67]`, the body
/// authenticates `"sesame-keychain/file-body/v1" || bytes[0..<131]`. So the header, KDF parameters included,
/// cannot be edited without the file failing to open; and parameters below the client's minimum are refused
/// before any key is derived (``KDFPolicy``).
struct VaultFile: Sendable {
    static let magic = Array("SESAMEKC".utf8)
    static let format: UInt8 = 1
    static let headerSize = 143
    static let maximumBodySize = 256 * 1024 * 1024

    let fileId: [UInt8]
    let kdf: ScryptParameters
    let salt: [UInt8]
    let wrapNonce: [UInt8]
    let wrappedKey: [UInt8]
    let bodyNonce: [UInt8]
    let body: [UInt8]
    /// The bytes as read (for the associated data).
    private let prefix: [UInt8]

    /// Parses the structure; nothing is decrypted.
    init(bytes: [UInt8]) throws(KeychainError) {
        guard bytes.count >= 9 else {
            if Self.magic.starts(with: bytes) && !bytes.isEmpty {
                throw KeychainError(.truncatedFile, reason: "the vault file ends inside its header")
            }
            throw KeychainError(.notAVaultFile, reason: "not a Sesame Keychain vault file")
        }
        var r = BinaryReader(bytes, shortCode: .truncatedFile, what: "the vault file")
        guard try r.read(8) == Self.magic else {
            throw KeychainError(.notAVaultFile, reason: "not a Sesame Keychain vault file")
        }
        let format = try r.readUInt8()
        guard format == Self.format else {
            throw KeychainError(
                .unsupportedFormatVersion, reason: "vault file format \(format); this client reads only \(Self.format)")
        }
        fileId = try r.read(16)
        let kdfId = try r.readUInt8()
        guard kdfId == 1 else { throw KeychainError(.unsupportedFormatVersion, reason: "unknown key derivation") }
        let logN = try r.readUInt8()
        let rr = try r.readUInt32()
        let p = try r.readUInt32()
        kdf = ScryptParameters(logN: logN, r: rr, p: p)
        salt = try r.read(32)
        wrapNonce = try r.read(12)
        wrappedKey = try r.read(48)
        let length = Int(try r.readUInt32())
        guard length >= 16, length <= Self.maximumBodySize else {
            throw KeychainError(.corruptFile, reason: "body length \(length) is out of range")
        }
        bodyNonce = try r.read(12)
        guard r.remaining >= length else {
            throw KeychainError(.truncatedFile, reason: "the vault file is \(length - r.remaining) bytes short")
        }
        body = try r.read(length)
        guard r.remaining == 0 else {
            throw KeychainError(.corruptFile, reason: "\(r.remaining) bytes after the body")
        }
        prefix = Array(bytes[0..<131])
    }

    /// The file key, unwrapped with the passphrase.
    func fileKey(passphrase: String, policy: KDFPolicy) throws(KeychainError) -> SymmetricKey {
        let kek = try Passphrase.deriveKey(passphrase, salt: salt, parameters: kdf, policy: policy)
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: wrapNonce), ciphertext: wrappedKey[0..<32], tag: wrappedKey[32...])
            let key = try AES.GCM.open(
                box, using: kek, authenticating: Domain.bytes(Domain.fileKeyWrap) + prefix[0..<67])
            return SymmetricKey(data: key)
        } catch {
            throw KeychainError(.wrongPassphrase, reason: "the passphrase does not open this vault")
        }
    }

    /// The decrypted body.
    func open(fileKey: SymmetricKey) throws(KeychainError) -> [UInt8] {
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bodyNonce), ciphertext: body[0..<(body.count - 16)],
                tag: body[(body.count - 16)...])
            return Array(try AES.GCM.open(box, using: fileKey, authenticating: Domain.bytes(Domain.fileBody) + prefix))
        } catch {
            throw KeychainError(.corruptFile, reason: "the vault body fails authentication")
        }
    }

    /// A new file: wraps `fileKey` under the passphrase (new salt) and encrypts `body`.
    static func make(
        fileId: [UInt8], passphrase: String, parameters: ScryptParameters, policy: KDFPolicy, fileKey: SymmetricKey,
        body: [UInt8]
    ) throws(KeychainError) -> [UInt8] {
        let salt = SecureRandom.bytes(32)
        let kek = try Passphrase.deriveKey(passphrase, salt: salt, parameters: parameters, policy: policy)
        var header = BinaryWriter()
        header.write(magic)
        header.write(format)
        header.write(fileId)
        header.write(UInt8(1))
        header.write(parameters.logN)
        header.write(parameters.r)
        header.write(parameters.p)
        header.write(salt)
        do {
            let keyBytes = fileKey.withUnsafeBytes { Array($0) }
            let wrap = try AES.GCM.seal(
                keyBytes, using: kek, nonce: AES.GCM.Nonce(),
                authenticating: Domain.bytes(Domain.fileKeyWrap) + header.bytes)
            header.write(Array(wrap.nonce))
            header.write(Array(wrap.ciphertext) + Array(wrap.tag))
        } catch {
            throw KeychainError(.cryptoFailure, reason: "wrapping the file key failed")
        }
        return try reseal(headerPrefix: header.bytes, fileKey: fileKey, body: body)
    }

    /// The same file (same file ID, salt and wrapped key) with a new body.
    func replacingBody(_ body: [UInt8], fileKey: SymmetricKey) throws(KeychainError) -> [UInt8] {
        try Self.reseal(headerPrefix: Array(prefix[0..<127]), fileKey: fileKey, body: body)
    }

    private static func reseal(headerPrefix: [UInt8], fileKey: SymmetricKey, body: [UInt8]) throws(KeychainError)
        -> [UInt8]
    {
        guard body.count + 16 <= maximumBodySize else {
            throw KeychainError(.corruptFile, reason: "the vault is larger than \(maximumBodySize) bytes")
        }
        var w = BinaryWriter()
        w.write(headerPrefix)
        w.write(UInt32(body.count + 16))
        let associated = Domain.bytes(Domain.fileBody) + w.bytes
        let nonce = AES.GCM.Nonce()
        w.write(Array(nonce))
        do {
            let box = try AES.GCM.seal(body, using: fileKey, nonce: nonce, authenticating: associated)
            w.write(Array(box.ciphertext) + Array(box.tag))
        } catch {
            throw KeychainError(.cryptoFailure, reason: "encrypting the vault body failed")
        }
        return w.bytes
    }
}
