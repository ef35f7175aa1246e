import Foundation
import PostgresKit
import SQLKit

/// A pending challenge or pending step. `purpose` is a `ChallengePurpose` raw value; `payload` is JSON owned by the
/// feature that created it (`Ceremonies` is the only caller).
public struct ChallengeRecord: Sendable, Equatable {
    public var purpose: String
    public var userID: String?
    public var payload: String
    public var expiresAt: Date
}

/// Challenges: single-use, expiring, bound to whoever asked.
public protocol ChallengeStore {
    func insertChallenge(id: [UInt8], binding: [UInt8], _ challenge: ChallengeRecord) async throws
    /// Atomically removes and returns the challenge if it exists, has this purpose and binding, and has not
    /// expired. A second call with the same id returns nil (single use, across nodes).
    func consumeChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws -> ChallengeRecord?
    /// Reads a challenge without consuming it.
    func peekChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws -> ChallengeRecord?
    /// Counts one ceremony start in `bucket` (as `recordFailure`) and, only if the count is then at most `limit`,
    /// stores the challenge (as `insertChallenge`). Returns the bucket's count and window start. The count is exact
    /// across nodes; a challenge is never stored for a start past the limit.
    func startCeremony(
        bucket: String, limit: Int, now: Date, window: TimeInterval, challengeID: [UInt8], binding: [UInt8],
        _ challenge: ChallengeRecord
    ) async throws -> (count: Int, windowStart: Date)
    func deleteChallenge(id: [UInt8]) async throws
    /// Records a sealed challenge (one stored nowhere when it was issued) as spent until it expires. False when it
    /// was spent already, on any node.
    func spendChallenge(_ spent: SpentChallenge) async throws -> Bool
}

/// A sealed challenge's entry in `used_challenges`: SHA-256 of the challenge, and when it expires (after which the
/// challenge is refused anyway and the row is purged).
public struct SpentChallenge: Sendable, Equatable {
    public var id: [UInt8]
    public var expiresAt: Date
    public init(id: [UInt8], expiresAt: Date) {
        self.id = id
        self.expiresAt = expiresAt
    }
}

extension SQLStore: ChallengeStore {
    package struct ChallengeRow: Decodable {
        /// Column names spelled out: a key strategy converts every name again for every row (a few per cent of a sign-in).
        package enum CodingKeys: String, CodingKey {
            case purpose, userId = "user_id", payload, expiresAt = "expires_at"
        }

        package let purpose: String
        package let userId: String?
        package let payload: String
        package let expiresAt: Int64
    }

    /// PostgreSQL, prepared: the ceremony start as one statement (one round trip, one commit). The challenge row is
    /// inserted only from a count row within the limit (`$10`), and the count is taken under the bucket's row lock, as
    /// in `recordFailure` (`postgresFailureUpsert`: `$1` to `$3`); the challenge is `$4` to `$9`.
    package enum StartCeremony: PostgresStatementText {
        package static let name = "sesame_start_ceremony"
        package static let sql = """
            WITH counted AS (\(postgresFailureUpsert)),
            stored AS (
                INSERT INTO challenges (id, purpose, binding, user_id, payload, expires_at)
                SELECT $4, $5, $6, $7, $8, $9 FROM counted WHERE counted.failures <= $10)
            SELECT window_start, failures FROM counted
            """
        package static let parameterTypes: [PostgresDataType] = [
            .text, .int8, .int8, .bytea, .text, .bytea, .text, .text, .int8, .int8,
        ]
    }

    package static let challengeColumnNames = "purpose, user_id, payload, expires_at"

    /// PostgreSQL, prepared: `consumeChallenge`.
    package enum ConsumeChallenge: PostgresStatementText {
        package static let name = "sesame_consume_challenge"
        package static let sql = """
            DELETE FROM challenges WHERE id = $1 AND purpose = $2 AND binding = $3 AND expires_at > $4
            RETURNING \(challengeColumnNames)
            """
        package static let parameterTypes: [PostgresDataType] = [.bytea, .text, .bytea, .int8]
    }

    package static func challenge(_ row: any SQLRow) throws -> ChallengeRecord {
        let r = try row.decode(model: ChallengeRow.self)
        return ChallengeRecord(
            purpose: r.purpose, userID: r.userId, payload: r.payload, expiresAt: Date(milliseconds: r.expiresAt))
    }

    public func insertChallenge(id: [UInt8], binding: [UInt8], _ c: ChallengeRecord) async throws {
        try await insert(
            """
            INSERT INTO challenges (id, purpose, binding, user_id, payload, expires_at) VALUES (\(bind: Data(id)), \(bind: c.purpose),
                \(bind: Data(binding)), \(bind: c.userID), \(bind: c.payload), \(bind: c.expiresAt.milliseconds))
            """
        )
    }

    public func startCeremony(
        bucket: String, limit: Int, now: Date, window: TimeInterval, challengeID: [UInt8], binding: [UInt8],
        _ c: ChallengeRecord
    ) async throws -> (count: Int, windowStart: Date) {
        let row: (any SQLRow)?
        do {
            switch engine.kind {
            case .postgres:
                let nowMs = now.milliseconds
                row = try await engine.runPrepared(
                    StartCeremony.self,
                    [
                        .text(bucket), .integer(nowMs), .integer(nowMs - Int64(window * 1000)), .bytes(challengeID),
                        .text(c.purpose), .bytes(binding), .text(c.userID), .text(c.payload),
                        .integer(c.expiresAt.milliseconds), .integer(Int64(limit)),
                    ]
                ).first?.sql()
            case .sqlite:
                let count = Self.failureUpsert(bucket: bucket, now: now, window: window)
                // Two statements without a transaction (on SQLite a sign-in's cost is mostly its statement count):
                // the count is atomic on its own, and the challenge is stored only after a count within the limit.
                // Interrupted between the two, a start is counted that stored nothing, which errs on the safe side.
                row = try await db.raw(count).first()
                if let row, try row.decode(column: "failures", as: Int.self) <= limit {
                    try await insertChallenge(id: challengeID, binding: binding, c)
                }
            }
        } catch  where Self.isUniqueViolation(error) {
            throw StoreError.conflict
        }
        guard let row else { throw DatabaseError("rate limit upsert returned nothing") }
        return (
            try row.decode(column: "failures", as: Int.self),
            Date(milliseconds: try row.decode(column: "window_start", as: Int64.self))
        )
    }

    public func consumeChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws
        -> ChallengeRecord?
    {
        if engine.kind == .postgres {
            return try await engine.runPrepared(
                ConsumeChallenge.self, [.bytes(id), .text(purpose), .bytes(binding), .integer(now.milliseconds)]
            ).first.map { try Self.challenge($0.sql()) }
        }
        return try await db.raw(
            """
            DELETE FROM challenges WHERE id = \(bind: Data(id)) AND purpose = \(bind: purpose) AND binding = \(bind: Data(binding))
                AND expires_at > \(bind: now.milliseconds)
            RETURNING \(unsafeRaw: Self.challengeColumnNames)
            """
        ).first().map(Self.challenge)
    }

    public func peekChallenge(id: [UInt8], purpose: String, binding: [UInt8], now: Date) async throws
        -> ChallengeRecord?
    {
        try await db.raw(
            """
            SELECT purpose, user_id, payload, expires_at FROM challenges WHERE id = \(bind: Data(id)) AND purpose = \(bind: purpose)
                AND binding = \(bind: Data(binding)) AND expires_at > \(bind: now.milliseconds)
            """
        ).first().map(Self.challenge)
    }

    public func spendChallenge(_ spent: SpentChallenge) async throws -> Bool {
        !(try await db.raw(
            """
            INSERT INTO used_challenges (id, expires_at) VALUES (\(bind: Data(spent.id)), \(bind: spent.expiresAt.milliseconds))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """
        ).all()).isEmpty
    }

    public func deleteChallenge(id: [UInt8]) async throws {
        try await db.raw("DELETE FROM challenges WHERE id = \(bind: Data(id))").run()
    }
}
