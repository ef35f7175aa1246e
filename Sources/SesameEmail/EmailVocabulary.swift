import SesameCore

extension APIErrorCode {
    /// The `email` setting is `off`.
    package static let emailNotEnabled = APIErrorCode("email_not_enabled")
    /// Not an address mail can be sent to.
    package static let invalidEmail = APIErrorCode("invalid_email")
    /// The address given is the account's verified one already.
    package static let emailUnchanged = APIErrorCode("email_unchanged")
    /// The `email` setting is `required`: the verified address can be changed, not removed.
    package static let emailRequired = APIErrorCode("email_required")
    /// A verification code or link that is wrong, expired, used, replaced by a later one, or for an address that
    /// cannot be verified: one answer for all of them, so none tells anything about another account.
    package static let invalidEmailCode = APIErrorCode("invalid_email_code")
}

extension APIError {
    package static var emailNotEnabled: APIError {
        APIError(.notFound, .emailNotEnabled, "This server keeps no email addresses.")
    }
    package static var invalidEmailCode: APIError {
        APIError(.unauthorized, .invalidEmailCode, "The code or link is wrong, expired or was already used.")
    }
}

extension AuditKind {
    /// An address was given and a verification mail written (detail: `added` or `changing`).
    package static let emailAdded = AuditKind("email.added")
    /// An address was verified (the first one), or a verification failed.
    package static let emailVerified = AuditKind("email.verified")
    /// A new address was verified in place of the old one; the old address was told.
    package static let emailChanged = AuditKind("email.changed")
    /// The address (and any pending one) was removed.
    package static let emailRemoved = AuditKind("email.removed")
    /// A mail about a change to the account's ways in was written to the outbox, in the change's transaction
    /// (detail: the notice, e.g. `passkey.added`; `AccountNotices`).
    package static let mailQueued = AuditKind("mail.queued")
}

extension GuessableSecret {
    /// Verification codes typed on the account page: per account and per client address.
    package static let emailCode = GuessableSecret("email_code")
    /// Verification mails written: per account, per client address and per address mailed (never given back).
    package static let emailSend = GuessableSecret("email_send")
}

extension Vocabulary {
    /// The words `SesameEmail` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let email = Vocabulary(
        owner: "SesameEmail",
        errorCodes: [.emailNotEnabled, .invalidEmail, .emailUnchanged, .emailRequired, .invalidEmailCode],
        auditKinds: [.emailAdded, .emailVerified, .emailChanged, .emailRemoved, .mailQueued],
        settings: ServerConfiguration.emailSettings,
        checks: [ConfigurationCheck { c throws(ConfigurationError) in try ServerConfiguration.validateEmail(c) }],
        guessableSecrets: [.emailCode, .emailSend]
    )
}
