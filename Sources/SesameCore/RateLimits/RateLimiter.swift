import Foundation
import SesameBytes

/// The rate-limit rules: at most `perAccount` / `perAddress` attempts at a guessable secret per fixed window
/// (successes are given back); past that, 429 until the window ends. Counters live in the database, so every node
/// sees the same counts.
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
package struct RateLimitKey: Sendable {
    package let buckets: [(name: String, limit: Int)]
}

package struct RateLimiter: Sendable {
    package let store: any Store
    package let policy: RateLimitPolicy
    package let clock: ServerClock

    package init(store: any Store, policy: RateLimitPolicy, clock: ServerClock) {
        self.store = store
        self.policy = policy
        self.clock = clock
    }

    /// Bucket names carry no usernames or addresses in clear: they are SHA-256 hex of the subject.
    package static func bucket(_ secret: String, account: String) -> String {
        "\(secret):acct:" + Hex.encode(Secrets.sha256(account).prefix(16))
    }

    package static func bucket(address: String) -> String {
        "addr:" + Hex.encode(Secrets.sha256(address).prefix(16))
    }

    private static func ceremonyBucket(_ address: String) -> String { "ceremony:" + bucket(address: address) }

    /// The account's bucket for `secret`, then the client address's; each of `subjects` (a thing the secret is
    /// sent to or checked for, e.g. an email address, normalised by its feature) adds a bucket of its own with the
    /// per-account limit, so many accounts cannot take turns at one subject.
    package func key(_ secret: GuessableSecret, account: String, address: String, subjects: [String] = [])
        -> RateLimitKey
    {
        RateLimitKey(
            buckets: [
                (Self.bucket(secret.rawValue, account: account), policy.perAccount),
                (Self.bucket(address: address), policy.perAddress),
            ]
                + subjects.map {
                    ("\(secret.rawValue):subj:" + Hex.encode(Secrets.sha256($0).prefix(16)), policy.perAccount)
                })
    }

    /// Only the client address's bucket: for a secret that names no account before it is checked (a link's token).
    /// Give a right one back with `forgive`.
    package func key(address: String) -> RateLimitKey {
        RateLimitKey(buckets: [(Self.bucket(address: address), policy.perAddress)])
    }

    /// A secret that names no account and is checked per client address alone (an admin API token): the secret's
    /// own bucket for the address, with the per-account limit, then the address's bucket shared with every secret.
    /// Give a right one back with `forgive`, so wrong guesses before it still count.
    package func key(_ secret: GuessableSecret, address: String) -> RateLimitKey {
        RateLimitKey(
            buckets: [
                ("\(secret.rawValue):addr:" + Hex.encode(Secrets.sha256(address).prefix(16)), policy.perAccount),
                (Self.bucket(address: address), policy.perAddress),
            ])
    }

    /// Counts one attempt in every bucket, atomically, before the secret is checked; throws 429 with Retry-After
    /// when that puts any bucket over its limit. Counting first (one `INSERT … ON CONFLICT … RETURNING` per
    /// bucket) means concurrent guesses cannot all pass a check made before any of them was recorded.
    package func attempt(_ key: RateLimitKey) async throws {
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
    package func succeeded(_ key: RateLimitKey) async throws {
        guard let account = key.buckets.first else { return }
        try await store.clearFailures(bucket: account.name)
        for bucket in key.buckets.dropFirst() { try await store.forgiveFailure(bucket: bucket.name) }
    }

    /// After a lookup whose right answer proves nothing about earlier guesses (a person's own device code, which
    /// they read off the device): this attempt is given back in every bucket, and the wrong guesses before it still
    /// count. Clearing the account's bucket here would let an account alternate guesses with its own code forever.
    package func forgive(_ key: RateLimitKey) async throws {
        for bucket in key.buckets { try await store.forgiveFailure(bucket: bucket.name) }
    }

    /// Counts one ceremony start for the address and stores its challenge (`Store.startCeremony`); 429, with no
    /// challenge stored, once the window's budget is spent.
    package func startCeremony(address: String, challengeID: [UInt8], binding: [UInt8], _ challenge: ChallengeRecord)
        async throws
    {
        let now = clock.now()
        let state = try await store.startCeremony(
            bucket: Self.ceremonyBucket(address), limit: policy.ceremoniesPerAddress, now: now, window: policy.window,
            challengeID: challengeID, binding: binding, challenge
        )
        if state.count > policy.ceremoniesPerAddress {
            let retry = state.windowStart.addingTimeInterval(policy.window).timeIntervalSince(now)
            throw APIError.tooManyAttempts(retryAfter: Int(retry.rounded(.up)))
        }
    }
}
