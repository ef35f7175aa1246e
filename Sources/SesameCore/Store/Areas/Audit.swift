import Foundation
import SQLKit

/// One audit event. `kind` and `outcome` are `AuditKind` / `AuditOutcome` raw values (kept as text here, so rows a
/// newer version wrote still read).
public struct AuditEvent: Sendable, Equatable, Codable {
    public var id: String
    public var at: Date
    /// e.g. `sign_in.passkey`, `sign_in.password`, `password.changed`, `passkey.added`, `totp.enabled`.
    public var kind: String
    /// `success`, `failure`, `refused` or `pending_second_factor`.
    public var outcome: String
    public var userID: String?
    public var username: String?
    public var clientAddress: String
    /// Non-secret reason, e.g. an error code.
    public var detail: String
    /// The OpenID Connect client (app) the event concerns, by its client id; nil for an event about no app, and for
    /// every event written before migration 26 (those name the app in `detail` only).
    public var clientID: String?

    public init(
        id: String = UUID().uuidString.lowercased(), at: Date, kind: String, outcome: String, userID: String?,
        username: String?,
        clientAddress: String, detail: String, clientID: String? = nil
    ) {
        self.id = id
        self.at = at
        self.kind = kind
        self.outcome = outcome
        self.userID = userID
        self.username = username
        self.clientAddress = clientAddress
        self.detail = detail
        self.clientID = clientID
    }
}

/// The audit log.
public protocol AuditStore {
    func appendAudit(_ event: AuditEvent) async throws
    /// Newest first; one account's, or everyone's.
    func auditEvents(userID: String?, limit: Int) async throws -> [AuditEvent]
}

extension SQLStore: AuditStore {
    package static let auditColumns: SQLQueryString =
        "id, at, kind, outcome, user_id, username, client_address, detail, client_id"

    package struct AuditRow: Decodable {
        /// Column names spelled out: a key strategy converts every name again for every row (a few per cent of a sign-in).
        package enum CodingKeys: String, CodingKey {
            case id, at, kind, outcome, userId = "user_id", username, clientAddress = "client_address", detail
            case clientId = "client_id"
        }

        package let id: String
        package let at: Int64
        package let kind: String
        package let outcome: String
        package let userId: String?
        package let username: String?
        package let clientAddress: String
        package let detail: String
        package let clientId: String?

        package var event: AuditEvent {
            AuditEvent(
                id: id, at: Date(milliseconds: at), kind: kind, outcome: outcome, userID: userId, username: username,
                clientAddress: clientAddress, detail: detail, clientID: clientId
            )
        }
    }

    package static func auditInsert(_ e: AuditEvent) -> SQLQueryString {
        """
        INSERT INTO audit_events (\(Self.auditColumns)) VALUES (\(bind: e.id),
            \(bind: e.at.milliseconds), \(bind: e.kind), \(bind: e.outcome), \(bind: e.userID), \(bind: e.username),
            \(bind: e.clientAddress), \(bind: e.detail), \(bind: e.clientID))
        """
    }

    public func appendAudit(_ e: AuditEvent) async throws {
        try await db.raw(Self.auditInsert(e)).run()
    }

    public func auditEvents(userID: String?, limit: Int) async throws -> [AuditEvent] {
        let filter: SQLQueryString = userID.map { "WHERE user_id = \(bind: $0)" } ?? ""
        return try await db.raw(
            "SELECT \(Self.auditColumns) FROM audit_events \(filter) ORDER BY at DESC, id LIMIT \(literal: max(1, limit))"
        )
        .all().map { try $0.decode(model: AuditRow.self).event }
    }
}
