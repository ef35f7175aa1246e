import Foundation
import Logging
import NIOPosix
import WebAuthn

/// Where the current time comes from. Read at each check; tests move it.
public struct ServerClock: Sendable {
    public var now: @Sendable () -> Date
    public init(now: @escaping @Sendable () -> Date) { self.now = now }
    public static let system = ServerClock { Date() }
}

/// Something that delivers an SMS message.
public protocol SMSSender: Sendable {
    func send(to phone: String, message: String) async throws
}

/// Development sender: prints the message to standard output (and hands it to `observer`, for tests).
public struct ConsoleSMSSender: SMSSender {
    let observer: (@Sendable (String, String) -> Void)?
    public init(observer: (@Sendable (String, String) -> Void)? = nil) { self.observer = observer }
    public func send(to phone: String, message: String) async throws {
        if let observer {
            observer(phone, message)
        } else {
            // Unbuffered, so the message shows at once even when standard output is a file or pipe.
            FileHandle.standardOutput.write(Data("SMS to \(phone):\n\(message)\n".utf8))
        }
    }
}

/// The rate-limit rules: at most `perAccount` / `perAddress` attempts at a guessable secret per fixed window
/// (successes are given back); past that, 429 until the window ends. Counters live in the database, so every node sees the same counts.
public struct RateLimitPolicy: Sendable, Equatable {
    public var window: TimeInterval = 15 * 60
    /// Per account (password, TOTP, SMS code, recovery code: each guessable secret has its own bucket).
    public var perAccount = 5
    /// Per client address, across accounts and secrets.
    public var perAddress = 50
    /// Ceremonies started (options requests) per client address: bounds stored challenges and sign-up spam.
    public var ceremoniesPerAddress = 300
    public init() {}
}

/// Which rate-limit buckets an attempt falls in.
struct RateLimitKey: Sendable {
    let buckets: [(name: String, limit: Int)]
}

struct RateLimiter: Sendable {
    let store: any Store
    let policy: RateLimitPolicy
    let clock: ServerClock

    /// Bucket names carry no usernames or addresses in clear: they are SHA-256 hex of the subject.
    static func bucket(_ secret: String, account: String) -> String {
        "\(secret):acct:" + hex(Secrets.sha256(account).prefix(16))
    }

    static func bucket(address: String) -> String {
        "addr:" + hex(Secrets.sha256(address).prefix(16))
    }

    /// Lowercase hex (what `String(format: "%02x")` per byte gives, without a formatter per byte on every request).
    static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    func key(secret: String, account: String, address: String) -> RateLimitKey {
        RateLimitKey(buckets: [
            (Self.bucket(secret, account: account), policy.perAccount),
            (Self.bucket(address: address), policy.perAddress),
        ])
    }

    /// Counts one attempt in every bucket, atomically, before the secret is checked; throws 429 with Retry-After
    /// when that puts any bucket over its limit. Counting first (one `INSERT … ON CONFLICT … RETURNING` per
    /// bucket) means concurrent guesses cannot all pass a check made before any of them was recorded.
    func attempt(_ key: RateLimitKey) async throws {
        let now = clock.now()
        var retryAfter: TimeInterval?
        for bucket in key.buckets {
            let state = try await store.recordFailure(bucket: bucket.name, now: now, window: policy.window)
            if state.count > bucket.limit {
                let retry = state.windowStart.addingTimeInterval(policy.window).timeIntervalSince(now)
                retryAfter = max(retryAfter ?? 0, retry)
            }
        }
        if let retryAfter { throw APIError.tooManyAttempts(retryAfter: Int(retryAfter.rounded(.up))) }
    }

    /// After a correct secret: the account's bucket is cleared and the attempt is given back to the address.
    func succeeded(_ key: RateLimitKey) async throws {
        guard let account = key.buckets.first else { return }
        try await store.clearFailures(bucket: account.name)
        for bucket in key.buckets.dropFirst() { try await store.forgiveFailure(bucket: bucket.name) }
    }

    /// Counts one ceremony start for the address; 429 once the window's budget is spent.
    func countCeremony(address: String) async throws {
        let now = clock.now()
        let state = try await store.recordFailure(bucket: Self.ceremonyBucket(address), now: now, window: policy.window)
        try refuseCeremony(state, now: now)
    }

    /// Counts one ceremony start for the address and stores its challenge (`Store.startCeremony`); 429, with no
    /// challenge stored, once the window's budget is spent.
    func startCeremony(address: String, challengeID: [UInt8], binding: [UInt8], _ challenge: ChallengeRecord) async throws {
        let now = clock.now()
        let state = try await store.startCeremony(
            bucket: Self.ceremonyBucket(address), limit: policy.ceremoniesPerAddress, now: now, window: policy.window,
            challengeID: challengeID, binding: binding, challenge
        )
        try refuseCeremony(state, now: now)
    }

    private static func ceremonyBucket(_ address: String) -> String { "ceremony:" + bucket(address: address) }

    private func refuseCeremony(_ state: (count: Int, windowStart: Date), now: Date) throws {
        if state.count > policy.ceremoniesPerAddress {
            let retry = state.windowStart.addingTimeInterval(policy.window).timeIntervalSince(now)
            throw APIError.tooManyAttempts(retryAfter: Int(retry.rounded(.up)))
        }
    }

}

/// Everything a handler needs, built once by `buildApplication`.
struct Sesame: Sendable {
    let configuration: ServerConfiguration
    let store: any Store
    let clock: ServerClock
    let logger: Logger
    let passwords: PasswordHasher
    let rateLimiter: RateLimiter
    let sms: any SMSSender
    /// Keys the CSRF tokens (HMAC of the session token hash) and the fake credential IDs of unknown users.
    let serverSecret: [UInt8]
    let metrics: ServerMetrics
    /// Passkey provider names and icons by AAGUID (the bundled list, or `providerListFile`).
    let providers: AuthenticatorProviders

    var now: Date { clock.now() }

    func audit(
        _ kind: String, _ outcome: String, user: User?, username: String? = nil, context: SesameRequestContext, detail: String = ""
    ) async {
        let event = auditEvent(kind, outcome, user: user, username: username, context: context, detail: detail)
        do { try await store.appendAudit(event) } catch {
            logger.error("audit event not stored", metadata: ["kind": .string(kind), "error": .string(String(describing: type(of: error)))])
        }
        metrics.auditEvent(kind: kind, outcome: outcome)
    }

    /// The event `audit` would store, for a caller that stores it with other writes (and then counts it in `metrics`).
    func auditEvent(
        _ kind: String, _ outcome: String, user: User?, username: String? = nil, context: SesameRequestContext, detail: String = ""
    ) -> AuditEvent {
        AuditEvent(
            at: now, kind: kind, outcome: outcome, userID: user?.id, username: user?.username ?? username,
            clientAddress: context.clientAddress, detail: detail
        )
    }

    /// Runs CPU-heavy work (scrypt) off the event loops.
    func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}

/// Builds the SMS sender the configuration names.
func makeSMSSender(_ configuration: ServerConfiguration, logger: Logger) -> any SMSSender {
    if configuration.smsSender == "console" { return ConsoleSMSSender() }
    if let url = URL(string: configuration.smsSender) { return WebhookSMSSender(url: url, logger: logger) }
    return ConsoleSMSSender()
}

/// POSTs `{"to": ..., "message": ...}` as JSON to the configured URL.
struct WebhookSMSSender: SMSSender {
    let url: URL
    let logger: Logger

    func send(to phone: String, message: String) async throws {
        let body = try JSONEncoder().encode(["to": phone, "message": message])
        try await HTTPPost.send(url: url, body: body)
    }
}
