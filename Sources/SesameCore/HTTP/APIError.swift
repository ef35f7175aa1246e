import Foundation
import Hummingbird
import NIOCore

/// The API's error answer: `{"error": "<code>", "message": "<human text>"}` with a status, plus headers such as
/// `Retry-After`: one rendering of the server's one error shape (`ServerError`), the OAuth endpoints' being the
/// other (`OAuthError`). The code is an ``APIErrorCode``; the answers of one feature are declared in its target;
/// messages are fixed text: never a secret, challenge, code, token or echoed input.
public typealias APIError = ServerError<APIErrorCode>

extension APIErrorCode: HTTPRenderedErrorCode {
    public static func body(of error: APIError) -> [String: String] {
        error.extra.merging(["error": error.code.rawValue, "message": error.message]) { _, fixed in fixed }
    }

    public static var renderingHeaders: HTTPFields { [:] }
}

extension ServerError where Code == APIErrorCode {
    public init(
        _ status: HTTPResponse.Status, _ code: APIErrorCode, _ message: String, retryAfter: Int? = nil,
        file: String = #fileID, line: Int = #line
    ) {
        self.init(code: code, message: message, status: status, file: file, line: line)
        self.retryAfter = retryAfter
    }

    // The request itself
    package static var malformedJSON: APIError {
        APIError(
            .badRequest, .malformedJSON, "The request body is not the JSON this endpoint expects.")
    }
    package static var unsupportedMediaType: APIError {
        APIError(
            .unsupportedMediaType, .unsupportedMediaType, "Send the body as application/json.")
    }
    package static var bodyTooLarge: APIError {
        APIError(.contentTooLarge, .bodyTooLarge, "The request body is too large.")
    }
    package static var badRequest: APIError { APIError(.badRequest, .badRequest, "The request is not acceptable.") }
    package static var notFound: APIError { APIError(.notFound, .notFound, "No such resource.") }
    package static func methodNotAllowed(allow: String?) -> APIError {
        var error = APIError(
            .methodNotAllowed, .methodNotAllowed,
            "This method is not allowed here; the Allow header lists those that are.")
        error.allow = allow
        return error
    }
    /// A field whose value the endpoint does not accept; `code` is one of the `invalid_…` codes.
    package static func invalidField(_ code: APIErrorCode, _ why: String) -> APIError {
        APIError(.badRequest, code, why)
    }

    // Who is asking
    package static var unauthenticated: APIError { APIError(.unauthorized, .unauthenticated, "Sign in first.") }
    package static var csrf: APIError {
        APIError(
            .forbidden, .csrfCheckFailed, "Missing or wrong X-CSRF-Token header for a cookie-authenticated request.")
    }
    package static var originNotAllowed: APIError {
        APIError(
            .forbidden, .originNotAllowed, "The request's Origin is not one this server serves.")
    }
    package static var accountDisabled: APIError { APIError(.forbidden, .accountDisabled, "This account is disabled.") }
    /// A limited session (recovery by email) may only view the account and add a passkey or security key.
    package static var sessionLimited: APIError {
        APIError(
            .forbidden, .sessionLimited,
            "This session, from a code sent by email, can only add a passkey or security key. Add one, then sign in with it."
        )
    }
    /// A sensitive change needs a recent sign-in: the page re-authenticates (passkey, or password and second
    /// factor) at `reauthenticate`, then retries.
    package static func reauthenticationRequired(window: Int) -> APIError {
        var error = APIError(
            .forbidden, .reauthenticationRequired,
            "Confirm it is you (passkey, or password and second factor) and try again.")
        error.extra = [
            "reauthenticate": "/api/session/reauthenticate",
            "reauthenticateOptions": "/api/session/reauthenticate/options",
            "maxAgeSeconds": String(window),
        ]
        return error
    }
    package static func tooManyAttempts(retryAfter: Int) -> APIError {
        APIError(
            .tooManyRequests, .tooManyAttempts, "Too many failed attempts. Try again later.",
            retryAfter: max(1, retryAfter))
    }

    // Ceremonies
    package static var challengeInvalid: APIError {
        APIError(
            .badRequest, .challengeInvalid,
            "The challenge is unknown, expired, already used or was issued to someone else. Start again."
        )
    }
    package static var invalidClientData: APIError {
        APIError(
            .badRequest, .invalidClientData, "clientDataJSON is not valid client data.")
    }

    // Ways in and second factors
    package static var lastWayIn: APIError {
        APIError(
            .conflict, .lastWayIn, "This is the account's last way to sign in; add another first.")
    }

    // The server
    package static var internalError: APIError {
        APIError(
            .internalServerError, .internalError, "Something went wrong on the server.")
    }
    package static var unavailable: APIError {
        APIError(
            .serviceUnavailable, .unavailable, "The database is not reachable. Try again shortly.")
    }
    /// The database's disk is full: nothing can be saved, what is saved can still be read.
    package static var storageFull: APIError {
        APIError(
            .serviceUnavailable, .storageFull, "The server cannot save anything right now. Try again later.")
    }
}
