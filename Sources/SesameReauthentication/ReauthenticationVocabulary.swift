import SesameCore

extension APIErrorCode {
    package static let secondFactorRequired = APIErrorCode("second_factor_required")
    package static let noPasskey = APIErrorCode("no_passkey")
    package static let noPassword = APIErrorCode("no_password")
}

extension AuditKind {
    package static let sessionReauthenticated = AuditKind("session.reauthenticated")
}

extension Vocabulary {
    /// The words `SesameReauthentication` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let reauthentication = Vocabulary(
        owner: "SesameReauthentication",
        errorCodes: [
            .secondFactorRequired, .noPasskey, .noPassword,
        ],
        auditKinds: [
            .sessionReauthenticated
        ]
    )
}
