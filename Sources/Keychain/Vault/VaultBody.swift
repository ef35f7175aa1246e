import CBOR
import Foundation

/// The vault file's body, after decryption: canonical CBOR.
///
/// ```cddl
/// body = {
///   "v": 1,
///   "device": { "id": bstr .size 16, "key": bstr .size 32, "name": tstr },   ; key: X25519 private key
///   ? "vault": vault,
///   ? "join": { "request": bstr .size 16, "secret": bstr .size 8, "created": int },
/// }
/// vault = {
///   "id": bstr .size 16, "epoch": uint, "key": bstr .size 32,               ; the vault key of that epoch
///   "devices": [* roster-entry],
///   "recovery": { "key": bstr .size 32, "psk": bstr .size 32 },             ; recovery public key and PSK
///   "sharing": bstr .size 32,                                               ; sharing private key (X25519)
///   "synced": uint, "highest": uint, ? "manifest": bstr .size 32,
///   ? "lastSynced": int,                                                    ; Unix ms of the last successful sync
///   "rosterChanges": { "added": [* roster-entry], "removed": [* bstr .size 16] },
///   "entries": [* entry],
///   "sent": [* { "id": bstr .size 16, "to": bstr .size 32, "item": bstr .size 16, "title": tstr, "created": int }],
///   "accepted": [* bstr .size 16],
/// }
/// roster-entry = { "id": bstr .size 16, "key": bstr .size 32, "name": tstr, "added": int }
/// entry = { "id": bstr .size 16,
///           ? "synced": { "version": uint, "digest": bstr .size 32, ? "item": item, ? "deleted": int },
///           ? "put": item, ? "delete": int }                               ; item: see ItemCoding
/// ```
enum VaultBody {
    static let version: Int64 = 1

    static func encode(_ state: VaultState) -> [UInt8] {
        var entries: [CBORMapEntry] = [
            CBORMapEntry("v", CBOR(version)),
            CBORMapEntry(
                "device",
                .map([
                    CBORMapEntry("id", .byteString(state.device.id)),
                    CBORMapEntry("key", .byteString(state.device.key.rawPrivateKey)),
                    CBORMapEntry("name", .textString(state.device.name)),
                ])),
        ]
        if let vault = state.vault { entries.append(CBORMapEntry("vault", encode(vault))) }
        if let join = state.join {
            entries.append(
                CBORMapEntry(
                    "join",
                    .map([
                        CBORMapEntry("request", .byteString(join.requestId)),
                        CBORMapEntry("secret", .byteString(join.secret)),
                        CBORMapEntry("created", CBOR(ItemTime.milliseconds(join.created))),
                    ])))
        }
        return CBOREncoder.encode(.map(entries))
    }

    static func encode(_ v: VaultMembership) -> CBOR {
        var map: [CBORMapEntry] = [
            CBORMapEntry("id", .byteString(v.vaultId)),
            CBORMapEntry("epoch", .unsigned(UInt64(v.key.epoch))),
            CBORMapEntry("key", .byteString(v.key.bytes)),
            CBORMapEntry("devices", .array(v.roster.map(encode))),
            CBORMapEntry(
                "recovery",
                .map([
                    CBORMapEntry("key", .byteString(v.recovery.publicKey)),
                    CBORMapEntry("psk", .byteString(v.recovery.psk)),
                ])),
            CBORMapEntry("sharing", .byteString(v.sharingKey.rawPrivateKey)),
            CBORMapEntry("synced", .unsigned(v.syncedVersion)),
            CBORMapEntry("highest", .unsigned(v.highestSeenVersion)),
            CBORMapEntry(
                "rosterChanges",
                .map([
                    CBORMapEntry("added", .array(v.rosterChanges.added.map(encode))),
                    CBORMapEntry("removed", .array(v.rosterChanges.removed.map { .byteString($0) })),
                ])),
            CBORMapEntry(
                "entries", .array(v.entries.sorted { $0.key < $1.key }.map { encode(id: $0.key, entry: $0.value) })),
            CBORMapEntry(
                "sent",
                .array(
                    v.sentShares.map { s in
                        .map([
                            CBORMapEntry("id", .byteString(s.id)), CBORMapEntry("to", .byteString(s.recipientKey)),
                            CBORMapEntry("item", .byteString(s.itemId.bytes)),
                            CBORMapEntry("title", .textString(s.itemTitle)),
                            CBORMapEntry("created", CBOR(ItemTime.milliseconds(s.created))),
                        ])
                    })),
            CBORMapEntry(
                "accepted", .array(v.acceptedShares.sorted { $0.lexicographicallyPrecedes($1) }.map { .byteString($0) })
            ),
        ]
        if let digest = v.manifestDigest { map.append(CBORMapEntry("manifest", .byteString(digest))) }
        if let lastSynced = v.lastSynced {
            map.append(CBORMapEntry("lastSynced", CBOR(ItemTime.milliseconds(lastSynced))))
        }
        return .map(map)
    }

    static func encode(_ r: RosterEntry) -> CBOR {
        .map([
            CBORMapEntry("id", .byteString(r.id)), CBORMapEntry("key", .byteString(r.publicKey)),
            CBORMapEntry("name", .textString(r.name)), CBORMapEntry("added", CBOR(ItemTime.milliseconds(r.added))),
        ])
    }

    static func encode(id: ItemID, entry: ItemEntry) -> CBOR {
        var map = [CBORMapEntry("id", .byteString(id.bytes))]
        if let s = entry.synced {
            var synced = [
                CBORMapEntry("version", .unsigned(s.version)), CBORMapEntry("digest", .byteString(s.digest)),
            ]
            if let item = s.item { synced.append(CBORMapEntry("item", ItemCoding.cbor(item))) }
            if let deleted = s.deletedAt {
                synced.append(CBORMapEntry("deleted", CBOR(ItemTime.milliseconds(deleted))))
            }
            map.append(CBORMapEntry("synced", .map(synced)))
        }
        switch entry.pending {
        case .put(let item): map.append(CBORMapEntry("put", ItemCoding.cbor(item)))
        case .delete(let date): map.append(CBORMapEntry("delete", CBOR(ItemTime.milliseconds(date))))
        case nil: break
        }
        return .map(map)
    }

    // MARK: Decoding

    static func decode(_ bytes: [UInt8]) throws(KeychainError) -> VaultState {
        var f = try CBORFields(decoding: bytes, code: .corruptFile, what: "vault body")
        guard try f.int("v") == version else {
            throw KeychainError(.unsupportedFormatVersion, reason: "vault body format is not \(version)")
        }
        var d = try CBORFields(try f.required("device"), code: .corruptFile, what: "device")
        let device = LocalDevice(
            id: try d.bytes("id", count: 16...16),
            key: try DeviceKey(rawPrivateKey: try d.bytes("key", count: 32...32)),
            name: try d.text("name", maximum: ItemLimits.nameBytes))
        try d.finish()
        var vault: VaultMembership?
        if let v = f.optional("vault") { vault = try decodeMembership(v) }
        var join: PendingJoin?
        if let j = f.optional("join") {
            var jf = try CBORFields(j, code: .corruptFile, what: "pending join")
            join = PendingJoin(
                requestId: try jf.bytes("request", count: 16...16), secret: try jf.bytes("secret", count: 1...64),
                created: try jf.time("created"))
            try jf.finish()
        }
        try f.finish()
        return VaultState(device: device, vault: vault, join: join)
    }

    static func decodeMembership(_ item: CBOR) throws(KeychainError) -> VaultMembership {
        var f = try CBORFields(item, code: .corruptFile, what: "vault")
        let vaultId = try f.bytes("id", count: 16...16)
        let epoch = try f.unsigned("epoch")
        guard epoch <= UInt64(UInt32.max) else { throw KeychainError(.corruptFile, reason: "vault epoch out of range") }
        let key = try VaultKey(epoch: UInt32(epoch), bytes: try f.bytes("key", count: 32...32))
        var roster: [RosterEntry] = []
        for r in try f.array("devices", maximum: 1000) { roster.append(try decodeRoster(r, code: .corruptFile)) }
        var rf = try CBORFields(try f.required("recovery"), code: .corruptFile, what: "recovery")
        let recovery = RecoveryPublicInfo(
            publicKey: try rf.bytes("key", count: 32...32), psk: try rf.bytes("psk", count: 32...32))
        try rf.finish()
        let sharing = try DeviceKey(rawPrivateKey: try f.bytes("sharing", count: 32...32))
        var entries: [ItemID: ItemEntry] = [:]
        for e in try f.array("entries") {
            let (id, entry) = try decodeEntry(e)
            guard entries[id] == nil else { throw KeychainError(.corruptFile, reason: "an item appears twice") }
            entries[id] = entry
        }
        var sent: [SentShare] = []
        for s in try f.array("sent", maximum: 100_000) {
            var sf = try CBORFields(s, code: .corruptFile, what: "sent share")
            sent.append(
                SentShare(
                    id: try sf.bytes("id", count: 16...16), recipientKey: try sf.bytes("to", count: 32...32),
                    itemId: ItemID(unchecked: try sf.bytes("item", count: 16...16)),
                    itemTitle: try sf.text("title", maximum: 4 * ItemLimits.nameBytes),
                    created: try sf.time("created")))
            try sf.finish()
        }
        var accepted: Set<[UInt8]> = []
        for a in try f.array("accepted", maximum: 1_000_000) {
            guard case .byteString(let b) = a, b.count == 16 else {
                throw KeychainError(.corruptFile, reason: "accepted share id")
            }
            accepted.insert(b)
        }
        var cf = try CBORFields(try f.required("rosterChanges"), code: .corruptFile, what: "device changes")
        var changes = RosterChanges()
        for r in try cf.array("added", maximum: 1000) { changes.added.append(try decodeRoster(r, code: .corruptFile)) }
        for r in try cf.array("removed", maximum: 1000) {
            guard case .byteString(let b) = r, b.count == 16 else {
                throw KeychainError(.corruptFile, reason: "removed device id")
            }
            changes.removed.append(b)
        }
        try cf.finish()
        let membership = VaultMembership(
            vaultId: vaultId, key: key, roster: roster, recovery: recovery, sharingKey: sharing, entries: entries,
            syncedVersion: try f.unsigned("synced"), highestSeenVersion: try f.unsigned("highest"),
            manifestDigest: try f.optionalBytes("manifest", count: 32...32), rosterChanges: changes,
            sentShares: sent, acceptedShares: accepted, lastSynced: try f.optionalTime("lastSynced"))
        try f.finish()
        return membership
    }

    static func decodeRoster(_ item: CBOR, code: KeychainError.Code) throws(KeychainError) -> RosterEntry {
        var f = try CBORFields(item, code: code, what: "device entry")
        let entry = RosterEntry(
            id: try f.bytes("id", count: 16...16), publicKey: try f.bytes("key", count: 32...32),
            name: try f.text("name", maximum: ItemLimits.nameBytes),
            added: try f.time("added"))
        try f.finish()
        return entry
    }

    static func decodeEntry(_ item: CBOR) throws(KeychainError) -> (ItemID, ItemEntry) {
        var f = try CBORFields(item, code: .corruptFile, what: "item entry")
        let id = ItemID(unchecked: try f.bytes("id", count: 16...16))
        var entry = ItemEntry()
        if let s = f.optional("synced") {
            var sf = try CBORFields(s, code: .corruptFile, what: "synced record")
            let item = try sf.optional("item").map { (i) throws(KeychainError) in try decodeItem(i, id: id) }
            entry.synced = SyncedRecord(
                version: try sf.unsigned("version"), digest: try sf.bytes("digest", count: 32...32), item: item,
                deletedAt: try sf.optionalTime("deleted"))
            try sf.finish()
        }
        if let p = f.optional("put") {
            entry.pending = .put(try decodeItem(p, id: id))
        } else if let d = try f.optionalTime("delete") {
            entry.pending = .delete(d)
        }
        try f.finish()
        return (id, entry)
    }

    private static func decodeItem(_ item: CBOR, id: ItemID) throws(KeychainError) -> KeychainItem {
        let decoded: KeychainItem
        do {
            decoded = try ItemCoding.decode(item)
        } catch {
            throw KeychainError(.corruptFile, reason: "a stored item is malformed (\(error.code))")
        }
        guard decoded.id == id else { throw KeychainError(.corruptFile, reason: "a stored item has another id") }
        return decoded
    }
}
