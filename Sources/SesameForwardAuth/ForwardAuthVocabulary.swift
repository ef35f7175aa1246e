import Foundation
import SesameCore

extension APIErrorCode {
    package static let hostNotAllowed = APIErrorCode("host_not_allowed")
    /// The admin API's rule test was given a URL it cannot read or a username no account has.
    package static let invalidForwardAuthTest = APIErrorCode("invalid_forward_auth_test")
}

extension APIError {
    package static var hostNotAllowed: APIError {
        APIError(
            .forbidden, .hostNotAllowed, "Sesame does not sign people in to that address (see forward-auth-domains).")
    }
}

extension AuditKind {
    package static let forwardAuthSignedIn = AuditKind("forward_auth.signed_in")
}

extension ChallengePurpose {
    /// Forward auth's one-time code for an app on another domain, bound to the app's origin; keyed by the code's hash.
    package static let forwardAuthCode = ChallengePurpose("forward_auth_code")
}

extension Vocabulary {
    /// The words `SesameForwardAuth` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let forwardAuth = Vocabulary(
        owner: "SesameForwardAuth",
        errorCodes: [
            .hostNotAllowed, .invalidForwardAuthTest,
        ],
        auditKinds: [
            .forwardAuthSignedIn
        ],
        settings: ServerConfiguration.forwardAuthSettings,
        checks: [ConfigurationCheck { c throws(ConfigurationError) in try ServerConfiguration.validateForwardAuth(c) }],
        challengePurposes: [.forwardAuthCode]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let forwardAuth = APIFragment(owner: "SesameForwardAuth", bundle: .module)
}
