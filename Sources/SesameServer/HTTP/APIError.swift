import Foundation
import Hummingbird
import NIOCore

/// The API's error answer: `{"error": "<code>", "message": "<human text>"}` with a status, plus headers such as
/// `Retry-After`. Messages are fixed text: never a secret, challenge, code, token or echoed input.
public struct APIError: HTTPResponseError, Equatable {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    public var retryAfter: Int?
    /// The `Allow` header of a 405 answer.
    public var allow: String?
    /// The `WWW-Authenticate` header of a 401 answer that wants a bearer token.
    public var wwwAuthenticate: String?
    /// More fields for the page, e.g. `credentialId` and `rpId` of an unknown credential (never secrets).
    public var extra: [String: String] = [:]

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let allow { headers[.allow] = allow }
        if let wwwAuthenticate { headers[.wwwAuthenticate] = wwwAuthenticate }
        // Sorted keys: the same error is the same bytes every time (a dictionary's order varies per process).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = try encoder.encode(extra.merging(["error": code, "message": message]) { _, fixed in fixed })
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    // Bad input
    static let malformedJSON = APIError(.badRequest, "malformed_json", "The request body is not the JSON this endpoint expects.")
    static let unsupportedMediaType = APIError(.unsupportedMediaType, "unsupported_media_type", "Send the body as application/json.")
    static let bodyTooLarge = APIError(.contentTooLarge, "body_too_large", "The request body is too large.")
    static func invalidField(_ field: String, _ why: String) -> APIError {
        APIError(.badRequest, "invalid_\(field)", why)
    }

    // Authentication and authorisation
    static let unauthenticated = APIError(.unauthorized, "unauthenticated", "Sign in first.")
    static let csrf = APIError(.forbidden, "csrf_check_failed", "Missing or wrong X-CSRF-Token header for a cookie-authenticated request.")
    static let originNotAllowed = APIError(.forbidden, "origin_not_allowed", "The request's Origin is not one this server serves.")
    static let invalidCredentials = APIError(.unauthorized, "invalid_credentials", "The username or password is wrong.")
    static let accountDisabled = APIError(.forbidden, "account_disabled", "This account is disabled.")
    static let notFound = APIError(.notFound, "not_found", "No such resource.")
    static func methodNotAllowed(allow: String) -> APIError {
        var error = APIError(.methodNotAllowed, "method_not_allowed", "This method is not allowed here; the Allow header lists those that are.")
        error.allow = allow
        return error
    }
    static let challengeInvalid = APIError(
        .badRequest, "challenge_invalid", "The challenge is unknown, expired, already used or was issued to someone else. Start again."
    )
    static let invalidCode = APIError(.unauthorized, "invalid_code", "The code is wrong or was already used.")
    /// A sensitive change needs a recent sign-in: the page re-authenticates (passkey, or password and second
    /// factor) at `reauthenticate`, then retries.
    static func reauthenticationRequired(window: Int) -> APIError {
        var error = APIError(
            .forbidden, "reauthentication_required", "Confirm it is you (passkey, or password and second factor) and try again."
        )
        error.extra = [
            "reauthenticate": "/api/session/reauthenticate", "reauthenticateOptions": "/api/session/reauthenticate/options",
            "maxAgeSeconds": String(window),
        ]
        return error
    }
    static let lastWayIn = APIError(.conflict, "last_way_in", "This is the account's last way to sign in; add another first.")

    static func tooManyAttempts(retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, "too_many_attempts", "Too many failed attempts. Try again later.", retryAfter: max(1, retryAfter))
    }

    static let internalError = APIError(.internalServerError, "internal_error", "Something went wrong on the server.")
    static let unavailable = APIError(.serviceUnavailable, "unavailable", "The database is not reachable.")
}
