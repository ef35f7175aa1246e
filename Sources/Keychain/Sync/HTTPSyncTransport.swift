import Foundation
import WebAuthn

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The sync transport to `sesame serve`: the ``SyncTransport`` calls over HTTP with the device token of an
/// enrollment (``SyncEnrollment``) as `Authorization: Bearer`. Bodies and answers are the wire messages; every
/// answer goes through the same strict parsers as any other transport's, and the keychain trusts none of it.
///
/// | call | HTTP |
/// |---|---|
/// | ``pull(since:device:)`` | `GET /api/keychain/sync?since=N&device=ID` |
/// | ``push(_:)`` | `POST /api/keychain/sync` (409 `keychain_version_conflict` → `versionConflict`) |
/// | ``postJoinRequest(_:)`` / ``joinRequests()`` | `POST` / `GET /api/keychain/join` |
/// | ``postJoinApproval(_:)`` / ``joinApproval(request:)`` | `POST` / `GET /api/keychain/join/{request}/approval` (404 → nil) |
/// | ``refuseJoin(request:)`` | `DELETE /api/keychain/join/{request}` |
/// | ``postShare(_:)`` | `POST /api/keychain/shares` |
/// | ``shares(recipient:)`` / ``shares(sender:)`` | `GET /api/keychain/shares?recipient=KEY` / `?sender=KEY` |
/// | ``revokeShare(id:sender:)`` | `DELETE /api/keychain/shares/{id}?sender=KEY` |
///
/// The server address must be `https://`, or `http://` on a loopback host (the token would otherwise cross the
/// network in clear).
public struct HTTPSyncTransport: SyncTransport {
    public let server: URL
    private let token: String
    private let session: URLSession

    public init(enrollment: SyncEnrollment) throws(KeychainError) {
        self.server = try Self.checkedServer(enrollment.server)
        self.token = enrollment.token
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 120
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration)
    }

    /// The server's base URL if it is one the token may be sent to.
    public static func checkedServer(_ text: String) throws(KeychainError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
            url.user == nil, url.password == nil, url.query == nil, url.fragment == nil,
            url.path.isEmpty || url.path == "/"
        else {
            throw KeychainError(.invalidOptions, reason: "the server address is not an https:// URL of a host")
        }
        let loopback = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw KeychainError(
                .invalidOptions, reason: "the server address must be https:// (http:// only on localhost)")
        }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        guard let checked = URL(string: base) else {
            throw KeychainError(.invalidOptions, reason: "the server address is not a URL")
        }
        return checked
    }

    // MARK: Enrollment

    /// Asks the server for a device token for the account whose session token is given (a native sign-in's
    /// `sessionToken`; enrolling needs a recent sign-in). The session token is sent once and not kept.
    public static func enroll(server text: String, sessionToken: String, name: String) async throws(KeychainError)
        -> SyncEnrollment
    {
        let server = try checkedServer(text)
        let body = (try? JSONSerialization.data(withJSONObject: ["name": name])) ?? Data()
        let (status, data) = try await send(
            URLSession(configuration: .ephemeral), server: server, "POST", "/api/keychain/enrollments", body: body,
            bearer: sessionToken)
        guard status == 201 else {
            let code = errorCode(data)
            switch code {
            case "unauthenticated":
                throw KeychainError(.notEnrolled, reason: "the session token is not a live session: sign in again")
            case "reauthentication_required":
                throw KeychainError(
                    .notEnrolled, reason: "enrolling a device needs a recent sign-in: sign in again and retry")
            default:
                throw KeychainError(
                    .transportFailure, reason: "the server refused the enrollment (\(status) \(code ?? "no code"))")
            }
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let token = object["token"] as? String, token.utf8.count == 64,
            let enrollment = object["enrollment"] as? [String: Any], let id = enrollment["id"] as? String,
            id.utf8.count <= 64
        else {
            throw KeychainError(.malformedMessage, reason: "the enrollment answer is not the documented JSON")
        }
        return SyncEnrollment(server: server.absoluteString, token: token, enrollment: id)
    }

    // MARK: SyncTransport

    public func pull(since version: UInt64, device: [UInt8]) async throws(KeychainError) -> PullResponse {
        let data = try await call("GET", "/api/keychain/sync?since=\(version)&device=\(b64(device))")
        return try PullResponse(json: data)
    }

    public func push(_ request: PushRequest) async throws(KeychainError) -> PushResponse {
        try PushResponse(json: try await call("POST", "/api/keychain/sync", body: request.json))
    }

    public func postJoinRequest(_ request: JoinRequest) async throws(KeychainError) {
        _ = try await call("POST", "/api/keychain/join", body: request.json)
    }

    public func joinRequests() async throws(KeychainError) -> [JoinRequest] {
        try WireJSON.decode(JoinRequestList.self, try await call("GET", "/api/keychain/join")).requests
    }

    public func postJoinApproval(_ approval: JoinApproval) async throws(KeychainError) {
        _ = try await call("POST", "/api/keychain/join/\(b64(approval.request))/approval", body: approval.json)
    }

    public func joinApproval(request: [UInt8]) async throws(KeychainError) -> JoinApproval? {
        guard let data = try await call("GET", "/api/keychain/join/\(b64(request))/approval", absentOn404: true)
        else { return nil }
        let approval = try JoinApproval(json: data)
        guard approval.request == request else {
            throw KeychainError(.malformedMessage, reason: "the server answered with another request's approval")
        }
        return approval
    }

    public func refuseJoin(request: [UInt8]) async throws(KeychainError) {
        _ = try await call("DELETE", "/api/keychain/join/\(b64(request))")
    }

    public func postShare(_ share: ShareMessage) async throws(KeychainError) {
        _ = try await call("POST", "/api/keychain/shares", body: share.json)
    }

    public func shares(recipient: [UInt8]) async throws(KeychainError) -> [ShareMessage] {
        try WireJSON.decode(ShareList.self, try await call("GET", "/api/keychain/shares?recipient=\(b64(recipient))"))
            .shares
    }

    public func shares(sender: [UInt8]) async throws(KeychainError) -> [ShareMessage] {
        try WireJSON.decode(ShareList.self, try await call("GET", "/api/keychain/shares?sender=\(b64(sender))")).shares
    }

    public func revokeShare(id: [UInt8], sender: [UInt8]) async throws(KeychainError) {
        _ = try await call("DELETE", "/api/keychain/shares/\(b64(id))?sender=\(b64(sender))")
    }

    // MARK: HTTP

    private func call(_ method: String, _ path: String, body: [UInt8]? = nil) async throws(KeychainError) -> [UInt8] {
        // Without absentOn404 a 404 is an error, so there is always an answer.
        try await call(method, path, body: body, absentOn404: false) ?? []
    }

    private func call(_ method: String, _ path: String, body: [UInt8]? = nil, absentOn404: Bool)
        async throws(KeychainError) -> [UInt8]?
    {
        let (status, data) = try await Self.send(
            session, server: server, method, path, body: body.map { Data($0) }, bearer: token)
        if (200..<300).contains(status) { return [UInt8](data) }
        if status == 404 && absentOn404 { return nil }
        throw Self.failure(status: status, data: data)
    }

    /// Maps an error answer to the keychain's codes; the reason carries the status and the server's error code,
    /// never the body.
    static func failure(status: Int, data: Data) -> KeychainError {
        let code = errorCode(data)
        switch (status, code) {
        case (409, "keychain_version_conflict"):
            return KeychainError(.versionConflict, reason: "the vault moved on since this device pulled")
        case (409, "keychain_wrong_vault"):
            return KeychainError(.wrongVault, reason: "the account on this server syncs another vault")
        case (401, _):
            return KeychainError(
                .notEnrolled,
                reason:
                    "the server no longer accepts this device's token (revoked, or the device was removed): run `sesame keychain enroll` again"
            )
        case (403, "account_disabled"):
            return KeychainError(.syncRefused, reason: "the account is disabled on this server")
        case (403, "keychain_device_mismatch"):
            return KeychainError(.syncRefused, reason: "this device token acts for another keychain device")
        case (429, _):
            return KeychainError(.syncRefused, reason: "too many failed attempts from this address; try again later")
        case (409, "keychain_limit_reached"):
            return KeychainError(.syncRefused, reason: "too many join requests or shares are waiting on the server")
        default:
            return KeychainError(
                .transportFailure, reason: "the sync server answered \(status) \(code ?? "without an error code")")
        }
    }

    /// The `error` member of an error answer, if it is a short code of lower-case letters and underscores.
    static func errorCode(_ data: Data) -> String? {
        guard data.count <= 64 * 1024, let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let code = object["error"] as? String, code.utf8.count <= 64,
            code.utf8.allSatisfy({ (97...122).contains($0) || $0 == 95 })
        else { return nil }
        return code
    }

    static func send(
        _ session: URLSession, server: URL, _ method: String, _ path: String, body: Data?, bearer: String
    ) async throws(KeychainError) -> (Int, Data) {
        guard let url = URL(string: server.absoluteString + path) else {
            throw KeychainError(.invalidOptions, reason: "the server address does not make a URL")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer " + bearer, forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("native", forHTTPHeaderField: "Sesame-Client")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else {
                throw KeychainError(.transportFailure, reason: "the sync server's answer is not HTTP")
            }
            guard data.count <= WireJSON.maximumMessageSize else {
                throw KeychainError(.malformedMessage, reason: "the sync server's answer is too large")
            }
            return (http.statusCode, data)
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.transportFailure, reason: "cannot reach the sync server at \(server.absoluteString)")
        }
    }
}

/// `{"format": 1, "requests": [join-request…]}`
struct JoinRequestList: Decodable {
    let requests: [JoinRequest]
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "requests"], in: "join request list")
        try c.format(in: "join request list")
        requests = try c.array("requests", of: JoinRequest.self, maximum: 10_000)
    }
}

/// `{"format": 1, "shares": [share…]}`
struct ShareList: Decodable {
    let shares: [ShareMessage]
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "shares"], in: "share list")
        try c.format(in: "share list")
        shares = try c.array("shares", of: ShareMessage.self, maximum: 100_000)
    }
}

/// What `sesame keychain enroll` keeps: the server and the device token, in `DIR/sync-server` (mode 0600, beside
/// the vault file, which it does not need: a device enrolls before `init`, `join` or `recover`).
/// ```json
/// {"format": 1, "server": "https://sesame.example", "token": "<64 characters>", "enrollment": "<id>"}
/// ```
/// The token grants access to the account's ciphertext only; it opens nothing. Like the session file, it is
/// readable by the user's own processes; revoking the device on the account page (or removing it from the
/// vault on another device) ends it.
public struct SyncEnrollment: Sendable, Hashable, Decodable {
    public let server: String
    public let token: String
    public let enrollment: String

    public init(server: String, token: String, enrollment: String) {
        self.server = server
        self.token = token
        self.enrollment = enrollment
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "server", "token", "enrollment"], in: "sync enrollment")
        try c.format(in: "sync enrollment")
        server = try c.decode(String.self, forKey: .init("server"))
        token = try c.decode(String.self, forKey: .init("token"))
        enrollment = try c.decode(String.self, forKey: .init("enrollment"))
        guard token.utf8.count == 64, server.utf8.count <= 2048, enrollment.utf8.count <= 64 else {
            throw KeychainError(.malformedMessage, reason: "the sync enrollment file's values are out of range")
        }
    }

    static func file(in directory: VaultDirectory) -> String { directory.path + "/sync-server" }

    /// The directory's enrollment, or nil when it has none.
    public static func load(from directory: VaultDirectory) throws(KeychainError) -> SyncEnrollment? {
        guard let bytes = try AtomicFile.read(file(in: directory), maximumSize: 64 * 1024) else { return nil }
        do {
            return try WireJSON.decode(SyncEnrollment.self, bytes)
        } catch {
            throw KeychainError(.corruptFile, reason: "the sync enrollment file \(file(in: directory)) is unreadable")
        }
    }

    /// Writes the enrollment atomically (mode 0600), creating the directory (0700) if needed.
    public func save(to directory: VaultDirectory) throws(KeychainError) {
        try AtomicFile.makeDirectory(directory.path)
        try AtomicFile.write(
            WireJSON.encode(["format": WireJSON.format, "server": server, "token": token, "enrollment": enrollment]),
            to: Self.file(in: directory))
    }

    /// Removes the enrollment file (after the server revoked it, or to enroll with another server).
    public static func remove(from directory: VaultDirectory) throws(KeychainError) {
        try AtomicFile.remove(file(in: directory))
    }
}
