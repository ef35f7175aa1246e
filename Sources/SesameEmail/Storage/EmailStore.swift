import Foundation
import SQLKit
import SesameCore

/// An account's address as stored: the verified one and a pending new one.
package struct EmailRecord: Sendable, Equatable {
    package var address: String?
    package var verifiedAt: Date?
    package var pending: String?
    package var pendingExpiresAt: Date?

    /// The pending address while its code and link still work.
    package func pending(at now: Date) -> String? {
        guard let pending, let end = pendingExpiresAt, end > now else { return nil }
        return pending
    }
}

/// A new address waiting for its verification: what checks the code and the link, never the code or the link.
package struct PendingEmail: Sendable {
    package let address: String
    package let key: String
    package let codeMAC: [UInt8]
    package let tokenHash: [UInt8]
    package let expiresAt: Date
}

/// How a verification proves the mail arrived: the code typed on the account page (checked by `matches` against the
/// stored MAC and the pending address's key, in constant time), or the link's token (found by its hash).
package enum EmailProof: Sendable {
    case code(userID: String, matches: @Sendable (_ storedMAC: [UInt8], _ key: String) -> Bool)
    case token(hash: [UInt8])
}

/// A verification that took effect.
package struct EmailVerification: Sendable, Equatable {
    package let userID: String
    package let address: String
    /// The address verified before, now replaced (and told so by mail), if any.
    package let previous: String?
}

/// Addresses, their pending changes and the mails those write.
package protocol EmailStore: Sendable {
    func email(userID: String) async throws -> EmailRecord?
    /// Whose verified address has this key (`EmailAddresses.key`), if anyone's.
    func emailHolder(key: String) async throws -> String?
    /// Keeps `pending` beside the verified address (replacing an earlier pending one) and writes `mail` to the
    /// outbox, in one transaction.
    func beginEmailChange(userID: String, pending: PendingEmail, mail: OutgoingMail, mailKind: String, now: Date)
        async throws
    /// Makes the pending address the verified one when `proof` holds and it has not expired, and no other account
    /// verified that address meanwhile; the pending address is then spent (single use). A replaced verified
    /// address gets `changedMail(old, new)` in the outbox. One transaction; nil when nothing changed.
    func completeEmailChange(
        proof: EmailProof, now: Date, changedMail: @escaping @Sendable (String, String) -> OutgoingMail,
        mailKind: String
    ) async throws -> EmailVerification?
    /// Removes the account's addresses, verified and pending; false when it had none.
    func removeEmail(userID: String) async throws -> Bool

    /// The enabled account whose username key, or verified address's key, is `key` (the username first), with its
    /// verified address: one query, the same whether or not there is one.
    func recoveryTarget(key: String) async throws -> RecoveryTarget?
    /// Writes the recovery code's mail to the outbox and its audit event, in one transaction.
    func queueRecoveryCode(_ mail: OutgoingMail, audit: AuditEvent, now: Date) async throws
    /// The limited session a recovery code opens, its audit event and the notice of it, in one transaction.
    func startRecoverySession(tokenHash: [UInt8], session: SessionRecord, audit: AuditEvent, notice: AccountNotice)
        async throws
}

/// An account recovery by email can reach: enabled, with a verified address.
package struct RecoveryTarget: Sendable, Equatable {
    package let userID: String
    package let username: String
    package let address: String
}

extension SQLStore: EmailStore {
    package func email(userID: String) async throws -> EmailRecord? {
        guard
            let row = try await db.raw(
                """
                SELECT address, verified_at, pending, pending_expires_at FROM email_addresses
                WHERE user_id = \(bind: userID)
                """
            ).first()
        else { return nil }
        return EmailRecord(
            address: try row.decode(column: "address", as: String?.self),
            verifiedAt: try row.decode(column: "verified_at", as: Int64?.self).map(Date.init(milliseconds:)),
            pending: try row.decode(column: "pending", as: String?.self),
            pendingExpiresAt: try row.decode(column: "pending_expires_at", as: Int64?.self).map(
                Date.init(milliseconds:)))
    }

    package func emailHolder(key: String) async throws -> String? {
        try await db.raw("SELECT user_id FROM email_addresses WHERE address_key = \(bind: key)").first()?
            .decode(column: "user_id", as: String.self)
    }

    package func beginEmailChange(
        userID: String, pending: PendingEmail, mail: OutgoingMail, mailKind: String, now: Date
    ) async throws {
        let insertMail = try outboxInsert(mail, kind: mailKind, id: UUID().uuidString.lowercased(), at: now)
        try await engine.withTransaction { db in
            try await db.raw(Self.pendingUpsert(userID: userID, pending: pending, now: now)).run()
            try await db.raw(insertMail).run()
        }
    }

    /// Keeps `pending` as the account's pending address, replacing an earlier one.
    package static func pendingUpsert(userID: String, pending: PendingEmail, now: Date) -> SQLQueryString {
        """
        INSERT INTO email_addresses (user_id, pending, pending_key, pending_code, pending_token,
            pending_expires_at, updated_at)
        VALUES (\(bind: userID), \(bind: pending.address), \(bind: pending.key), \(bind: Data(pending.codeMAC)),
            \(bind: Data(pending.tokenHash)), \(bind: pending.expiresAt.milliseconds), \(bind: now.milliseconds))
        ON CONFLICT (user_id) DO UPDATE SET pending = excluded.pending, pending_key = excluded.pending_key,
            pending_code = excluded.pending_code, pending_token = excluded.pending_token,
            pending_expires_at = excluded.pending_expires_at, updated_at = excluded.updated_at
        """
    }

    package func completeEmailChange(
        proof: EmailProof, now: Date, changedMail: @escaping @Sendable (String, String) -> OutgoingMail,
        mailKind: String
    ) async throws -> EmailVerification? {
        let lock: SQLQueryString = engine.kind == .postgres ? " FOR UPDATE" : ""
        let selector: SQLQueryString =
            switch proof {
            case .code(let userID, _): "user_id = \(bind: userID)"
            case .token(let hash): "pending_token = \(bind: Data(hash))"
            }
        let store = self
        do {
            return try await engine.withTransaction { db in
                guard
                    let row = try await db.raw(
                        """
                        SELECT user_id, address, pending, pending_key, pending_code, pending_token FROM email_addresses
                        WHERE \(selector) AND pending IS NOT NULL AND pending_expires_at > \(bind: now.milliseconds)\(lock)
                        """
                    ).first()
                else { return nil }
                let userID = try row.decode(column: "user_id", as: String.self)
                let previous = try row.decode(column: "address", as: String?.self)
                let address = try row.decode(column: "pending", as: String.self)
                let key = try row.decode(column: "pending_key", as: String.self)
                let token = try row.decode(column: "pending_token", as: Data.self)
                if case .code(_, let matches) = proof {
                    guard matches([UInt8](try row.decode(column: "pending_code", as: Data.self)), key) else {
                        return nil
                    }
                }
                // Spent whatever happens next: the code and the link work once.
                let spent = try await db.raw(
                    """
                    UPDATE email_addresses SET pending = NULL, pending_key = NULL, pending_code = NULL,
                        pending_token = NULL, pending_expires_at = NULL, updated_at = \(bind: now.milliseconds)
                    WHERE user_id = \(bind: userID) AND pending_token = \(bind: token)
                    RETURNING user_id
                    """
                ).all()
                guard !spent.isEmpty else { return nil }
                // Another account verified this address first: it stays theirs, and this verification fails as a
                // wrong code would.
                let holder = try await db.raw(
                    """
                    SELECT user_id FROM email_addresses WHERE address_key = \(bind: key) AND user_id <> \(bind: userID)
                    """
                ).first()
                guard holder == nil else { return nil }
                try await db.raw(
                    """
                    UPDATE email_addresses SET address = \(bind: address), address_key = \(bind: key),
                        verified_at = \(bind: now.milliseconds)
                    WHERE user_id = \(bind: userID)
                    """
                ).run()
                let replaced = previous.flatMap { EmailAddresses.key($0) == key ? nil : $0 }
                if let replaced {
                    try await db.raw(
                        try store.outboxInsert(
                            changedMail(replaced, address), kind: mailKind, id: UUID().uuidString.lowercased(), at: now)
                    ).run()
                }
                return EmailVerification(userID: userID, address: address, previous: replaced)
            }
        } catch  where Self.isUniqueViolation(error) {
            // Two accounts verified one address at once; the one that committed first holds it.
            return nil
        }
    }

    package func recoveryTarget(key: String) async throws -> RecoveryTarget? {
        guard
            let row = try await db.raw(
                """
                SELECT u.id, u.username, e.address FROM users u JOIN email_addresses e ON e.user_id = u.id
                WHERE (u.username_key = \(bind: key) OR e.address_key = \(bind: key)) AND e.address IS NOT NULL
                    AND u.disabled = 0
                ORDER BY CASE WHEN u.username_key = \(bind: key) THEN 0 ELSE 1 END LIMIT 1
                """
            ).first()
        else { return nil }
        return RecoveryTarget(
            userID: try row.decode(column: "id", as: String.self),
            username: try row.decode(column: "username", as: String.self),
            address: try row.decode(column: "address", as: String.self))
    }

    package func queueRecoveryCode(_ mail: OutgoingMail, audit: AuditEvent, now: Date) async throws {
        let insertMail = try outboxInsert(
            mail, kind: EmailMails.recoveryKind, id: UUID().uuidString.lowercased(), at: now)
        try await engine.withTransaction { db in
            try await db.raw(insertMail).run()
            try await db.raw(Self.auditInsert(audit)).run()
        }
    }

    package func startRecoverySession(
        tokenHash: [UInt8], session: SessionRecord, audit: AuditEvent, notice: AccountNotice
    ) async throws {
        try await engine.withTransaction { db in
            try await db.raw(Self.sessionInsert(tokenHash: tokenHash, session)).run()
            try await db.raw(Self.auditInsert(audit)).run()
            try await notice.give(in: db)
        }
    }

    package func removeEmail(userID: String) async throws -> Bool {
        !(try await db.raw("DELETE FROM email_addresses WHERE user_id = \(bind: userID) RETURNING user_id").all())
            .isEmpty
    }
}
