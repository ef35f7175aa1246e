import Foundation
import SesameCore

extension OAuthErrorCode {
    package static let invalidRequest = OAuthErrorCode("invalid_request")
    package static let invalidClient = OAuthErrorCode("invalid_client")
    package static let invalidGrant = OAuthErrorCode("invalid_grant")
    package static let unauthorizedClient = OAuthErrorCode("unauthorized_client")
    package static let unsupportedGrantType = OAuthErrorCode("unsupported_grant_type")
    package static let unsupportedResponseType = OAuthErrorCode("unsupported_response_type")
    package static let invalidScope = OAuthErrorCode("invalid_scope")
    package static let accessDenied = OAuthErrorCode("access_denied")
    package static let invalidToken = OAuthErrorCode("invalid_token")
    package static let loginRequired = OAuthErrorCode("login_required")
    package static let consentRequired = OAuthErrorCode("consent_required")
    package static let interactionRequired = OAuthErrorCode("interaction_required")
    package static let requestNotSupported = OAuthErrorCode("request_not_supported")
    package static let requestURINotSupported = OAuthErrorCode("request_uri_not_supported")
    package static let serverError = OAuthErrorCode("server_error")
    /// RFC 8628 §3.5: the person has not answered yet; poll again after the interval.
    package static let authorizationPending = OAuthErrorCode("authorization_pending")
    /// RFC 8628 §3.5: polled too soon; the interval grew by 5 seconds.
    package static let slowDown = OAuthErrorCode("slow_down")
    /// RFC 8628 §3.5: the device code expired; start again.
    package static let expiredToken = OAuthErrorCode("expired_token")
}

extension APIErrorCode {
    /// The admin API refused an application's registration or change (the message says which rule).
    package static let invalidApp = APIErrorCode("invalid_app")
    package static let appNotFound = APIErrorCode("app_not_found")
}

extension OAuthError {
    package static func invalidClient(basic: Bool) -> OAuthError {
        OAuthError(
            .invalidClient, "Client authentication failed.", status: .unauthorized,
            challenge: basic ? #"Basic realm="sesame""# : nil)
    }

    package static var invalidGrant: OAuthError {
        OAuthError(
            .invalidGrant, "The code or refresh token is invalid, expired, spent or for another client.")
    }

    package static func invalidToken(_ why: String = "The access token is invalid or expired.") -> OAuthError {
        OAuthError(.invalidToken, why, status: .unauthorized, challenge: #"Bearer error="invalid_token""#)
    }
}

extension AuditKind {
    package static let clientAdded = AuditKind("client.added")
    package static let clientRemoved = AuditKind("client.removed")
    package static let clientUpdated = AuditKind("client.updated")
    package static let clientSecretRotated = AuditKind("client.secret_rotated")
    package static let signingKeysRotated = AuditKind("signing_keys.rotated")
    package static let appConsented = AuditKind("app.consented")
    package static let appAuthorized = AuditKind("app.authorized")
    package static let appAccessRevoked = AuditKind("app.access_revoked")
    package static let codeReplayed = AuditKind("app.code_replayed")
    package static let refreshTokenReused = AuditKind("app.refresh_token_reused")
    /// A person outside a client's allowed groups was refused: at authorization, the device page, a token exchange or
    /// refresh (detail: the client id).
    package static let appAccessDenied = AuditKind("app.access_denied")
}

extension GuessableSecret {
    /// A device's user code typed on the `/device` page (RFC 8628 §5.1: user codes are guessable).
    package static let deviceCode = GuessableSecret("device_code")
}

extension Vocabulary {
    /// The words `SesameIdentityProvider` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let identityProvider = Vocabulary(
        owner: "SesameIdentityProvider",
        errorCodes: [.invalidApp, .appNotFound],
        oauthErrorCodes: [
            .invalidRequest, .invalidClient, .invalidGrant, .unauthorizedClient, .unsupportedGrantType,
            .unsupportedResponseType, .invalidScope, .accessDenied, .invalidToken, .loginRequired, .consentRequired,
            .interactionRequired, .requestNotSupported, .requestURINotSupported, .serverError, .authorizationPending,
            .slowDown, .expiredToken,
        ],
        auditKinds: [
            .clientAdded, .clientRemoved, .clientUpdated, .clientSecretRotated, .signingKeysRotated, .appConsented,
            .appAuthorized, .appAccessRevoked, .codeReplayed, .refreshTokenReused, .appAccessDenied,
        ],
        guessableSecrets: [.deviceCode]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let identityProvider = APIFragment(owner: "SesameIdentityProvider", bundle: .module)
}
