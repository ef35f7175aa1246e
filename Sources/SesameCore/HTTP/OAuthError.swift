import HTTPTypes
import Hummingbird

/// An error answer of the token, UserInfo, revocation and introspection endpoints: `{"error", "error_description"}`
/// (RFC 6749 §5.2) with `Cache-Control: no-store` and `Pragma: no-cache`; `invalid_client` is 401 with a
/// `WWW-Authenticate` challenge when the client tried HTTP Basic, `invalid_token` is 401 with a Bearer challenge
/// (RFC 6750 §3). The same shape as `APIError` (`ServerError`), rendered OAuth's way; the identity provider
/// declares the codes and the common answers (`OAuthError.invalidGrant`) in its target.
public typealias OAuthError = ServerError<OAuthErrorCode>

extension OAuthErrorCode: HTTPRenderedErrorCode {
    public static func body(of error: OAuthError) -> [String: String] {
        ["error": error.code.rawValue, "error_description": error.message]
    }

    public static var renderingHeaders: HTTPFields { [HTTPField.Name("Pragma")!: "no-cache"] }
}

extension ServerError where Code == OAuthErrorCode {
    package init(
        _ code: OAuthErrorCode, _ description: String, status: HTTPResponse.Status = .badRequest,
        challenge: String? = nil, file: String = #fileID, line: Int = #line
    ) {
        self.init(code: code, message: description, status: status, file: file, line: line)
        self.wwwAuthenticate = challenge
    }
}
