import Foundation
import SQLKit

/// A mail to send, as the feature that asks for it rendered it (in the person's language, with its links).
public struct OutgoingMail: Sendable, Equatable, Codable {
    public var to: String
    public var subject: String
    public var text: String
    public var html: String?
    /// For mail a person may turn off: where to turn it off (an `https:` URL; one-click per RFC 8058).
    public var listUnsubscribe: String?

    public init(to: String, subject: String, text: String, html: String? = nil, listUnsubscribe: String? = nil) {
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.listUnsubscribe = listUnsubscribe
    }
}

/// A mail taken from the outbox by one node, leased to it until it reports back.
package struct ClaimedMail: Sendable, Equatable {
    package let id: String
    package let kind: String
    package let mail: OutgoingMail
    /// Tries so far, this one included.
    package let attempts: Int
    package let createdAt: Date
}

/// How full the outbox is, for `/health` and `/metrics`.
package struct OutboxState: Sendable, Equatable {
    /// Mails neither sent nor given up.
    package let depth: Int
    /// When the oldest of them was written.
    package let oldest: Date?
}

/// The outbox: a mail to send is a row written in the same transaction as the change that asks for it (so a crash
/// never loses one and a rolled-back change never sends one), sealed at rest (its text may hold a link or a code), and
/// sent by `OutboxSender` on every node: each takes due rows under a lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so
/// two nodes never take the same row), then marks them sent, to retry, or given up. Sent and given-up rows lose
/// their content at once and are deleted after the retention period by the purge.
package protocol OutboxStore: Sendable {
    /// Enqueues a mail on its own (a change whose other writes are elsewhere uses ``SQLStore/outboxInsert``).
    func enqueueMail(_ mail: OutgoingMail, kind: String, id: String, at: Date) async throws
    /// Leases up to `limit` due mails to the caller until `now + lease`, counting a try for each.
    func claimDueMail(now: Date, limit: Int, lease: TimeInterval) async throws -> [ClaimedMail]
    func markMailSent(id: String, at: Date, retention: TimeInterval) async throws
    func retryMail(id: String, at: Date, error: String) async throws
    func giveUpMail(id: String, at: Date, error: String, retention: TimeInterval) async throws
    func outboxState(now: Date) async throws -> OutboxState
}

extension FieldCipher.Purpose {
    /// Mails waiting in the outbox (recipient, subject and text, sealed as one JSON value; the row id as "user id").
    package static let mail = Self(rawValue: "mail")
}

extension SQLStore: OutboxStore {
    /// The insert that puts a mail in the outbox, for a feature's transaction: `try await db.raw(store.outboxInsert(…)).run()`.
    package func outboxInsert(_ mail: OutgoingMail, kind: String, id: String, at: Date) throws -> SQLQueryString {
        let payload = try ciphers.cipher(.mail).seal(Array(try JSONEncoder().encode(mail)), userID: id)
        return """
            INSERT INTO mail_outbox (id, kind, payload, created_at, next_attempt_at, attempts)
            VALUES (\(bind: id), \(bind: kind), \(bind: Data(payload)), \(bind: at.milliseconds), \(bind: at.milliseconds), 0)
            """
    }

    package func enqueueMail(_ mail: OutgoingMail, kind: String, id: String, at: Date) async throws {
        try await db.raw(try outboxInsert(mail, kind: kind, id: id, at: at)).run()
    }

    package func claimDueMail(now: Date, limit: Int, lease: TimeInterval) async throws -> [ClaimedMail] {
        let nowMs = now.milliseconds
        // One statement: the rows it picks are leased before any other node's statement can see them as due.
        let skipLocked: SQLQueryString = engine.kind == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let rows = try await db.raw(
            """
            UPDATE mail_outbox SET leased_until = \(bind: nowMs + Int64(lease * 1000)), attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM mail_outbox
                WHERE sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= \(bind: nowMs)
                    AND (leased_until IS NULL OR leased_until <= \(bind: nowMs))
                ORDER BY next_attempt_at LIMIT \(bind: limit)\(skipLocked))
            RETURNING id, kind, payload, attempts, created_at
            """
        ).all()
        return try rows.map { row in
            let id = try row.decode(column: "id", as: String.self)
            let sealed = [UInt8](try row.decode(column: "payload", as: Data.self))
            let mail = try JSONDecoder().decode(
                OutgoingMail.self, from: Data(try ciphers.cipher(.mail).open(sealed, userID: id)))
            return ClaimedMail(
                id: id, kind: try row.decode(column: "kind", as: String.self), mail: mail,
                attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
                createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
        }.sorted { $0.createdAt < $1.createdAt }
    }

    package func markMailSent(id: String, at: Date, retention: TimeInterval) async throws {
        try await db.raw(
            """
            UPDATE mail_outbox SET sent_at = \(bind: at.milliseconds), payload = NULL, leased_until = NULL,
                last_error = NULL, purge_after = \(bind: at.addingTimeInterval(retention).milliseconds)
            WHERE id = \(bind: id)
            """
        ).run()
    }

    package func retryMail(id: String, at: Date, error: String) async throws {
        try await db.raw(
            """
            UPDATE mail_outbox SET next_attempt_at = \(bind: at.milliseconds), leased_until = NULL,
                last_error = \(bind: String(error.prefix(300)))
            WHERE id = \(bind: id)
            """
        ).run()
    }

    package func giveUpMail(id: String, at: Date, error: String, retention: TimeInterval) async throws {
        try await db.raw(
            """
            UPDATE mail_outbox SET gave_up_at = \(bind: at.milliseconds), payload = NULL, leased_until = NULL,
                last_error = \(bind: String(error.prefix(300))),
                purge_after = \(bind: at.addingTimeInterval(retention).milliseconds)
            WHERE id = \(bind: id)
            """
        ).run()
    }

    package func outboxState(now: Date) async throws -> OutboxState {
        let row = try await db.raw(
            """
            SELECT COUNT(*) AS depth, MIN(created_at) AS oldest FROM mail_outbox
            WHERE sent_at IS NULL AND gave_up_at IS NULL
            """
        ).first()
        let depth = Int(try row?.decode(column: "depth", as: Int64.self) ?? 0)
        let oldest = try row?.decode(column: "oldest", as: Int64?.self)
        return OutboxState(depth: depth, oldest: oldest.map(Date.init(milliseconds:)))
    }
}
