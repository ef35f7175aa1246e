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

/// What the store refused or could not read. The server's error shape (`ServerError`): equality looks at the code;
/// the details a caller acts on are in `extra` (`purpose`, `keyID`, `version`, `knownThrough`), never secret bytes.
public typealias StoreError = ServerError<StoreErrorCode>

/// The codes of `StoreError`.
public struct StoreErrorCode: ServerErrorCode {
    public let name: String
    private init(_ name: String) { self.name = name }
    public var description: String { name }

    /// A unique constraint refused the row (e.g. username taken, credential ID registered).
    public static let conflict = StoreErrorCode("conflict")
    /// A sealed secret failed authentication: damaged, moved from another row, or sealed under another server
    /// secret.
    public static let undecryptable = StoreErrorCode("undecryptable")
    /// A sealed secret names a file key that is not in the sealing key file.
    public static let unknownSealingKey = StoreErrorCode("unknownSealingKey")
    /// The database holds a migration from a newer Sesame that removes or changes what this build uses.
    public static let newerSchema = StoreErrorCode("newerSchema")
}

extension ServerError where Code == StoreErrorCode {
    /// A unique constraint refused the row (e.g. username taken, credential ID registered).
    public static var conflict: StoreError {
        StoreError(code: .conflict, message: "a unique constraint refused the row")
    }

    /// A sealed secret (named by its purpose, e.g. `totp`) failed authentication. Carries no secret material.
    public static func undecryptable(_ purpose: String, file: String = #fileID, line: Int = #line) -> StoreError {
        var error = StoreError(
            code: .undecryptable, message: "a sealed \(purpose) value failed authentication", file: file, line: line)
        error.extra = ["purpose": purpose]
        return error
    }

    /// A sealed secret (named by its purpose) names a file key that is not in the sealing key file: the file is
    /// missing a key (or the server runs without one). Carries the key id, a one-way function of the key.
    public static func unknownSealingKey(_ purpose: String, keyID: String, file: String = #fileID, line: Int = #line)
        -> StoreError
    {
        var error = StoreError(
            code: .unknownSealingKey, message: "a sealed \(purpose) value names file key \(keyID), not in the key file",
            file: file, line: line)
        error.extra = ["purpose": purpose, "keyID": keyID]
        return error
    }

    /// The database holds a migration from a newer Sesame (`version`) that removes or changes what this build
    /// (schema `knownThrough`) uses: this node must be upgraded before it may run against it.
    public static func newerSchema(version: Int, knownThrough: Int, file: String = #fileID, line: Int = #line)
        -> StoreError
    {
        var error = StoreError(
            code: .newerSchema,
            message:
                "the database holds schema change \(version) from a newer Sesame; this build knows \(knownThrough)",
            file: file, line: line)
        error.extra = ["version": String(version), "knownThrough": String(knownThrough)]
        return error
    }

    /// The sealing purpose of an `undecryptable` or `unknownSealingKey` error.
    public var purpose: String? { extra["purpose"] }
    /// The file key id of an `unknownSealingKey` error.
    public var keyID: String? { extra["keyID"] }
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
