import CBOR
import Foundation

/// The vault's table of contents for one version, sealed under the vault key as a record of type "manifest"
/// (record ID all zero, version = the vault version). It is what makes the server's answers checkable: every
/// item's current version and the SHA-256 of its sealed record, the authenticated device list, and the
/// vault-wide secrets a newly joined or recovered device needs.
///
/// ```cddl
/// manifest = {
///   "v": 1,
///   "vault": bstr .size 16, "version": uint, "epoch": uint,
///   "author": bstr .size 16,                          ; the device that wrote this version
///   "devices": [* roster-entry],                      ; see VaultBody
///   "recovery": { "key": bstr .size 32, "psk": bstr .size 32 },
///   "sharing": bstr .size 32,                         ; the keychain's sharing private key
///   "items": [* [ bstr .size 16, uint, bool, bstr .size 32 ]],   ; id, version, tombstone?, SHA-256(record)
/// }
/// ```
struct Manifest: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        let version: UInt64
        let tombstone: Bool
        let digest: [UInt8]
    }

    static let zeroId = [UInt8](repeating: 0, count: 16)

    let vaultId: [UInt8]
    let version: UInt64
    let epoch: UInt32
    let author: [UInt8]
    let roster: [RosterEntry]
    let recovery: RecoveryPublicInfo
    let sharingKey: [UInt8]
    let entries: [ItemID: Entry]

    func seal(with key: VaultKey) throws(KeychainError) -> SealedRecord {
        try SealedRecord.seal(
            encode(), type: .manifest, vaultId: vaultId, recordId: Self.zeroId, version: version, key: key)
    }

    func encode() -> [UInt8] {
        CBOREncoder.encode(
            .map([
                CBORMapEntry("v", 1),
                CBORMapEntry("vault", .byteString(vaultId)),
                CBORMapEntry("version", .unsigned(version)),
                CBORMapEntry("epoch", .unsigned(UInt64(epoch))),
                CBORMapEntry("author", .byteString(author)),
                CBORMapEntry("devices", .array(roster.map(VaultBody.encode))),
                CBORMapEntry(
                    "recovery",
                    .map([
                        CBORMapEntry("key", .byteString(recovery.publicKey)),
                        CBORMapEntry("psk", .byteString(recovery.psk)),
                    ])),
                CBORMapEntry("sharing", .byteString(sharingKey)),
                CBORMapEntry(
                    "items",
                    .array(
                        entries.sorted { $0.key < $1.key }.map { id, e in
                            .array([
                                .byteString(id.bytes), .unsigned(e.version), .boolean(e.tombstone),
                                .byteString(e.digest),
                            ])
                        })),
            ]))
    }

    /// Opens and reads a manifest record, checking it is the manifest of `vaultId` at `version`.
    static func open(_ record: SealedRecord, key: VaultKey, vaultId: [UInt8], version: UInt64) throws(KeychainError)
        -> Manifest
    {
        try record.expect(type: .manifest, vaultId: vaultId, recordId: zeroId, version: version)
        var f = try CBORFields(decoding: try record.open(with: key), code: .malformedRecord, what: "manifest")
        guard try f.int("v") == 1 else { throw KeychainError(.unsupportedFormat, reason: "manifest format is not 1") }
        let vault = try f.bytes("vault", count: 16...16)
        let v = try f.unsigned("version")
        let epoch = try f.unsigned("epoch")
        guard vault == vaultId, v == version, epoch == UInt64(record.epoch) else {
            throw KeychainError(.recordMismatch, reason: "the manifest's contents disagree with its header")
        }
        let author = try f.bytes("author", count: 16...16)
        var roster: [RosterEntry] = []
        for r in try f.array("devices", maximum: 1000) {
            roster.append(try VaultBody.decodeRoster(r, code: .malformedRecord))
        }
        guard Set(roster.map(\.id)).count == roster.count else {
            throw KeychainError(.malformedRecord, reason: "a device appears twice in the manifest")
        }
        var rf = try CBORFields(try f.required("recovery"), code: .malformedRecord, what: "manifest recovery")
        let recovery = RecoveryPublicInfo(
            publicKey: try rf.bytes("key", count: 32...32), psk: try rf.bytes("psk", count: 32...32))
        try rf.finish()
        let sharing = try f.bytes("sharing", count: 32...32)
        var entries: [ItemID: Entry] = [:]
        for e in try f.array("items") {
            guard case .array(let parts) = e, parts.count == 4, case .byteString(let id) = parts[0], id.count == 16,
                case .unsigned(let version) = parts[1], case .boolean(let tombstone) = parts[2],
                case .byteString(let digest) = parts[3], digest.count == 32
            else { throw KeychainError(.malformedRecord, reason: "a manifest entry is malformed") }
            let itemId = ItemID(unchecked: id)
            guard entries[itemId] == nil else {
                throw KeychainError(.malformedRecord, reason: "an item is listed twice")
            }
            entries[itemId] = Entry(version: version, tombstone: tombstone, digest: digest)
        }
        try f.finish()
        return Manifest(
            vaultId: vault, version: v, epoch: UInt32(epoch), author: author, roster: roster, recovery: recovery,
            sharingKey: sharing, entries: entries)
    }
}

/// The plaintext of a tombstone record.
/// ```cddl
/// tombstone = { "v": 1, "id": bstr .size 16, "deleted": int }   ; deletion time, Unix milliseconds
/// ```
enum TombstoneCoding {
    static func encode(id: ItemID, deleted: Date) -> [UInt8] {
        CBOREncoder.encode(
            .map([
                CBORMapEntry("v", 1), CBORMapEntry("id", .byteString(id.bytes)),
                CBORMapEntry("deleted", CBOR(ItemTime.milliseconds(deleted))),
            ]))
    }

    static func decode(_ bytes: [UInt8], id: ItemID) throws(KeychainError) -> Date {
        var f = try CBORFields(decoding: bytes, code: .malformedRecord, what: "tombstone")
        guard try f.int("v") == 1 else { throw KeychainError(.unsupportedFormat, reason: "tombstone format is not 1") }
        guard try f.bytes("id", count: 16...16) == id.bytes else {
            throw KeychainError(.recordMismatch, reason: "a tombstone names another item")
        }
        let deleted = try f.time("deleted")
        try f.finish()
        return deleted
    }
}
