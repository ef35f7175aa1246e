import Foundation

/// What the server keeps that the core still holds, by area (each area's protocol, records and SQL in one file under
/// `Areas/`); a feature that owns its storage (keychain sync, metadata) declares its own store protocol and extends `SQLStore`
/// in its target.
/// One SQL implementation (`SQLStore`) serves SQLite and PostgreSQL; routes see only these protocols. Every method
/// that must be atomic across nodes is a single statement or a transaction; the store conformance suite
/// (`StoreTests`) runs on both engines.
public protocol Store: AccountStore, SessionStore, ChallengeStore, RateLimitStore, AuditStore,
    SealedSecretStore, Sendable
{
    func ping() async throws

    /// Whether the last write failed because the database's storage is full (SQLite; cleared by the next write that
    /// commits). Reads still work then; `/health` says "degraded".
    var storageFull: Bool { get }

    /// The named secret, generated with `generate` and stored on first use; every node reads the same value.
    func serverSecret(named name: String, generate: @Sendable () -> [UInt8], now: Date) async throws -> [UInt8]

    /// Removes expired challenges, sessions and rate-limit windows.
    func purgeExpired(now: Date, rateLimitWindow: TimeInterval) async throws
}

public enum StoreError: Error, Equatable {
    /// A unique constraint refused the row (e.g. username taken, credential ID registered).
    case conflict
    /// A sealed secret (named by its purpose, e.g. `totp`) failed authentication: damaged, moved from another
    /// row, or sealed under another server secret. Carries no secret material.
    case undecryptable(String)
    /// A sealed secret (named by its purpose) names a file key that is not in the sealing key file: the file is
    /// missing a key (or the server runs without one). Carries the key id, a one-way function of the key.
    case unknownSealingKey(String, keyID: String)
    /// The database holds a migration from a newer Sesame (`version`) that removes or changes what this build
    /// (schema `knownThrough`) uses: this node must be upgraded before it may run against it.
    case newerSchema(version: Int, knownThrough: Int)
}

/// What deleting a way in did.
public enum RemovalOutcome: Sendable, Equatable {
    case removed
    case notFound
    /// Refused: it is the account's last way in (no other passkey and no password).
    case lastWayIn
}

extension Date {
    /// Unix time in milliseconds, the store's time unit.
    package var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    package init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

extension Bool {
    /// The store's boolean columns are BIGINT 0/1 on both engines.
    package var column: Int64 { self ? 1 : 0 }
}
