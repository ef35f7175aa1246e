import Foundation

/// What a sync did.
public struct SyncReport: Sendable, Hashable {
    /// Records received and merged.
    public var received: Int
    /// Records pushed.
    public var sent: Int
    /// Conflict copies made by the merge rule.
    public var conflictCopies: Int
    /// The vault version after the sync.
    public var version: UInt64
    /// Devices the server lists that the vault's own device list does not hold (a join in progress, or a server
    /// trying to slip in a key). They are never given anything.
    public var unknownServerDevices: [WireDevice]
}

extension Keychain {
    /// Pulls, checks, merges and pushes until the server holds this device's changes (a push that finds the vault
    /// moved on pulls again, at most a few times). Nothing is written locally unless the sync succeeds; call
    /// ``save()`` afterwards.
    public func sync(with transport: any SyncTransport) async throws(KeychainError) -> SyncReport {
        var vault = try membership()
        var report = SyncReport(
            received: 0, sent: 0, conflictCopies: 0, version: vault.syncedVersion, unknownServerDevices: [])
        for _ in 0..<5 {
            let pull = try await transport.pull(since: vault.syncedVersion, device: state.device.id)
            let applied = try SyncEngine.apply(pull, to: &vault, device: state.device, now: clock.now)
            report.received += applied.received
            report.conflictCopies += applied.conflictCopies
            report.unknownServerDevices = try Self.checkServerDevices(pull.devices, roster: vault.roster)
            guard vault.hasPendingChanges else {
                vault.lastSynced = ItemTime.truncate(clock.now)
                state.vault = vault
                report.version = vault.syncedVersion
                return report
            }
            var (request, next) = try SyncEngine.makePush(vault, device: state.device, now: clock.now)
            do throws(KeychainError) {
                let answer = try await transport.push(request)
                guard answer.version == request.expectedVersion + 1 else {
                    throw KeychainError(
                        .malformedMessage, reason: "the server reports an unexpected version after a push")
                }
                next.lastSynced = ItemTime.truncate(clock.now)
                state.vault = next
                report.sent += request.records.count
                report.version = next.syncedVersion
                return report
            } catch {
                guard error.code == .versionConflict else { throw error }
                continue
            }
        }
        throw KeychainError(.versionConflict, reason: "the vault kept changing on the server; try again")
    }

    /// A device the server lists under an ID the vault's device list holds, but with another key, is an attack
    /// (`untrustedDeviceKey`); devices it lists that the vault does not hold are returned for display.
    static func checkServerDevices(_ listed: [WireDevice], roster: [RosterEntry]) throws(KeychainError) -> [WireDevice]
    {
        var unknown: [WireDevice] = []
        for device in listed {
            if let member = roster.first(where: { $0.id == device.id }) {
                guard member.publicKey == device.publicKey else {
                    throw KeychainError(
                        .untrustedDeviceKey, reason: "the server lists a device of this vault with another key")
                }
            } else {
                unknown.append(device)
            }
        }
        return unknown
    }

    // MARK: Status

    /// What the vault holds and where it stands with the server.
    public var vaultStatus: VaultStatus? {
        guard let vault = state.vault else { return nil }
        var counts: [ItemKind: Int] = [:]
        for item in vault.items { counts[item.kind, default: 0] += 1 }
        return VaultStatus(
            vaultId: vault.vaultId, epoch: vault.key.epoch, itemCounts: counts, devices: vault.roster,
            syncedVersion: vault.syncedVersion, highestSeenVersion: vault.highestSeenVersion,
            pendingChanges: vault.entries.values.filter { $0.pending != nil }.count
                + vault.rosterChanges.added.count + vault.rosterChanges.removed.count,
            sharingKey: vault.sharingKey.publicKey, lastSynced: vault.lastSynced)
    }
}

/// A summary for `status`.
public struct VaultStatus: Sendable, Hashable {
    public let vaultId: [UInt8]
    public let epoch: UInt32
    public let itemCounts: [ItemKind: Int]
    public let devices: [RosterEntry]
    public let syncedVersion: UInt64
    public let highestSeenVersion: UInt64
    public let pendingChanges: Int
    public let sharingKey: [UInt8]
    public var sharingFingerprint: KeyFingerprint { KeyFingerprint(publicKey: sharingKey) }
    /// When this device last synced successfully; nil: never.
    public let lastSynced: Date?
}
