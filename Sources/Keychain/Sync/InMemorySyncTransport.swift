import Synchronization

/// A sync server in memory, for tests and benchmarks. Every message goes through its JSON form in both
/// directions, so the wire format and its strict parser are exercised exactly as over HTTP.
///
/// ``tamper`` lets a test play a server that lies: it sees each pull answer (as JSON) before the client does and
/// may return anything.
public final class InMemorySyncTransport: SyncTransport {
    private let state = Mutex(SyncServerState())
    private let tamperHook = Mutex<(@Sendable ([UInt8]) -> [UInt8])?>(nil)

    public init() {}

    /// The server's state now (what an attacker who owns the server holds).
    public var snapshot: SyncServerState { state.withLock { $0 } }

    /// Replaces the server's state (a test rolling the server back to an earlier snapshot).
    public func restore(_ snapshot: SyncServerState) { state.withLock { $0 = snapshot } }

    /// Rewrites every pull answer's JSON from now on; nil stops.
    public func tamper(_ hook: (@Sendable ([UInt8]) -> [UInt8])?) { tamperHook.withLock { $0 = hook } }

    public func pull(since version: UInt64, device: [UInt8]) async throws(KeychainError) -> PullResponse {
        var json = state.withLock { $0.pull(since: version, device: device).json }
        if let hook = tamperHook.withLock({ $0 }) { json = hook(json) }
        return try PullResponse(json: json)
    }

    public func push(_ request: PushRequest) async throws(KeychainError) -> PushResponse {
        let parsed = try PushRequest(json: request.json)
        let answer = try state.withLock { (s) throws(KeychainError) in try s.push(parsed) }
        return try PushResponse(json: answer.json)
    }

    public func postJoinRequest(_ request: JoinRequest) async throws(KeychainError) {
        let parsed = try JoinRequest(json: request.json)
        state.withLock { $0.postJoinRequest(parsed) }
    }

    public func joinRequests() async throws(KeychainError) -> [JoinRequest] {
        var out: [JoinRequest] = []
        for r in state.withLock({ $0.joinRequests }) { out.append(try JoinRequest(json: r.json)) }
        return out
    }

    public func postJoinApproval(_ approval: JoinApproval) async throws(KeychainError) {
        let parsed = try JoinApproval(json: approval.json)
        try state.withLock { (s) throws(KeychainError) in try s.postJoinApproval(parsed) }
    }

    public func joinApproval(request: [UInt8]) async throws(KeychainError) -> JoinApproval? {
        guard let approval = state.withLock({ $0.joinApprovals[request] }) else { return nil }
        return try JoinApproval(json: approval.json)
    }

    public func refuseJoin(request: [UInt8]) async throws(KeychainError) {
        try state.withLock { (s) throws(KeychainError) in try s.refuseJoin(request: request) }
    }

    public func postShare(_ share: ShareMessage) async throws(KeychainError) {
        let parsed = try ShareMessage(json: share.json)
        state.withLock { $0.postShare(parsed) }
    }

    public func shares(recipient: [UInt8]) async throws(KeychainError) -> [ShareMessage] {
        var out: [ShareMessage] = []
        for s in state.withLock({ $0.shares.filter { $0.recipient == recipient } }) {
            out.append(try ShareMessage(json: s.json))
        }
        return out
    }

    public func shares(sender: [UInt8]) async throws(KeychainError) -> [ShareMessage] {
        var out: [ShareMessage] = []
        for s in state.withLock({ $0.shares.filter { $0.sender == sender } }) {
            out.append(try ShareMessage(json: s.json))
        }
        return out
    }

    public func revokeShare(id: [UInt8], sender: [UInt8]) async throws(KeychainError) {
        try state.withLock { (s) throws(KeychainError) in try s.revokeShare(id: id, sender: sender) }
    }

    /// Changes the server's state directly (a test planting, dropping or editing what the server stores).
    public func edit(_ change: @Sendable (inout SyncServerState) -> Void) { state.withLock { change(&$0) } }
}
