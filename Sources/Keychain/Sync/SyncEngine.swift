import Crypto
import Foundation

/// The client side of sync: checking what a server answers against the vault's authenticated manifest, merging
/// it into this device's state, and building the next push. Everything here is pure (state in, state out); the
/// caller saves only when a whole sync succeeded.
enum SyncEngine {
    struct Applied {
        var received = 0
        var conflictCopies = 0
    }

    // MARK: Pull

    /// Checks a pull answer and merges it into `vault`. Any inconsistency is an error and leaves `vault` as it was:
    /// - `wrongVault`: the answer is for another vault;
    /// - `rollbackDetected`: a vault version, key epoch or item version older than one this device saw, or no
    ///   vault where this device saw one;
    /// - `manifestMismatch`: a record the manifest does not list with that version and digest (planted, replayed,
    ///   changed), a record it lists but the server withheld, an item the manifest dropped, or a different manifest
    ///   for a version already seen;
    /// - `recordAuthenticationFailed` / `recordMismatch`: a record that fails to open or names another vault,
    ///   item, version or type (swapped);
    /// - `deviceRemoved`: the manifest's device list no longer holds this device (with this key).
    static func apply(
        _ pull: PullResponse, to vault: inout VaultMembership, device: LocalDevice, now: Date,
        requireMembership: Bool = true
    ) throws(KeychainError) -> Applied {
        var applied = Applied()
        guard let serverVault = pull.vault, pull.version > 0 else {
            guard vault.highestSeenVersion == 0 else {
                throw KeychainError(
                    .rollbackDetected,
                    reason: "the server has no vault; this device saw version \(vault.highestSeenVersion)")
            }
            guard pull.manifest == nil, pull.records.isEmpty else {
                throw KeychainError(.malformedMessage, reason: "records without a vault")
            }
            return applied
        }
        guard serverVault == vault.vaultId else {
            throw KeychainError(.wrongVault, reason: "the server answered for another vault")
        }
        guard pull.version >= vault.highestSeenVersion else {
            throw KeychainError(
                .rollbackDetected,
                reason: "the server offers version \(pull.version); this device saw \(vault.highestSeenVersion)")
        }
        guard let manifestBytes = pull.manifest else {
            throw KeychainError(.malformedMessage, reason: "a vault version without a manifest")
        }
        let manifestRecord = try SealedRecord(bytes: manifestBytes)
        if pull.version == vault.syncedVersion {
            guard let digest = vault.manifestDigest, digest == manifestRecord.digest else {
                throw KeychainError(.manifestMismatch, reason: "a different manifest for version \(pull.version)")
            }
            guard pull.records.isEmpty else {
                throw KeychainError(.manifestMismatch, reason: "records the current manifest does not account for")
            }
            return applied
        }

        // The key: the current one, or the next epoch's, wrapped for this device by a device it trusts.
        var key = vault.key
        if manifestRecord.epoch < key.epoch {
            throw KeychainError(
                .rollbackDetected,
                reason: "the manifest uses key epoch \(manifestRecord.epoch); this device has \(key.epoch)")
        }
        if manifestRecord.epoch > key.epoch {
            key = try unwrapRotatedKey(pull.wraps, epoch: manifestRecord.epoch, vault: vault, device: device)
        }
        let manifest = try Manifest.open(manifestRecord, key: key, vaultId: vault.vaultId, version: pull.version)
        let me = manifest.roster.first { $0.id == device.id }
        guard requireMembership ? me?.publicKey == device.key.publicKey : me == nil else {
            throw KeychainError(.deviceRemoved, reason: "this device is not in the vault's device list")
        }

        // Records against the manifest.
        var received: [ItemID: WireRecord] = [:]
        for r in pull.records {
            guard let id = ItemID(bytes: r.id), received[id] == nil else {
                throw KeychainError(.malformedMessage, reason: "a record is listed twice")
            }
            guard let entry = manifest.entries[id], entry.version == r.version,
                entry.digest == Array(SHA256.hash(data: r.blob))
            else {
                throw KeychainError(
                    .manifestMismatch, reason: "a record the manifest does not list with this version and content")
            }
            received[id] = r
        }
        for (id, local) in vault.entries {
            guard let synced = local.synced else { continue }
            guard let entry = manifest.entries[id] else {
                throw KeychainError(.manifestMismatch, reason: "the manifest dropped an item this device has")
            }
            if entry.version < synced.version {
                throw KeychainError(
                    .rollbackDetected, reason: "an item at version \(entry.version); this device has \(synced.version)")
            }
            if entry.version == synced.version && entry.digest != synced.digest {
                throw KeychainError(.manifestMismatch, reason: "an item changed without a new version")
            }
        }
        for (id, entry) in manifest.entries where vault.entries[id]?.synced?.version != entry.version {
            guard received[id] != nil else {
                throw KeychainError(.manifestMismatch, reason: "the server withheld a record the manifest lists")
            }
        }

        // Open and merge.
        var next = vault
        for (id, wire) in received.sorted(by: { $0.key < $1.key }) {
            let entry = manifest.entries[id]!
            if vault.entries[id]?.synced?.version == entry.version { continue }
            let record = try SealedRecord(bytes: wire.blob)
            try record.expect(
                type: entry.tombstone ? .tombstone : .item, vaultId: vault.vaultId, recordId: id.bytes,
                version: entry.version)
            let plaintext = try record.open(with: key)
            let synced: SyncedRecord
            if entry.tombstone {
                let deleted = try TombstoneCoding.decode(plaintext, id: id)
                synced = SyncedRecord(version: entry.version, digest: entry.digest, item: nil, deletedAt: deleted)
            } else {
                let item = try ItemCoding.decode(plaintext)
                guard item.id == id else { throw KeychainError(.recordMismatch, reason: "an item names another ID") }
                synced = SyncedRecord(version: entry.version, digest: entry.digest, item: item, deletedAt: nil)
            }
            applied.received += 1
            var local = next.entries[id] ?? ItemEntry()
            let base = local.synced?.item
            switch local.pending {
            case nil, .delete:
                // Nothing local, or a local deletion: a remote edit beats the deletion; a remote deletion agrees.
                local = ItemEntry(synced: synced, pending: nil)
            case .put(let mine):
                if let theirs = synced.item {
                    let outcome = Merge.merge(base: base, local: mine, remote: theirs, now: now)
                    local = ItemEntry(synced: synced, pending: outcome.merged == theirs ? nil : .put(outcome.merged))
                    if let copy = outcome.conflictCopy {
                        next.entries[copy.id] = ItemEntry(synced: nil, pending: .put(copy))
                        applied.conflictCopies += 1
                    }
                } else {
                    // Deleted there, edited here: the edit wins and is pushed as the item's next version.
                    local = ItemEntry(synced: synced, pending: .put(mine))
                }
            }
            next.entries[id] = local
        }
        next.key = key
        next.roster = manifest.roster
        next.recovery = manifest.recovery
        next.sharingKey = try DeviceKey(rawPrivateKey: manifest.sharingKey)
        next.syncedVersion = pull.version
        next.highestSeenVersion = max(vault.highestSeenVersion, pull.version)
        next.manifestDigest = manifestRecord.digest
        next.rosterChanges.added.removeAll { added in manifest.roster.contains { $0.id == added.id } }
        next.rosterChanges.removed.removeAll { id in !manifest.roster.contains { $0.id == id } }
        vault = next
        return applied
    }

    /// The vault key of `epoch`, from a wrap addressed to this device by a device already in its device list.
    static func unwrapRotatedKey(_ wraps: [WireWrap], epoch: UInt32, vault: VaultMembership, device: LocalDevice)
        throws(KeychainError) -> VaultKey
    {
        guard let wrap = wraps.first(where: { $0.device == device.id && $0.epoch == epoch }) else {
            throw KeychainError(
                .deviceRemoved, reason: "the vault moved to a new key and this device was not given it")
        }
        guard let sender = vault.roster.first(where: { $0.id == wrap.sender }) else {
            throw KeychainError(.untrustedDeviceKey, reason: "a key wrap from a device this device does not trust")
        }
        let box = try HPKEBox(bytes: wrap.blob)
        let bytes = try box.open(
            with: device.key.privateKey,
            info: deviceWrapInfo(vaultId: vault.vaultId, recipient: device.id, sender: sender.id, epoch: epoch),
            expecting: .auth, sender: try DeviceKey.publicKey(sender.publicKey))
        return try VaultKey(epoch: epoch, bytes: bytes)
    }

    static func deviceWrapInfo(vaultId: [UInt8], recipient: [UInt8], sender: [UInt8], epoch: UInt32) -> [UInt8] {
        var w = BinaryWriter()
        w.write(Domain.bytes(Domain.deviceWrap))
        w.write(vaultId)
        w.write(recipient)
        w.write(sender)
        w.write(epoch)
        return w.bytes
    }

    static func recoveryWrapInfo(vaultId: [UInt8], epoch: UInt32) -> [UInt8] {
        var w = BinaryWriter()
        w.write(Domain.bytes(Domain.recoveryWrap))
        w.write(vaultId)
        w.write(epoch)
        return w.bytes
    }

    static let recoveryPSKId = Domain.bytes(Domain.recoveryWrap)

    // MARK: Push

    /// The push for this device's pending changes, and the state to adopt if the server accepts it. A pending
    /// device removal rotates the key: a new epoch key, every record re-sealed under it at its next version, and
    /// the key wrapped for each remaining device.
    static func makePush(_ vault: VaultMembership, device: LocalDevice, now: Date) throws(KeychainError)
        -> (PushRequest, VaultMembership)
    {
        var next = vault
        let newVersion = vault.syncedVersion + 1
        var roster = vault.roster
        for id in vault.rosterChanges.removed where id != device.id { roster.removeAll { $0.id == id } }
        for added in vault.rosterChanges.added where !roster.contains(where: { $0.id == added.id }) {
            roster.append(added)
        }
        let rotate = !vault.rosterChanges.removed.isEmpty
        let key = rotate ? VaultKey.random(epoch: vault.key.epoch + 1) : vault.key

        var records: [WireRecord] = []
        var entries: [ItemID: Manifest.Entry] = [:]
        for (id, entry) in vault.entries.sorted(by: { $0.key < $1.key }) {
            if !rotate && entry.pending == nil, let synced = entry.synced {
                entries[id] = Manifest.Entry(
                    version: synced.version, tombstone: synced.item == nil, digest: synced.digest)
                continue
            }
            let version = (entry.synced?.version ?? 0) + 1
            let record: SealedRecord
            let synced: SyncedRecord
            if let item = entry.current {
                record = try SealedRecord.seal(
                    ItemCoding.encode(item), type: .item, vaultId: vault.vaultId, recordId: id.bytes, version: version,
                    key: key)
                synced = SyncedRecord(version: version, digest: record.digest, item: item, deletedAt: nil)
            } else {
                let deleted: Date
                if case .delete(let d) = entry.pending { deleted = d } else { deleted = entry.synced?.deletedAt ?? now }
                record = try SealedRecord.seal(
                    TombstoneCoding.encode(id: id, deleted: deleted), type: .tombstone, vaultId: vault.vaultId,
                    recordId: id.bytes, version: version, key: key)
                synced = SyncedRecord(version: version, digest: record.digest, item: nil, deletedAt: deleted)
            }
            records.append(WireRecord(id: id.bytes, version: version, blob: record.bytes))
            entries[id] = Manifest.Entry(version: version, tombstone: synced.item == nil, digest: synced.digest)
            next.entries[id] = ItemEntry(synced: synced, pending: nil)
        }

        let manifest = Manifest(
            vaultId: vault.vaultId, version: newVersion, epoch: key.epoch, author: device.id, roster: roster,
            recovery: vault.recovery, sharingKey: vault.sharingKey.rawPrivateKey, entries: entries)
        let sealedManifest = try manifest.seal(with: key)

        let addedIds = Set(vault.rosterChanges.added.map(\.id))
        var wraps: [WireWrap] = []
        for member in roster where member.id != device.id && (rotate || addedIds.contains(member.id)) {
            let box = try HPKEBox.seal(
                key.bytes, to: try DeviceKey.publicKey(member.publicKey),
                info: deviceWrapInfo(vaultId: vault.vaultId, recipient: member.id, sender: device.id, epoch: key.epoch),
                sender: device.key.privateKey)
            wraps.append(WireWrap(device: member.id, sender: device.id, epoch: key.epoch, blob: box.bytes))
        }
        let recoveryBox = try HPKEBox.seal(
            key.bytes, to: try DeviceKey.publicKey(vault.recovery.publicKey),
            info: recoveryWrapInfo(vaultId: vault.vaultId, epoch: key.epoch),
            psk: (SymmetricKey(data: vault.recovery.psk), recoveryPSKId))

        let request = PushRequest(
            vault: vault.vaultId, expectedVersion: vault.syncedVersion, manifest: sealedManifest.bytes,
            records: records,
            wraps: wraps, recovery: WireRecovery(epoch: key.epoch, blob: recoveryBox.bytes),
            devices: roster.map { WireDevice(id: $0.id, publicKey: $0.publicKey) })
        next.key = key
        next.roster = roster
        next.syncedVersion = newVersion
        next.highestSeenVersion = max(vault.highestSeenVersion, newVersion)
        next.manifestDigest = sealedManifest.digest
        next.rosterChanges = RosterChanges()
        return (request, next)
    }
}
