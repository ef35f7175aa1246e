import Foundation
import SQLKit

public struct SessionRecord: Sendable, Equatable {
    /// Public identifier (not the token) used to list and revoke sessions.
    public var id: String
    public var userID: String
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date
    public var userAgent: String
    /// How its holder last proved who they are: a `SessionMethod` raw value (`passkey`, `passkey-up`, `password`,
    /// `password+totp`, ...).
    public var method: String
    /// When the holder last proved who they are (sign-in, or re-authentication within the session).
    public var authenticatedAt: Date
    /// For a passkey method: whether that passkey was backup-eligible (a synced passkey, `swk`) or not (bound to
    /// its device, `hwk`); nil otherwise, and for sessions older than migration 11.
    public var passkeyBackupEligible: Bool? = nil
    /// What the session is limited to (a `SessionLimitation` raw value), nil for a full session (migration 20).
    public var limitation: String? = nil
}

/// Sessions, stored under the SHA-256 of their token.
public protocol SessionStore {
    func createSession(tokenHash: [UInt8], _ session: SessionRecord) async throws
    func session(tokenHash: [UInt8], now: Date) async throws -> SessionRecord?
    func touchSession(tokenHash: [UInt8], at: Date) async throws
    /// Records a re-authentication: the session's `authenticatedAt` becomes `at` (and its method `method`, with the
    /// passkey's backup eligibility, nil for a password).
    func markReauthenticated(tokenHash: [UInt8], method: String, passkeyBackupEligible: Bool?, at: Date) async throws
        -> Bool
    func sessions(userID: String, now: Date) async throws -> [SessionRecord]
    func deleteSession(userID: String, id: String) async throws -> Bool
    /// "Sign out everywhere": deletes every session of the user and revokes every OAuth grant of theirs (refresh
    /// and access tokens), in one transaction; returns how many sessions.
    func signOutEverywhere(userID: String, at: Date) async throws -> Int
    /// Whether the session with this public id is signed in (a grant without `offline_access` lives as long).
    func sessionExists(id: String, now: Date) async throws -> Bool
}

extension SQLStore: SessionStore {
    package static let sessionColumns: SQLQueryString =
        "id, user_id, created_at, last_seen_at, expires_at, user_agent, method, authenticated_at, passkey_backup_eligible, limitation"

    /// A `sessions` row (column names as in `sessionColumns`).
    package struct SessionRow: Decodable {
        /// Column names spelled out: a key strategy converts every name again for every row (a few per cent of a sign-in).
        package enum CodingKeys: String, CodingKey {
            case id, userId = "user_id", createdAt = "created_at", lastSeenAt = "last_seen_at",
                expiresAt = "expires_at", userAgent = "user_agent", method, authenticatedAt = "authenticated_at",
                passkeyBackupEligible = "passkey_backup_eligible", limitation
        }

        package let id: String
        package let userId: String
        package let createdAt: Int64
        package let lastSeenAt: Int64
        package let expiresAt: Int64
        package let userAgent: String
        package let method: String
        package let authenticatedAt: Int64
        package let passkeyBackupEligible: Int64?
        package let limitation: String?

        package var session: SessionRecord {
            SessionRecord(
                id: id, userID: userId, createdAt: Date(milliseconds: createdAt),
                lastSeenAt: Date(milliseconds: lastSeenAt),
                expiresAt: Date(milliseconds: expiresAt), userAgent: userAgent, method: method,
                authenticatedAt: Date(milliseconds: authenticatedAt),
                passkeyBackupEligible: passkeyBackupEligible.map { $0 != 0 }, limitation: limitation
            )
        }
    }

    package static func session(_ row: any SQLRow) throws -> SessionRecord {
        try row.decode(model: SessionRow.self).session
    }

    package static func sessionInsert(tokenHash: [UInt8], _ s: SessionRecord) -> SQLQueryString {
        """
        INSERT INTO sessions (token_hash, \(Self.sessionColumns)) VALUES (\(bind: Data(tokenHash)), \(bind: s.id), \(bind: s.userID),
            \(bind: s.createdAt.milliseconds), \(bind: s.lastSeenAt.milliseconds), \(bind: s.expiresAt.milliseconds),
            \(bind: s.userAgent), \(bind: s.method), \(bind: s.authenticatedAt.milliseconds), \(bind: s.passkeyBackupEligible?.column),
            \(bind: s.limitation))
        """
    }

    public func createSession(tokenHash: [UInt8], _ s: SessionRecord) async throws {
        try await insert(Self.sessionInsert(tokenHash: tokenHash, s))
    }

    public func session(tokenHash: [UInt8], now: Date) async throws -> SessionRecord? {
        try await db.raw(
            "SELECT \(Self.sessionColumns) FROM sessions WHERE token_hash = \(bind: Data(tokenHash)) AND expires_at > \(bind: now.milliseconds)"
        ).first().map(Self.session)
    }

    public func touchSession(tokenHash: [UInt8], at: Date) async throws {
        try await db.raw(
            "UPDATE sessions SET last_seen_at = \(bind: at.milliseconds) WHERE token_hash = \(bind: Data(tokenHash))"
        ).run()
    }

    public func markReauthenticated(
        tokenHash: [UInt8], method: String, passkeyBackupEligible: Bool?, at: Date
    ) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE sessions SET authenticated_at = \(bind: at.milliseconds), method = \(bind: method),
                passkey_backup_eligible = \(bind: passkeyBackupEligible?.column), last_seen_at = \(bind: at.milliseconds)
            WHERE token_hash = \(bind: Data(tokenHash)) RETURNING id
            """
        ).all()).isEmpty
    }

    public func sessions(userID: String, now: Date) async throws -> [SessionRecord] {
        try await db.raw(
            "SELECT \(Self.sessionColumns) FROM sessions WHERE user_id = \(bind: userID) AND expires_at > \(bind: now.milliseconds) ORDER BY created_at, id"
        ).all().map(Self.session)
    }

    public func deleteSession(userID: String, id: String) async throws -> Bool {
        !(try await db.raw("DELETE FROM sessions WHERE user_id = \(bind: userID) AND id = \(bind: id) RETURNING id")
            .all()).isEmpty
    }

    public func signOutEverywhere(userID: String, at: Date) async throws -> Int {
        try await engine.withTransaction { [self] db in try await signOutEverywhere(userID: userID, at: at, in: db) }
    }

    /// As `signOutEverywhere(userID:at:)`, inside the caller's transaction `db`.
    package func signOutEverywhere(userID: String, at: Date, in db: any SQLDatabase) async throws -> Int {
        try await schema.sessionsEnded(userID: userID, db, at: at)
        return try await db.raw("DELETE FROM sessions WHERE user_id = \(bind: userID) RETURNING id").all().count
    }

    public func sessionExists(id: String, now: Date) async throws -> Bool {
        try await db.raw(
            "SELECT id FROM sessions WHERE id = \(bind: id) AND expires_at > \(bind: now.milliseconds)"
        ).first() != nil
    }
}
