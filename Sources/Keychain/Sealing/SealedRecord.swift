import Crypto
import Foundation

/// A record sealed under the vault key: an item, a tombstone (a deleted item) or the vault's manifest. These are
/// the bytes the sync server stores; it can read none of them and change none without detection.
///
/// Field layout (big-endian):
/// ```
/// offset  size  field
///  0       1    format            1 (the only format; anything else is refused, never "upgraded")
///  1       1    type              1 item, 2 tombstone, 3 manifest
///  2      16    vault ID
/// 18      16    record ID         the item ID; 16 zero bytes for the manifest
/// 34       8    version           the item's version; the vault version for the manifest
/// 42       4    key epoch         which vault key sealed it
/// 46      12    nonce             random
/// 58       n    ciphertext        AES-256-GCM
/// 58+n    16    tag
/// ```
/// The associated data is `"sesame-keychain/record/v1" || bytes[0..<46]`: the format, type, vault, record,
/// version and epoch are all authenticated, so a record moved to another item, vault, version or record type,
/// or replayed under another version number, fails to open. Whether it is an item of one kind or another is inside
/// the ciphertext (the record type is kind-independent).
struct SealedRecord: Sendable, Hashable {
    enum RecordType: UInt8, Sendable {
        case item = 1
        case tombstone = 2
        case manifest = 3
    }

    static let format: UInt8 = 1
    static let headerSize = 46
    static let overhead = 46 + 12 + 16
    /// The largest record accepted; an item is a few kilobytes, a manifest of 100,000 items a few megabytes.
    static let maximumSize = 16 * 1024 * 1024

    let type: RecordType
    let vaultId: [UInt8]
    let recordId: [UInt8]
    let version: UInt64
    let epoch: UInt32
    /// The whole record, as stored and sent.
    let bytes: [UInt8]

    /// Parses the header; the ciphertext is only checked by ``open(with:)``.
    init(bytes: [UInt8]) throws(KeychainError) {
        guard bytes.count <= Self.maximumSize else {
            throw KeychainError(.malformedRecord, reason: "record longer than \(Self.maximumSize) bytes")
        }
        var reader = BinaryReader(bytes, shortCode: .malformedRecord, what: "sealed record")
        let format = try reader.readUInt8()
        guard format == Self.format else {
            throw KeychainError(.unsupportedFormat, reason: "record format \(format) is not \(Self.format)")
        }
        guard let type = RecordType(rawValue: try reader.readUInt8()) else {
            throw KeychainError(.malformedRecord, reason: "unknown record type")
        }
        self.type = type
        self.vaultId = try reader.read(16)
        self.recordId = try reader.read(16)
        self.version = try reader.readUInt64()
        self.epoch = try reader.readUInt32()
        guard reader.remaining >= 12 + 16 else {
            throw KeychainError(.malformedRecord, reason: "record too short for its nonce and tag")
        }
        self.bytes = bytes
    }

    /// Seals `plaintext`.
    static func seal(
        _ plaintext: [UInt8], type: RecordType, vaultId: [UInt8], recordId: [UInt8], version: UInt64, key: VaultKey
    ) throws(KeychainError) -> SealedRecord {
        var header = BinaryWriter()
        header.write(Self.format)
        header.write(type.rawValue)
        header.write(vaultId)
        header.write(recordId)
        header.write(version)
        header.write(key.epoch)
        do {
            let box = try AES.GCM.seal(
                plaintext, using: key.key, nonce: AES.GCM.Nonce(),
                authenticating: Domain.bytes(Domain.record) + header.bytes)
            return try SealedRecord(bytes: header.bytes + Array(box.nonce) + Array(box.ciphertext) + Array(box.tag))
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.cryptoFailure, reason: "AES-GCM sealing failed")
        }
    }

    /// Opens the record with the vault key of its epoch.
    func open(with key: VaultKey) throws(KeychainError) -> [UInt8] {
        guard key.epoch == epoch else {
            throw KeychainError(.recordMismatch, reason: "record is sealed under key epoch \(epoch), not \(key.epoch)")
        }
        let header = Array(bytes[0..<Self.headerSize])
        let nonceStart = Self.headerSize
        let tagStart = bytes.count - 16
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes[nonceStart..<(nonceStart + 12)]),
                ciphertext: bytes[(nonceStart + 12)..<tagStart], tag: bytes[tagStart...])
            return Array(try AES.GCM.open(box, using: key.key, authenticating: Domain.bytes(Domain.record) + header))
        } catch {
            throw KeychainError(.recordAuthenticationFailed, reason: "a \(type) record failed authentication")
        }
    }

    /// Checks the header against where the record was found before opening it.
    func expect(type: RecordType, vaultId: [UInt8], recordId: [UInt8], version: UInt64) throws(KeychainError) {
        guard self.type == type else {
            throw KeychainError(.recordMismatch, reason: "expected a \(type) record, found a \(self.type) record")
        }
        guard self.vaultId == vaultId else { throw KeychainError(.recordMismatch, reason: "record of another vault") }
        guard self.recordId == recordId else {
            throw KeychainError(.recordMismatch, reason: "record of another item")
        }
        guard self.version == version else {
            throw KeychainError(.recordMismatch, reason: "record version \(self.version) where \(version) was expected")
        }
    }

    /// SHA-256 of the whole record, as the manifest lists it.
    var digest: [UInt8] { Array(SHA256.hash(data: bytes)) }
}
