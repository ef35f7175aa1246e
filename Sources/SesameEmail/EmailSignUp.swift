import Foundation
import SQLKit
import SesameCore

/// The address feature's `SignUpAddresses`: with `email` `required` (or `optional`), sign-up takes the address with
/// the username, and the account is made with it pending and its verification mail in the outbox, in one
/// transaction. The code and the link are those of an address added on the account page (`EmailVerifier`), bound to
/// the new account; an address another account verified gets its holder the notice instead, as on the account page,
/// so sign-up tells nobody whose an address is.
package struct EmailSignUpAddresses: SignUpAddresses {
    package let store: SQLStore
    package let policy: EmailAddressPolicy
    package let mails: EmailMails
    package let serverSecret: [UInt8]
    package let rateLimiter: RateLimiter
    package let metrics: ServerMetrics

    package init(
        store: SQLStore, configuration: ServerConfiguration, serverSecret: [UInt8], rateLimiter: RateLimiter,
        metrics: ServerMetrics
    ) {
        self.store = store
        self.policy = configuration.email
        self.mails = EmailMails(configuration)
        self.serverSecret = serverSecret
        self.rateLimiter = rateLimiter
        self.metrics = metrics
    }

    package var request: SignUpAddressRequest {
        switch policy {
        case .off: .off
        case .optional: .optional
        case .required: .required
        }
    }

    package func check(_ raw: String?, account: String, clientAddress: String) async throws -> String? {
        guard policy != .off else { return nil }
        let given = raw?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if given.isEmpty {
            guard policy != .required else {
                throw APIError.invalidField(.emailRequired, "This site needs an email address: give one to confirm.")
            }
            return nil
        }
        guard given.utf8.count <= 320, let address = EmailAddresses.validate(given) else {
            throw APIError.invalidField(.invalidEmail, "Give an email address like name@example.org.")
        }
        // Counted like a send from the account page: per account to come, per client address, per address mailed.
        try await rateLimiter.attempt(
            rateLimiter.key(
                .emailSend, account: "signup:\(account)", address: clientAddress,
                subjects: [EmailAddresses.key(address)]))
        return address
    }

    package func begin(
        _ address: String, user: User, clientAddress: String, at: Date, language: String, in db: any SQLDatabase
    ) async throws {
        let key = EmailAddresses.key(address)
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        let (token, tokenHash) = Secrets.token()
        let expiresAt = at.addingTimeInterval(EmailVerifier.lifetime)
        let taken =
            try await db.raw("SELECT user_id FROM email_addresses WHERE address_key = \(bind: key)").first() != nil
        let mail =
            taken
            ? mails.inUse(to: address, tag: language)
            : mails.verification(
                to: address, code: code, token: token, minutes: Int(EmailVerifier.lifetime / 60), tag: language)
        let pending = PendingEmail(
            address: address, key: key,
            codeMAC: EmailVerifier.mac(serverSecret, userID: user.id, key: key, code: code), tokenHash: tokenHash,
            expiresAt: expiresAt)
        try await db.raw(SQLStore.pendingUpsert(userID: user.id, pending: pending, now: at)).run()
        try await db.raw(
            try store.outboxInsert(
                mail, kind: taken ? EmailMails.inUseKind : EmailMails.verificationKind,
                id: UUID().uuidString.lowercased(), at: at)
        ).run()
        let event = AuditEvent(
            at: at, kind: AuditKind.emailAdded.rawValue, outcome: AuditOutcome.success.rawValue, userID: user.id,
            username: user.username, clientAddress: clientAddress, detail: "sign-up")
        try await db.raw(SQLStore.auditInsert(event)).run()
        metrics.auditEvent(kind: event.kind, outcome: event.outcome)
    }
}
