import SesameCore

/// What the identity provider refused inside itself, before an answer is chosen: a token none of its keys signed, a
/// client's key set, a sign-out link, an app's back-channel logout endpoint. The server's error shape
/// (`ServerError`); callers turn each into their own answer (an `OAuthError`, the sign-out page's sentence, an
/// operator's message), and no message quotes a token or a key.
package typealias IdentityProviderError = ServerError<IdentityProviderErrorCode>

/// The codes of `IdentityProviderError`.
package struct IdentityProviderErrorCode: ServerErrorCode {
    package let name: String
    private init(_ name: String) { self.name = name }
    package var description: String { name }

    /// A token that is not one of these keys signed, or not readable as the claims asked for (`TokenKeys`).
    package static let tokenRefused = IdentityProviderErrorCode("tokenRefused")
    /// A client's JWK set that cannot be its `private_key_jwt` keys (`ClientPublicKey.parse`).
    package static let clientKeysRefused = IdentityProviderErrorCode("clientKeysRefused")
    /// A sign-out link (RP-initiated logout) Sesame will not follow; `extra["key"]` names the page's sentence in the
    /// catalog (`LogoutRoutes.refusal`), the message says it for the log.
    package static let logoutRefused = IdentityProviderErrorCode("logoutRefused")
    /// An app's back-channel logout endpoint did not accept the logout token (`extra["status"]`, 0 for no answer).
    package static let logoutDeliveryRefused = IdentityProviderErrorCode("logoutDeliveryRefused")
}

extension ServerError where Code == IdentityProviderErrorCode {
    /// `tokenRefused`: one fixed sentence, whatever the reason (jwt-kit's reasons may quote the token).
    package static func tokenRefused(file: String = #fileID, line: Int = #line) -> IdentityProviderError {
        IdentityProviderError(code: .tokenRefused, message: "the token is refused", file: file, line: line)
    }

    /// `logoutDeliveryRefused` with the endpoint's HTTP status.
    package static func logoutDeliveryRefused(status: Int, file: String = #fileID, line: Int = #line)
        -> IdentityProviderError
    {
        var error = IdentityProviderError(
            code: .logoutDeliveryRefused, message: "the back-channel logout endpoint answered \(status)", file: file,
            line: line)
        error.extra = ["status": String(status)]
        return error
    }
}
