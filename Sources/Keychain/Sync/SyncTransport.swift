/// How a keychain talks to its sync server. Every call carries the documented JSON messages; an implementation
/// moves them (HTTP for `sesame serve`, a file or memory in tests) and maps failures to `KeychainError`:
/// `versionConflict` when a push finds the vault moved on, `transportFailure` for anything else that is not the
/// message's own fault. The keychain trusts nothing a transport returns (see docs/keychain.md, "A server it does
/// not trust").
///
/// | call | HTTP (`sesame serve`, ``HTTPSyncTransport``) | body / answer |
/// |---|---|---|
/// | ``pull(since:device:)`` | `GET /api/keychain/sync?since=N&device=ID` | → ``PullResponse`` |
/// | ``push(_:)`` | `POST /api/keychain/sync` | ``PushRequest`` → ``PushResponse`` or 409 `keychain_version_conflict` |
/// | ``postJoinRequest(_:)`` | `POST /api/keychain/join` | ``JoinRequest`` |
/// | ``joinRequests()`` | `GET /api/keychain/join` | → `{"format":1,"requests":[JoinRequest…]}` |
/// | ``postJoinApproval(_:)`` | `POST /api/keychain/join/{request}/approval` | ``JoinApproval`` |
/// | ``joinApproval(request:)`` | `GET /api/keychain/join/{request}/approval` | → ``JoinApproval`` or 404 |
/// | ``refuseJoin(request:)`` | `DELETE /api/keychain/join/{request}` | — (404 when no such request waits) |
/// | ``postShare(_:)`` | `POST /api/keychain/shares` | ``ShareMessage`` |
/// | ``shares(recipient:)`` | `GET /api/keychain/shares?recipient=KEY` | → `{"format":1,"shares":[ShareMessage…]}` |
/// | ``shares(sender:)`` | `GET /api/keychain/shares?sender=KEY` | → the same shape |
/// | ``revokeShare(id:sender:)`` | `DELETE /api/keychain/shares/{id}?sender=KEY` | — |
public protocol SyncTransport: Sendable {
    func pull(since version: UInt64, device: [UInt8]) async throws(KeychainError) -> PullResponse
    func push(_ request: PushRequest) async throws(KeychainError) -> PushResponse
    func postJoinRequest(_ request: JoinRequest) async throws(KeychainError)
    func joinRequests() async throws(KeychainError) -> [JoinRequest]
    func postJoinApproval(_ approval: JoinApproval) async throws(KeychainError)
    func joinApproval(request: [UInt8]) async throws(KeychainError) -> JoinApproval?
    /// Removes a waiting (not yet approved) join request: an enrolled device refused it.
    func refuseJoin(request: [UInt8]) async throws(KeychainError)
    func postShare(_ share: ShareMessage) async throws(KeychainError)
    func shares(recipient: [UInt8]) async throws(KeychainError) -> [ShareMessage]
    func shares(sender: [UInt8]) async throws(KeychainError) -> [ShareMessage]
    func revokeShare(id: [UInt8], sender: [UInt8]) async throws(KeychainError)
}
