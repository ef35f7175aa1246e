import Foundation
import SesameCore

extension APIErrorCode {
    package static let secondFactorRequired = APIErrorCode("second_factor_required")
    package static let noPasskey = APIErrorCode("no_passkey")
    package static let noPassword = APIErrorCode("no_password")
}

extension AuditKind {
    package static let sessionReauthenticated = AuditKind("session.reauthenticated")
}

extension ChallengePurpose {
    /// Re-authenticating a session with a passkey, bound to the session.
    package static let reauthentication = ChallengePurpose("reauthentication")
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
        ],
        challengePurposes: [.reauthentication]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let reauthentication = APIFragment(owner: "SesameReauthentication", bundle: .module)
}
