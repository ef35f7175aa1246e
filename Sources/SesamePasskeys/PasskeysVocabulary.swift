import Foundation
import SesameCore

extension APIErrorCode {
    package static let invalidUsername = APIErrorCode("invalid_username")
    package static let invalidDisplayName = APIErrorCode("invalid_display_name")
    package static let invalidName = APIErrorCode("invalid_name")
    package static let invalidKind = APIErrorCode("invalid_kind")
    package static let invalidMediation = APIErrorCode("invalid_mediation")
    package static let invalidTheme = APIErrorCode("invalid_theme")
    package static let invalidCredentialID = APIErrorCode("invalid_credential_id")
    package static let registrationFailed = APIErrorCode("registration_failed")
    package static let authenticationFailed = APIErrorCode("authentication_failed")
    package static let unknownCredential = APIErrorCode("unknown_credential")
    package static let usernameTaken = APIErrorCode("username_taken")
    package static let credentialExists = APIErrorCode("credential_exists")
    package static let signUpClosed = APIErrorCode("sign_up_closed")
    package static let invitationRequired = APIErrorCode("invitation_required")
}

extension APIError {
    package static var usernameTaken: APIError { APIError(.conflict, .usernameTaken, "That username is taken.") }
    package static var credentialExists: APIError {
        APIError(.conflict, .credentialExists, "This passkey is already registered.")
    }
    package static var signUpClosed: APIError {
        APIError(.forbidden, .signUpClosed, "Sign-up is closed on this site: ask its operator for an account.")
    }
    package static var invitationRequired: APIError {
        APIError(
            .forbidden, .invitationRequired, "Sign-up on this site needs an invitation: open the link you were sent.")
    }
}

extension AuditKind {
    package static let signUpPasskey = AuditKind("sign_up.passkey")
    package static let signInPasskey = AuditKind("sign_in.passkey")
    package static let passkeyRegistration = AuditKind("passkey.registration")
    package static let passkeyAdded = AuditKind("passkey.added")
    package static let passkeyRenamed = AuditKind("passkey.renamed")
    package static let passkeyRemoved = AuditKind("passkey.removed")
}

extension ChallengePurpose {
    /// Passkey sign-up (WebAuthn registration), bound to the ceremony token.
    package static let registration = ChallengePurpose("registration")
    /// Passkey sign-in (WebAuthn authentication), bound to the ceremony token.
    package static let authentication = ChallengePurpose("authentication")
    /// Adding a passkey to a signed-in account, bound to the session.
    package static let addPasskey = ChallengePurpose("add_passkey")
}

extension AccountNoticeKind {
    /// A passkey or security key was added to a signed-in account (not at sign-up: no address is verified yet).
    package static let passkeyAdded = AccountNoticeKind("passkey.added", titleKey: "mail.notice.passkey-added")
    /// A passkey or security key was removed.
    package static let passkeyRemoved = AccountNoticeKind(
        "passkey.removed", titleKey: "mail.notice.passkey-removed")
}

extension Vocabulary {
    /// The words `SesamePasskeys` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let passkeys = Vocabulary(
        owner: "SesamePasskeys",
        errorCodes: [
            .invalidUsername, .invalidDisplayName, .invalidName, .invalidKind, .invalidMediation, .invalidTheme,
            .invalidCredentialID, .registrationFailed, .authenticationFailed, .unknownCredential, .usernameTaken,
            .credentialExists, .signUpClosed, .invitationRequired,
        ],
        auditKinds: [
            .signUpPasskey, .signInPasskey, .passkeyRegistration, .passkeyAdded, .passkeyRenamed, .passkeyRemoved,
        ],
        settings: ServerConfiguration.passkeysSettings,
        challengePurposes: [.registration, .authentication, .addPasskey],
        accountNotices: [.passkeyAdded, .passkeyRemoved]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let passkeys = APIFragment(owner: "SesamePasskeys", bundle: .module)
}
