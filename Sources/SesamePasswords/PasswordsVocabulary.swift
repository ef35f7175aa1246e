import Foundation
import SesameCore

extension APIErrorCode {
    package static let invalidPassword = APIErrorCode("invalid_password")
    package static let invalidCurrentPassword = APIErrorCode("invalid_current_password")
    package static let invalidCredentials = APIErrorCode("invalid_credentials")
    package static let wrongPassword = APIErrorCode("wrong_password")
}

extension APIError {
    package static var invalidCredentials: APIError {
        APIError(
            .unauthorized, .invalidCredentials, "The username or password is wrong.")
    }
    package static var wrongPassword: APIError { APIError(.forbidden, .wrongPassword, "The password is wrong.") }
}

extension AuditKind {
    package static let signInPassword = AuditKind("sign_in.password")
    package static let passwordSet = AuditKind("password.set")
    package static let passwordChanged = AuditKind("password.changed")
    package static let passwordRemoved = AuditKind("password.removed")
    package static let passwordRehashed = AuditKind("password.rehashed")
}

extension GuessableSecret {
    package static let password = GuessableSecret("password")
}

extension AccountNoticeKind {
    /// A password was set on an account that had none.
    package static let passwordSet = AccountNoticeKind("password.set", titleKey: "mail.notice.password-set")
    /// The password was changed.
    package static let passwordChanged = AccountNoticeKind(
        "password.changed", titleKey: "mail.notice.password-changed")
    /// The password was removed (the account signs in with passkeys only).
    package static let passwordRemoved = AccountNoticeKind(
        "password.removed", titleKey: "mail.notice.password-removed")
}

extension Vocabulary {
    /// The words `SesamePasswords` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let passwords = Vocabulary(
        owner: "SesamePasswords",
        errorCodes: [
            .invalidPassword, .invalidCurrentPassword, .invalidCredentials, .wrongPassword,
        ],
        auditKinds: [
            .signInPassword, .passwordSet, .passwordChanged, .passwordRemoved, .passwordRehashed,
        ],
        settings: ServerConfiguration.passwordsSettings,
        guessableSecrets: [.password],
        accountNotices: [.passwordSet, .passwordChanged, .passwordRemoved]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let passwords = APIFragment(owner: "SesamePasswords", bundle: .module)
}
