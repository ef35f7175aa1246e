import CBOR
import Crypto
import Foundation

/// A device waiting to join, as an enrolled device sees it before approving or refusing.
public struct PendingDevice: Sendable, Hashable {
    public let request: [UInt8]
    public let device: [UInt8]
    public let publicKey: [UInt8]
    public var fingerprint: KeyFingerprint { KeyFingerprint(publicKey: publicKey) }
    /// The first 12 characters of the code the joining device shows (its key's part, `XXXXX-XXXXX-XX`): what the
    /// person compares with that device's screen before refusing it. The rest of the code is the device's secret,
    /// which only the device itself knows.
    public var codeStart: String { PairingCode.keyPart(publicKey) }
}

extension Keychain {
    // MARK: Listing and removing

    /// The vault's authenticated device list, with this device's local changes applied.
    public var devices: [RosterEntry] {
        guard let vault = state.vault else { return [] }
        let removed = Set(vault.rosterChanges.removed)
        return vault.roster.filter { !removed.contains($0.id) }
            + vault.rosterChanges.added.filter { a in !vault.roster.contains { $0.id == a.id } }
    }

    /// Removes a device: at the next sync the vault key rotates, every item is re-sealed under the new key and the
    /// new key is wrapped only for the remaining devices (and the recovery key). This device cannot remove itself.
    public func removeDevice(_ id: [UInt8]) throws(KeychainError) {
        guard id != state.device.id else {
            throw KeychainError(.invalidDeviceRemoval, reason: "a device cannot remove itself")
        }
        try updateMembership { (vault) throws(KeychainError) in
            guard
                vault.roster.contains(where: { $0.id == id })
                    || vault.rosterChanges.added.contains(where: { $0.id == id })
            else { throw KeychainError(.invalidDeviceRemoval, reason: "no such device in this vault") }
            vault.rosterChanges.added.removeAll { $0.id == id }
            if vault.roster.contains(where: { $0.id == id }) && !vault.rosterChanges.removed.contains(id) {
                vault.rosterChanges.removed.append(id)
            }
        }
    }

    // MARK: Approving a join (on an enrolled device)

    /// Approves the join whose request matches `code`: checks the code's fingerprint against the request's key,
    /// seals the vault key to that key with the code's secret, posts the approval and adds the device to the
    /// device list (pushed by the next ``sync(with:)``, which also wraps the key for it in the ordinary way).
    @discardableResult
    public func approveJoin(code: PairingCode, name: String, transport: any SyncTransport) async throws(KeychainError)
        -> RosterEntry
    {
        try ItemLimits.checkText(name, field: "device name")
        let vault = try membership()
        let candidates = try await transport.joinRequests().filter { code.matches(publicKey: $0.publicKey) }
        guard let request = candidates.first, candidates.count == 1 else {
            throw KeychainError(
                .pairingCodeMismatch,
                reason: candidates.isEmpty
                    ? "no join request has the key this code was made for" : "several join requests match the code")
        }
        guard !vault.roster.contains(where: { $0.id == request.device || $0.publicKey == request.publicKey }) else {
            throw KeychainError(.pairingCodeMismatch, reason: "that device is already in the vault")
        }
        let plaintext = CBOREncoder.encode(
            .map([
                CBORMapEntry("v", 1), CBORMapEntry("vault", .byteString(vault.vaultId)),
                CBORMapEntry("epoch", .unsigned(UInt64(vault.key.epoch))),
                CBORMapEntry("key", .byteString(vault.key.bytes)),
                CBORMapEntry("approver", .byteString(state.device.id)),
                CBORMapEntry("approverKey", .byteString(state.device.key.publicKey)),
            ]))
        let box = try HPKEBox.seal(
            plaintext, to: try DeviceKey.publicKey(request.publicKey),
            info: Self.joinInfo(request: request.request, device: request.device, publicKey: request.publicKey),
            psk: (code.psk(request: request.request, publicKey: request.publicKey), Domain.bytes(Domain.joinPSK)))
        try await transport.postJoinApproval(JoinApproval(request: request.request, blob: box.bytes))
        let entry = RosterEntry(
            id: request.device, publicKey: request.publicKey, name: name, added: ItemTime.truncate(clock.now))
        try updateMembership { $0.rosterChanges.added.append(entry) }
        return entry
    }

    // MARK: Refusing a join (on an enrolled device)

    /// The devices waiting to join this vault: the server's join requests, minus any whose device or key the
    /// device list already holds. Only an enrolled device (one with a vault) asks.
    public func waitingJoins(transport: any SyncTransport) async throws(KeychainError) -> [PendingDevice] {
        let vault = try membership()
        return try await transport.joinRequests().compactMap { r in
            vault.roster.contains { $0.id == r.device || $0.publicKey == r.publicKey }
                ? nil : PendingDevice(request: r.request, device: r.device, publicKey: r.publicKey)
        }
    }

    /// Refuses a waiting join: the server drops the request, and the joining device, at its next try, finds it
    /// gone and ends its join (``completeJoin(transport:)`` throws `joinRefused`). Nothing in the vault changes.
    public func refuseJoin(request: [UInt8], transport: any SyncTransport) async throws(KeychainError) {
        _ = try membership()
        guard try await transport.joinRequests().contains(where: { $0.request == request }) else {
            throw KeychainError(.pairingCodeMismatch, reason: "no device with that request is waiting to join")
        }
        try await transport.refuseJoin(request: request)
    }

    static func joinInfo(request: [UInt8], device: [UInt8], publicKey: [UInt8]) -> [UInt8] {
        Domain.bytes(Domain.joinWrap) + request + device + publicKey
    }

    // MARK: Joining (on the new device)

    /// Starts a join: makes this device's key pair and a vault file holding only it and the pending request,
    /// posts the request, and returns the code to show.
    public static func beginJoin(
        in directory: VaultDirectory, passphrase: String, deviceName: String, transport: any SyncTransport,
        parameters: ScryptParameters = .default, policy: KDFPolicy = .standard,
        clock: any KeychainClock = SystemKeychainClock()
    ) async throws(KeychainError) -> (Keychain, PairingCode) {
        try ItemLimits.checkText(deviceName, field: "device name")
        let device = LocalDevice.make(name: deviceName)
        let join = PendingJoin(requestId: SecureRandom.bytes(16), secret: PairingCode.newSecret(), created: clock.now)
        let keychain = try make(
            in: directory, passphrase: passphrase, state: VaultState(device: device, vault: nil, join: join),
            parameters: parameters, policy: policy, clock: clock)
        try await transport.postJoinRequest(
            JoinRequest(request: join.requestId, device: device.id, publicKey: device.key.publicKey))
        return (keychain, PairingCode(publicKey: device.key.publicKey, secret: join.secret))
    }

    /// The code of the join in progress (to show it again).
    public var pendingPairingCode: PairingCode? {
        state.join.map { PairingCode(publicKey: state.device.key.publicKey, secret: $0.secret) }
    }

    /// Finishes a join once an enrolled device approved it: opens the approval with this device's key and the
    /// code's secret, pulls the vault and checks that its device list holds this device. An approval that does not
    /// open ends the join (a forged approval gets one try); start again with a new code. Call ``save()`` after.
    public func completeJoin(transport: any SyncTransport) async throws(KeychainError) -> SyncReport {
        guard let join = state.join else {
            if state.vault != nil {
                throw KeychainError(.vaultExists, reason: "this device already belongs to a vault")
            }
            throw KeychainError(.vaultNotFound, reason: "no join in progress")
        }
        guard let approval = try await Self.approvalOrRefusal(of: join.requestId, transport: transport) else {
            // Refused (or expired): the request is gone and no approval came. The join ends here; a new one
            // starts with a new code.
            state.join = nil
            try save()
            throw KeychainError(
                .joinRefused, reason: "an enrolled device refused this join, or it expired; ask to join again")
        }
        let code = PairingCode(publicKey: state.device.key.publicKey, secret: join.secret)
        let plaintext: [UInt8]
        do {
            plaintext = try HPKEBox(bytes: approval.blob).open(
                with: state.device.key.privateKey,
                info: Self.joinInfo(
                    request: join.requestId, device: state.device.id, publicKey: state.device.key.publicKey),
                expecting: .psk,
                psk: (
                    code.psk(request: join.requestId, publicKey: state.device.key.publicKey),
                    Domain.bytes(Domain.joinPSK)
                ),
                failure: .joinApprovalInvalid)
        } catch {
            state.join = nil
            try save()
            throw KeychainError(
                .joinApprovalInvalid, reason: "the approval was not made with this join's code; the join is abandoned")
        }
        var f = try CBORFields(decoding: plaintext, code: .joinApprovalInvalid, what: "join approval")
        guard try f.int("v") == 1 else { throw KeychainError(.unsupportedFormat, reason: "join approval format") }
        let vaultId = try f.bytes("vault", count: 16...16)
        let epoch = try f.unsigned("epoch")
        guard epoch <= UInt64(UInt32.max) else {
            throw KeychainError(.joinApprovalInvalid, reason: "epoch out of range")
        }
        let key = try VaultKey(epoch: UInt32(epoch), bytes: try f.bytes("key", count: 32...32))
        let approver = RosterEntry(
            id: try f.bytes("approver", count: 16...16), publicKey: try f.bytes("approverKey", count: 32...32),
            name: "approver", added: ItemTime.truncate(clock.now))
        try f.finish()

        var vault = Self.emptyMembership(vaultId: vaultId, key: key, roster: [approver])
        let pull = try await transport.pull(since: 0, device: state.device.id)
        var applied: SyncEngine.Applied
        do {
            applied = try SyncEngine.apply(pull, to: &vault, device: state.device, now: clock.now)
        } catch  where error.code == .deviceRemoved {
            throw KeychainError(
                .joinPending, reason: "approved, but the vault's device list does not hold this device yet; try again")
        }
        guard vault.syncedVersion > 0 else {
            throw KeychainError(.joinPending, reason: "approved, but the server holds no vault yet; try again")
        }
        vault.lastSynced = ItemTime.truncate(clock.now)
        state.vault = vault
        state.join = nil
        return SyncReport(
            received: applied.received, sent: 0, conflictCopies: 0, version: vault.syncedVersion,
            unknownServerDevices: try Self.checkServerDevices(pull.devices, roster: vault.roster))
    }

    /// The approval of `request`; nil when there is none and the server no longer lists the request (refused);
    /// `joinPending` while it waits. The approval is read again after the list, so an approval that lands between
    /// the two reads is not taken for a refusal.
    static func approvalOrRefusal(of request: [UInt8], transport: any SyncTransport) async throws(KeychainError)
        -> JoinApproval?
    {
        if let approval = try await transport.joinApproval(request: request) { return approval }
        let waiting = try await transport.joinRequests().contains { $0.request == request }
        if let approval = try await transport.joinApproval(request: request) { return approval }
        guard !waiting else { throw KeychainError(.joinPending, reason: "the join has not been approved yet") }
        return nil
    }

    static func emptyMembership(vaultId: [UInt8], key: VaultKey, roster: [RosterEntry]) -> VaultMembership {
        VaultMembership(
            vaultId: vaultId, key: key, roster: roster,
            recovery: RecoveryPublicInfo(
                publicKey: [UInt8](repeating: 0, count: 32), psk: [UInt8](repeating: 0, count: 32)),
            sharingKey: .generate(), entries: [:], syncedVersion: 0, highestSeenVersion: 0, manifestDigest: nil,
            rosterChanges: RosterChanges(), sentShares: [], acceptedShares: [])
    }

    // MARK: Recovery

    /// Restores the vault on a new device from the recovery key: pulls the vault, opens the recovery wrap with the
    /// key's private half, checks everything against the manifest, writes a new vault file with `passphrase`, adds
    /// this device to the device list and pushes that. A wrong recovery key is `wrongRecoveryKey` and writes
    /// nothing. The directory must not hold a vault.
    public static func recover(
        in directory: VaultDirectory, recoveryKey: RecoveryKey, passphrase: String, deviceName: String,
        transport: any SyncTransport, parameters: ScryptParameters = .default, policy: KDFPolicy = .standard,
        clock: any KeychainClock = SystemKeychainClock()
    ) async throws(KeychainError) -> (Keychain, SyncReport) {
        try Passphrase.checkNew(passphrase)
        try ItemLimits.checkText(deviceName, field: "device name")
        guard !AtomicFile.exists(directory.vaultFile) else {
            throw KeychainError(.vaultExists, reason: "\(directory.path) already holds a vault")
        }
        let device = LocalDevice.make(name: deviceName)
        let pull = try await transport.pull(since: 0, device: device.id)
        guard let vaultId = pull.vault, pull.version > 0, let manifestBytes = pull.manifest else {
            throw KeychainError(.vaultNotFound, reason: "the server holds no vault to recover")
        }
        guard let wrap = pull.recovery else {
            throw KeychainError(.malformedMessage, reason: "the server sent no recovery wrap")
        }
        let manifestRecord = try SealedRecord(bytes: manifestBytes)
        guard wrap.epoch == manifestRecord.epoch else {
            throw KeychainError(
                .manifestMismatch, reason: "the recovery wrap is for another key epoch than the manifest")
        }
        let derived = recoveryKey.derived
        let keyBytes: [UInt8]
        do {
            keyBytes = try HPKEBox(bytes: wrap.blob).open(
                with: derived.privateKey, info: SyncEngine.recoveryWrapInfo(vaultId: vaultId, epoch: wrap.epoch),
                expecting: .psk, psk: (SymmetricKey(data: derived.publicInfo.psk), SyncEngine.recoveryPSKId),
                failure: .wrongRecoveryKey)
        } catch {
            throw KeychainError(.wrongRecoveryKey, reason: "this recovery key does not open the vault")
        }
        let key = try VaultKey(epoch: wrap.epoch, bytes: keyBytes)
        let manifest = try Manifest.open(manifestRecord, key: key, vaultId: vaultId, version: pull.version)
        guard manifest.recovery.publicKey == derived.publicInfo.publicKey else {
            throw KeychainError(.wrongRecoveryKey, reason: "the vault was made for another recovery key")
        }
        // The device is not in the device list yet: check and merge everything, then add it.
        var vault = emptyMembership(vaultId: vaultId, key: key, roster: [])
        let applied = try SyncEngine.apply(pull, to: &vault, device: device, now: clock.now, requireMembership: false)
        vault.rosterChanges.added.append(
            RosterEntry(
                id: device.id, publicKey: device.key.publicKey, name: deviceName, added: ItemTime.truncate(clock.now)))
        let keychain = try make(
            in: directory, passphrase: passphrase, state: VaultState(device: device, vault: vault, join: nil),
            parameters: parameters, policy: policy, clock: clock)
        var report = try await keychain.sync(with: transport)
        report.received += applied.received
        try keychain.save()
        return (keychain, report)
    }
}
