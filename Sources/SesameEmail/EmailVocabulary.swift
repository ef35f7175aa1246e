import Foundation
import SesameCore

extension APIErrorCode {
    /// The `email` setting is `off`.
    package static let emailNotEnabled = APIErrorCode("email_not_enabled")
    /// Not an address mail can be sent to.
    package static let invalidEmail = APIErrorCode("invalid_email")
    /// The address given is the account's verified one already.
    package static let emailUnchanged = APIErrorCode("email_unchanged")
    /// The `email` setting is `required`: the verified address can be changed, not removed, and a sign-up must
    /// give one.
    package static let emailRequired = APIErrorCode("email_required")
    /// A verification code or link that is wrong, expired, used, replaced by a later one, or for an address that
    /// cannot be verified: one answer for all of them, so none tells anything about another account.
    package static let invalidEmailCode = APIErrorCode("invalid_email_code")
    /// The `emailRecovery` setting is off.
    package static let emailRecoveryNotEnabled = APIErrorCode("email_recovery_not_enabled")
    /// A recovery code that is wrong, expired, used, or for no account: one answer for all of them.
    package static let invalidRecoveryCode = APIErrorCode("invalid_recovery_code")
    /// A recovery link that is wrong, expired, used, or whose account is disabled: one answer for all of them.
    package static let invalidRecoveryLink = APIErrorCode("invalid_recovery_link")
    /// A recovery link to mail for a person who has no verified address.
    package static let recoveryLinkNoAddress = APIErrorCode("recovery_link_no_address")
}

extension APIError {
    package static var emailNotEnabled: APIError {
        APIError(.notFound, .emailNotEnabled, "This server keeps no email addresses.")
    }
    package static var invalidEmailCode: APIError {
        APIError(.unauthorized, .invalidEmailCode, "The code or link is wrong, expired or was already used.")
    }
    package static var emailRecoveryNotEnabled: APIError {
        APIError(.notFound, .emailRecoveryNotEnabled, "This server does not recover accounts by email.")
    }
    package static var invalidRecoveryCode: APIError {
        APIError(.unauthorized, .invalidRecoveryCode, "The code is wrong, expired or was already used.")
    }
    package static var invalidRecoveryLink: APIError {
        APIError(
            .unauthorized, .invalidRecoveryLink,
            "This recovery link is wrong, expired or was already used. Ask your administrator for a new one.")
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
    /// A recovery code was asked for (success: mailed to the account's verified address; refused: no account with
    /// a verified address by that name or address, and nothing mailed).
    package static let emailRecoveryRequested = AuditKind("email_recovery.requested")
    /// A recovery code signed into a limited session (success), or was wrong (failure).
    package static let emailRecoverySignedIn = AuditKind("email_recovery.signed_in")
    /// An administrator (or an operator at the command line) made a recovery link for the account (detail: `mail`
    /// or `show`, the link's id and who made it).
    package static let recoveryLinkCreated = AuditKind("recovery_link.created")
    /// A recovery link signed into a limited session (success; detail: the link's id), or was wrong, expired or used
    /// (failure).
    package static let recoveryLinkUsed = AuditKind("recovery_link.used")
}

extension ChallengePurpose {
    /// A recovery code waiting to be typed, keyed by the SHA-256 of the token the request answered with.
    package static let emailRecovery = ChallengePurpose("email_recovery")
}

extension AccountNoticeKind {
    /// A recovery link an administrator made signed into the account (a limited session, to add a passkey).
    package static let recoveryLinkUsed = AccountNoticeKind(
        "recovery_link.used", titleKey: "mail.notice.recovery-link-used")
    /// A recovery code signed into the account (a limited session, to add a passkey).
    package static let emailRecovered = AccountNoticeKind(
        "email_recovery.used", titleKey: "mail.notice.email-recovered")
}

extension GuessableSecret {
    /// Verification codes typed on the account page: per account and per client address.
    package static let emailCode = GuessableSecret("email_code")
    /// Verification mails written: per account, per client address and per address mailed (never given back).
    package static let emailSend = GuessableSecret("email_send")
    /// Recovery codes typed: per account and per client address.
    package static let emailRecoveryCode = GuessableSecret("email_recovery_code")
    /// Recovery codes asked for: per account (or name asked for) and per client address.
    package static let emailRecoverySend = GuessableSecret("email_recovery_send")
    /// Recovery links opened: per link (its public id) and per client address.
    package static let recoveryLink = GuessableSecret("recovery_link")
}

extension Vocabulary {
    /// The words `SesameEmail` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let email = Vocabulary(
        owner: "SesameEmail",
        errorCodes: [
            .emailNotEnabled, .invalidEmail, .emailUnchanged, .emailRequired, .invalidEmailCode,
            .emailRecoveryNotEnabled, .invalidRecoveryCode, .invalidRecoveryLink, .recoveryLinkNoAddress,
        ],
        auditKinds: [
            .emailAdded, .emailVerified, .emailChanged, .emailRemoved, .mailQueued, .emailRecoveryRequested,
            .emailRecoverySignedIn, .recoveryLinkCreated, .recoveryLinkUsed,
        ],
        settings: ServerConfiguration.emailSettings,
        checks: [ConfigurationCheck { c throws(ConfigurationError) in try ServerConfiguration.validateEmail(c) }],
        challengePurposes: [.emailRecovery],
        guessableSecrets: [.emailCode, .emailSend, .emailRecoveryCode, .emailRecoverySend, .recoveryLink],
        accountNotices: [.emailRecovered, .recoveryLinkUsed]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let email = APIFragment(owner: "SesameEmail", bundle: .module)
}
