import Foundation
import SQLKit
import SesameCore

/// The address feature's `AccountNotices`: a change to an account's ways in mails its verified address, in the
/// change's transaction. The address is read in that transaction; none verified, or addresses off, and nothing is
/// written. The mail (`EmailMails.notice`) goes to the outbox and its sending is an audit event, `mail.queued` with
/// the notice as detail, both beside the change's own writes, so a rolled-back change neither mails nor records.
package struct EmailAccountNotices: AccountNotices {
    package let store: SQLStore
    package let mails: EmailMails
    package let policy: EmailAddressPolicy
    package let metrics: ServerMetrics

    package init(store: SQLStore, configuration: ServerConfiguration, metrics: ServerMetrics) {
        self.store = store
        self.mails = EmailMails(configuration)
        self.policy = configuration.email
        self.metrics = metrics
    }

    package func queue(
        _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
        details: [AccountNoticeDetail], language: String
    ) async throws {
        guard policy != .off else { return }
        try await store.engine.withTransaction { db in
            try await queue(
                kind, userID: userID, username: username, clientAddress: clientAddress, at: at, details: details,
                language: language, in: db)
        }
    }

    package func getsNotices(userID: String) async throws -> Bool {
        guard policy != .off else { return false }
        return try await Self.address(of: userID, in: store.engine.sql) != nil
    }

    /// The account's verified address, if it has one.
    private static func address(of userID: String, in db: any SQLDatabase) async throws -> String? {
        try await db.raw(
            "SELECT address FROM email_addresses WHERE user_id = \(bind: userID) AND address IS NOT NULL"
        ).first()?.decode(column: "address", as: String?.self)
    }

    package func queue(
        _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
        details: [AccountNoticeDetail], language: String, in db: any SQLDatabase
    ) async throws {
        guard policy != .off else { return }
        guard let address = try await Self.address(of: userID, in: db) else { return }
        let mail = mails.notice(kind, to: address, username: username, at: at, details: details, tag: language)
        try await db.raw(
            try store.outboxInsert(mail, kind: kind.rawValue, id: UUID().uuidString.lowercased(), at: at)
        ).run()
        let event = AuditEvent(
            at: at, kind: AuditKind.mailQueued.rawValue, outcome: AuditOutcome.success.rawValue, userID: userID,
            username: username, clientAddress: clientAddress, detail: kind.rawValue)
        try await db.raw(SQLStore.auditInsert(event)).run()
        // Counted before the commit: the notice is the change's last write, so only a failed commit overcounts.
        metrics.auditEvent(kind: event.kind, outcome: event.outcome)
    }
}
