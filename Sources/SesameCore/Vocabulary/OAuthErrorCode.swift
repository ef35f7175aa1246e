/// Error codes of the OpenID Connect provider's endpoints, as OAuth 2.0 and OpenID Connect name them
/// (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1; OpenID Connect Core 1.0 §3.1.2.6; RFC 8628 §3.5). They travel in
/// `error` of a redirect or of a JSON body `{"error", "error_description"}`, never in `APIErrorCode`'s shape.
public enum OAuthErrorCode: String, CaseIterable, Sendable {
    case invalidRequest = "invalid_request"
    case invalidClient = "invalid_client"
    case invalidGrant = "invalid_grant"
    case unauthorizedClient = "unauthorized_client"
    case unsupportedGrantType = "unsupported_grant_type"
    case unsupportedResponseType = "unsupported_response_type"
    case invalidScope = "invalid_scope"
    case accessDenied = "access_denied"
    case invalidToken = "invalid_token"
    case loginRequired = "login_required"
    case consentRequired = "consent_required"
    case interactionRequired = "interaction_required"
    case requestNotSupported = "request_not_supported"
    case requestURINotSupported = "request_uri_not_supported"
    case serverError = "server_error"
    /// RFC 8628 §3.5: the person has not answered yet; poll again after the interval.
    case authorizationPending = "authorization_pending"
    /// RFC 8628 §3.5: polled too soon; the interval grew by 5 seconds.
    case slowDown = "slow_down"
    /// RFC 8628 §3.5: the device code expired; start again.
    case expiredToken = "expired_token"
}
