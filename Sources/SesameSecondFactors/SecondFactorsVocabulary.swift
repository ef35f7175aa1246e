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
        ]
    )
}
