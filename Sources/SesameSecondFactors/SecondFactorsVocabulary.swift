import Foundation
import SesameCore

extension APIErrorCode {
    package static let invalidPhone = APIErrorCode("invalid_phone")
    package static let invalidFactor = APIErrorCode("invalid_factor")
    package static let invalidCode = APIErrorCode("invalid_code")
    package static let factorNotEnabled = APIErrorCode("factor_not_enabled")
    package static let smsNotEnabled = APIErrorCode("sms_not_enabled")
    package static let smsNotSent = APIErrorCode("sms_not_sent")
    package static let totpAlreadyEnabled = APIErrorCode("totp_already_enabled")
    package static let noPendingTOTP = APIErrorCode("no_pending_totp")
}

extension APIError {
    package static var invalidCode: APIError {
        APIError(.unauthorized, .invalidCode, "The code is wrong or was already used.")
    }
    package static var factorNotEnabled: APIError {
        APIError(
            .conflict, .factorNotEnabled, "This account has not set up that factor.")
    }
    package static var smsNotEnabled: APIError {
        APIError(
            .conflict, .smsNotEnabled, "This account has no confirmed phone number.")
    }
}

extension AuditKind {
    package static let signInSecondFactor = AuditKind("sign_in.second_factor")
    package static let totpEnabled = AuditKind("totp.enabled")
    package static let totpDisabled = AuditKind("totp.disabled")
    package static let smsChangeStarted = AuditKind("sms.change_started")
    package static let smsCodeSent = AuditKind("sms.code_sent")
    package static let smsEnabled = AuditKind("sms.enabled")
    package static let smsDisabled = AuditKind("sms.disabled")
    package static let recoveryCodesGenerated = AuditKind("recovery_codes.generated")
    package static let recoveryCodeUsed = AuditKind("recovery_code.used")
}

extension ChallengePurpose {
    /// A password sign-in waiting for its second factor; keyed by the pending token's hash.
    package static let pendingSecondFactor = ChallengePurpose("second_factor")
    /// An SMS code for a pending password sign-in.
    package static let smsSignIn = ChallengePurpose("sms_sign_in")
    /// An SMS code for re-authenticating a session.
    package static let smsReauthentication = ChallengePurpose("sms_reauthentication")
    /// A phone-number change waiting for the code sent to the new number.
    package static let phoneChange = ChallengePurpose("sms_setup")
}

extension Factor {
    /// A code from an authenticator app (RFC 6238).
    package static let totp = Factor("totp", makesASecondStep: true, amr: "otp")
    /// A code sent by SMS to the account's confirmed phone.
    package static let sms = Factor("sms", makesASecondStep: true, amr: "sms")
    /// One of the account's recovery codes: it stands in for the others, so it makes no second step of its own.
    package static let recovery = Factor("recovery", makesASecondStep: false, amr: "otp")
    /// The factors this target checks, in the order pages offer them.
    package static let secondFactors: [Factor] = [.totp, .sms, .recovery]
}

extension GuessableSecret {
    package static let totp = GuessableSecret(Factor.totp)
    package static let sms = GuessableSecret(Factor.sms)
    package static let recovery = GuessableSecret(Factor.recovery)
    /// Sending an SMS code (every send counts; sends are never given back).
    package static let smsSend = GuessableSecret("sms_send")
}

extension AccountNoticeKind {
    /// An authenticator app was set up (its first code confirmed).
    package static let totpEnabled = AccountNoticeKind(
        "totp.enabled", titleKey: "mail.notice.totp-enabled")
    package static let totpDisabled = AccountNoticeKind(
        "totp.disabled", titleKey: "mail.notice.totp-disabled")
    /// A phone number for sign-in codes was confirmed (a first one, or a new one in place of the old).
    package static let smsEnabled = AccountNoticeKind(
        "sms.enabled", titleKey: "mail.notice.sms-enabled")
    package static let smsDisabled = AccountNoticeKind(
        "sms.disabled", titleKey: "mail.notice.sms-disabled")
    /// Recovery codes were made, replacing any earlier set.
    package static let recoveryCodesGenerated = AccountNoticeKind(
        "recovery_codes.generated", titleKey: "mail.notice.recovery-codes-generated")
    /// A recovery code was spent, at sign-in or to confirm a sign-in again.
    package static let recoveryCodeUsed = AccountNoticeKind(
        "recovery_code.used", titleKey: "mail.notice.recovery-code-used")
}

extension Vocabulary {
    /// The words `SesameSecondFactors` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let secondFactors = Vocabulary(
        owner: "SesameSecondFactors",
        errorCodes: [
            .invalidPhone, .invalidFactor, .invalidCode, .factorNotEnabled, .smsNotEnabled, .smsNotSent,
            .totpAlreadyEnabled, .noPendingTOTP,
        ],
        auditKinds: [
            .signInSecondFactor, .totpEnabled, .totpDisabled, .smsChangeStarted, .smsCodeSent, .smsEnabled,
            .smsDisabled, .recoveryCodesGenerated, .recoveryCodeUsed,
        ],
        settings: ServerConfiguration.secondFactorsSettings,
        checks: [
            ConfigurationCheck { c throws(ConfigurationError) in try ServerConfiguration.validateSecondFactors(c) }
        ],
        challengePurposes: [.pendingSecondFactor, .smsSignIn, .smsReauthentication, .phoneChange],
        guessableSecrets: [.totp, .sms, .recovery, .smsSend],
        accountNotices: [
            .totpEnabled, .totpDisabled, .smsEnabled, .smsDisabled, .recoveryCodesGenerated, .recoveryCodeUsed,
        ],
        factors: Factor.secondFactors
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let secondFactors = APIFragment(owner: "SesameSecondFactors", bundle: .module)
}
