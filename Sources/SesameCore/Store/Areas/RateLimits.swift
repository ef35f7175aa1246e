import Foundation
import SQLKit

/// Rate-limit windows: fixed windows of attempts per bucket, shared by all nodes.
public protocol RateLimitStore {
    /// Attempts counted in the current window, and when it started.
    func failures(bucket: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowStart: Date)
    /// Adds one attempt, starting a new window if the old one ended; returns the new count and window start.
    func recordFailure(bucket: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowStart: Date)
    func clearFailures(bucket: String) async throws
    /// Takes one back (a success counted as an attempt), never below zero.
    func forgiveFailure(bucket: String) async throws
}

extension SQLStore: RateLimitStore {
    public func failures(bucket: String, now: Date, window: TimeInterval) async throws -> (
        count: Int, windowStart: Date
    ) {
        let windowMs = Int64(window * 1000)
        guard
            let row = try await db.raw("SELECT window_start, failures FROM rate_limits WHERE bucket = \(bind: bucket)")
                .first()
        else {
            return (0, now)
        }
        let start = try row.decode(column: "window_start", as: Int64.self)
        if start + windowMs <= now.milliseconds { return (0, now) }
        return (try row.decode(column: "failures", as: Int.self), Date(milliseconds: start))
    }

    /// Adds one attempt to the bucket, starting a new window if the old one ended; returns `window_start, failures`.
    /// One statement: atomic on both engines, so concurrent attempts on several nodes all count.
    package static func failureUpsert(bucket: String, now: Date, window: TimeInterval) -> SQLQueryString {
        let nowMs = now.milliseconds
        let expired = nowMs - Int64(window * 1000)
        return """
            INSERT INTO rate_limits (bucket, window_start, failures) VALUES (\(bind: bucket), \(bind: nowMs), 1)
            ON CONFLICT (bucket) DO UPDATE SET
                failures = CASE WHEN rate_limits.window_start <= \(bind: expired) THEN 1 ELSE rate_limits.failures + 1 END,
                window_start = CASE WHEN rate_limits.window_start <= \(bind: expired) THEN \(bind: nowMs) ELSE rate_limits.window_start END
            RETURNING window_start, failures
            """
    }

    /// `failureUpsert` for a PostgreSQL prepared statement: the bucket is `$1`, the time now `$2` and the end of the
    /// previous window `$3` (both in milliseconds).
    package static let postgresFailureUpsert = """
        INSERT INTO rate_limits (bucket, window_start, failures) VALUES ($1, $2, 1)
        ON CONFLICT (bucket) DO UPDATE SET
            failures = CASE WHEN rate_limits.window_start <= $3 THEN 1 ELSE rate_limits.failures + 1 END,
            window_start = CASE WHEN rate_limits.window_start <= $3 THEN $2 ELSE rate_limits.window_start END
        RETURNING window_start, failures
        """

    public func recordFailure(bucket: String, now: Date, window: TimeInterval) async throws -> (
        count: Int, windowStart: Date
    ) {
        guard let row = try await db.raw(Self.failureUpsert(bucket: bucket, now: now, window: window)).first() else {
            throw DatabaseError("rate limit upsert returned nothing")
        }
        return (
            try row.decode(column: "failures", as: Int.self),
            Date(milliseconds: try row.decode(column: "window_start", as: Int64.self))
        )
    }

    public func clearFailures(bucket: String) async throws {
        try await db.raw("DELETE FROM rate_limits WHERE bucket = \(bind: bucket)").run()
    }

    public func forgiveFailure(bucket: String) async throws {
        try await db.raw(
            "UPDATE rate_limits SET failures = failures - 1 WHERE bucket = \(bind: bucket) AND failures > 0"
        ).run()
    }
}
