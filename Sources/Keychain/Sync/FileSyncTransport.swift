import Foundation

/// A sync "server" that is a directory: the server state in one JSON file (`server.json`), read and written under
/// a lock, with exactly the semantics of ``SyncServerState``.
///
/// A stand-in for `sesame serve` (``HTTPSyncTransport``): two vault directories on one machine (or a shared folder)
/// can sync, join and share through it, and the command line and its tests run the real client logic against it. It is not a security boundary: whoever can write the folder is the "server", which is
/// exactly the position the keychain is designed to distrust.
public struct FileSyncTransport: SyncTransport {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    private var stateFile: String { directory + "/server.json" }

    private func withState<T>(_ body: (inout SyncServerState) throws(KeychainError) -> T) throws(KeychainError) -> T {
        try AtomicFile.makeDirectory(directory)
        let lock = try DirectoryLock(path: directory + "/.lock")
        defer { withExtendedLifetime(lock) {} }
        var state = SyncServerState()
        if let bytes = try AtomicFile.read(stateFile) {
            state = try StoredServerState.decode(bytes)
        }
        let before = state
        let result = try body(&state)
        if state != before { try AtomicFile.write(StoredServerState.encode(state), to: stateFile) }
        return result
    }

    public func pull(since version: UInt64, device: [UInt8]) async throws(KeychainError) -> PullResponse {
        try PullResponse(json: try withState { $0.pull(since: version, device: device) }.json)
    }

    public func push(_ request: PushRequest) async throws(KeychainError) -> PushResponse {
        let parsed = try PushRequest(json: request.json)
        return try withState { (s) throws(KeychainError) in try s.push(parsed) }
    }

    public func postJoinRequest(_ request: JoinRequest) async throws(KeychainError) {
        try withState { $0.postJoinRequest(request) }
    }

    public func joinRequests() async throws(KeychainError) -> [JoinRequest] {
        try withState { $0.joinRequests }
    }

    public func postJoinApproval(_ approval: JoinApproval) async throws(KeychainError) {
        try withState { (s) throws(KeychainError) in try s.postJoinApproval(approval) }
    }

    public func joinApproval(request: [UInt8]) async throws(KeychainError) -> JoinApproval? {
        try withState { $0.joinApprovals[request] }
    }

    public func refuseJoin(request: [UInt8]) async throws(KeychainError) {
        try withState { (s) throws(KeychainError) in try s.refuseJoin(request: request) }
    }

    public func postShare(_ share: ShareMessage) async throws(KeychainError) {
        try withState { $0.postShare(share) }
    }

    public func shares(recipient: [UInt8]) async throws(KeychainError) -> [ShareMessage] {
        try withState { $0.shares.filter { $0.recipient == recipient } }
    }

    public func shares(sender: [UInt8]) async throws(KeychainError) -> [ShareMessage] {
        try withState { $0.shares.filter { $0.sender == sender } }
    }

    public func revokeShare(id: [UInt8], sender: [UInt8]) async throws(KeychainError) {
        try withState { (s) throws(KeychainError) in try s.revokeShare(id: id, sender: sender) }
    }
}

/// `server.json`: the state as JSON, each value in its wire form.
/// ```json
/// {"format": 1, "vault": "…" | null, "version": 3, "manifest": "…" | null,
///  "records": [{"record": record, "writtenAt": 3}], "wraps": [wrap], "recovery": recovery | null,
///  "devices": [device], "joinRequests": [join-request], "joinApprovals": [join-approval], "shares": [share]}
/// ```
enum StoredServerState {
    private struct Stored: Decodable {
        var state = SyncServerState()

        struct Record: Decodable {
            let record: WireRecord
            let writtenAt: UInt64
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: WireJSON.Key.self)
            try c.only(
                [
                    "format", "vault", "version", "manifest", "records", "wraps", "recovery", "devices", "joinRequests",
                    "joinApprovals", "shares",
                ], in: "server state")
            try c.format(in: "server state")
            state.vault = try c.optionalBytes("vault", count: 16...16)
            state.version = try c.uint64("version")
            state.manifest = try c.optionalBytes("manifest")
            for r in try c.array("records", of: Record.self, maximum: 10_000_000) {
                state.records[r.record.id] = .init(record: r.record, writtenAt: r.writtenAt)
            }
            state.wraps = try c.array("wraps", of: WireWrap.self, maximum: 100_000)
            state.recovery = try c.decodeIfPresent(WireRecovery.self, forKey: .init("recovery"))
            state.devices = try c.array("devices", of: WireDevice.self, maximum: 100_000)
            state.joinRequests = try c.array("joinRequests", of: JoinRequest.self, maximum: 100_000)
            for a in try c.array("joinApprovals", of: JoinApproval.self, maximum: 100_000) {
                state.joinApprovals[a.request] = a
            }
            state.shares = try c.array("shares", of: ShareMessage.self, maximum: 1_000_000)
        }
    }

    static func decode(_ bytes: [UInt8]) throws(KeychainError) -> SyncServerState {
        do {
            return try WireJSON.decode(Stored.self, bytes).state
        } catch {
            throw KeychainError(
                .transportFailure, reason: "the sync folder's server.json is unreadable (\(error.code))")
        }
    }

    static func encode(_ s: SyncServerState) -> [UInt8] {
        func object(_ bytes: [UInt8]) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
        }
        return WireJSON.encode([
            "format": WireJSON.format, "vault": s.vault.map(b64) ?? NSNull(), "version": s.version,
            "manifest": s.manifest.map(b64) ?? NSNull(),
            "records": s.records.values.sorted { $0.record.id.lexicographicallyPrecedes($1.record.id) }.map {
                ["record": $0.record.object, "writtenAt": $0.writtenAt] as [String: Any]
            },
            "wraps": s.wraps.map(\.object), "recovery": s.recovery?.object ?? NSNull(),
            "devices": s.devices.map(\.object),
            "joinRequests": s.joinRequests.map { object($0.json) },
            "joinApprovals": s.joinApprovals.values.sorted { $0.request.lexicographicallyPrecedes($1.request) }.map {
                object($0.json)
            },
            "shares": s.shares.map { object($0.json) },
        ])
    }
}
