import Foundation

/// What a sync server keeps for one account and how it answers, written once so the in-memory transport (tests)
/// and the sync folder (``FileSyncTransport``) agree on the semantics, which `sesame serve` implements in SQL
/// (`SesameServer/Store/Areas/KeychainSync.swift`):
///
/// - A vault: its ID, its version (0 before the first push), the manifest of that version, and every record ever
///   pushed with the vault version at which it was last written (tombstones are records; nothing is deleted).
/// - A push is accepted only when `expectedVersion` equals the current version; the version then becomes
///   `expectedVersion + 1`. A record must move its item's version forward.
/// - Key wraps by (device, epoch); the latest recovery wrap; the device listing of the last push.
/// - Join requests and approvals by request ID; shares by ID, listed by recipient or sender key, removed by
///   their sender.
///
/// It stores only what the messages carry: opaque blobs, random identifiers, version numbers and public keys.
public struct SyncServerState: Sendable, Hashable {
    struct StoredRecord: Sendable, Hashable {
        var record: WireRecord
        var writtenAt: UInt64
    }

    var vault: [UInt8]?
    var version: UInt64 = 0
    var manifest: [UInt8]?
    var records: [[UInt8]: StoredRecord] = [:]
    var wraps: [WireWrap] = []
    var recovery: WireRecovery?
    var devices: [WireDevice] = []
    var joinRequests: [JoinRequest] = []
    var joinApprovals: [[UInt8]: JoinApproval] = [:]
    var shares: [ShareMessage] = []

    public init() {}

    func pull(since: UInt64, device: [UInt8]) -> PullResponse {
        PullResponse(
            vault: vault, version: version, manifest: manifest,
            records: records.values.filter { $0.writtenAt > since }.map(\.record).sorted {
                $0.id.lexicographicallyPrecedes($1.id)
            },
            wraps: wraps.filter { $0.device == device }, recovery: recovery, devices: devices)
    }

    mutating func push(_ request: PushRequest) throws(KeychainError) -> PushResponse {
        if let vault {
            guard vault == request.vault else { throw KeychainError(.wrongVault, reason: "push for another vault") }
        }
        guard request.expectedVersion == version else {
            throw KeychainError(.versionConflict, reason: "the vault is at version \(version)")
        }
        for record in request.records {
            if let stored = records[record.id], stored.record.version >= record.version {
                throw KeychainError(.malformedMessage, reason: "a record does not move its item's version forward")
            }
        }
        version += 1
        vault = request.vault
        manifest = request.manifest
        for record in request.records { records[record.id] = StoredRecord(record: record, writtenAt: version) }
        for wrap in request.wraps {
            wraps.removeAll { $0.device == wrap.device && $0.epoch == wrap.epoch }
            wraps.append(wrap)
        }
        recovery = request.recovery
        devices = request.devices
        let listed = Set(devices.map(\.id))
        wraps.removeAll { !listed.contains($0.device) }
        return PushResponse(version: version)
    }

    mutating func postJoinRequest(_ request: JoinRequest) {
        joinRequests.removeAll { $0.request == request.request }
        joinRequests.append(request)
    }

    mutating func postJoinApproval(_ approval: JoinApproval) throws(KeychainError) {
        guard joinRequests.contains(where: { $0.request == approval.request }) else {
            throw KeychainError(.transportFailure, reason: "no such join request")
        }
        joinApprovals[approval.request] = approval
        joinRequests.removeAll { $0.request == approval.request }
    }

    mutating func refuseJoin(request: [UInt8]) throws(KeychainError) {
        guard joinRequests.contains(where: { $0.request == request }) else {
            throw KeychainError(.transportFailure, reason: "no such join request")
        }
        joinRequests.removeAll { $0.request == request }
    }

    mutating func postShare(_ share: ShareMessage) {
        shares.removeAll { $0.id == share.id }
        shares.append(share)
    }

    mutating func revokeShare(id: [UInt8], sender: [UInt8]) throws(KeychainError) {
        guard shares.contains(where: { $0.id == id && $0.sender == sender }) else {
            throw KeychainError(.transportFailure, reason: "no such share from this sender")
        }
        shares.removeAll { $0.id == id }
    }
}
