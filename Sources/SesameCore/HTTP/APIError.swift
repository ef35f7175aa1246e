import Foundation
import Hummingbird
import NIOCore

/// The API's error answer: `{"error": "<code>", "message": "<human text>"}` with a status, plus headers such as
/// `Retry-After`. The code is an ``APIErrorCode``; the answers of one feature are declared in its target; messages are fixed text: never a secret, challenge, code, token or
/// echoed input.
public struct APIError: HTTPResponseError, Equatable {
    public let status: HTTPResponse.Status
    public let code: APIErrorCode
    public let message: String
    public var retryAfter: Int?
    /// The `Allow` header of a 405 answer.
    public var allow: String?
    /// The `WWW-Authenticate` header of a 401 answer that wants a bearer token.
    public var wwwAuthenticate: String?
    /// More fields for the page, e.g. `credentialId` and `rpId` of an unknown credential (never secrets).
    public var extra: [String: String] = [:]

    public init(_ status: HTTPResponse.Status, _ code: APIErrorCode, _ message: String, retryAfter: Int? = nil) {
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
        let body = try encoder.encode(
            extra.merging(["error": code.rawValue, "message": message]) { _, fixed in fixed })
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    // The request itself
    package static let malformedJSON = APIError(
        .badRequest, .malformedJSON, "The request body is not the JSON this endpoint expects.")
    package static let unsupportedMediaType = APIError(
        .unsupportedMediaType, .unsupportedMediaType, "Send the body as application/json.")
    package static let bodyTooLarge = APIError(.contentTooLarge, .bodyTooLarge, "The request body is too large.")
    package static let badRequest = APIError(.badRequest, .badRequest, "The request is not acceptable.")
    package static let notFound = APIError(.notFound, .notFound, "No such resource.")
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
    package static let unauthenticated = APIError(.unauthorized, .unauthenticated, "Sign in first.")
    package static let csrf = APIError(
        .forbidden, .csrfCheckFailed, "Missing or wrong X-CSRF-Token header for a cookie-authenticated request.")
    package static let originNotAllowed = APIError(
        .forbidden, .originNotAllowed, "The request's Origin is not one this server serves.")
    package static let accountDisabled = APIError(.forbidden, .accountDisabled, "This account is disabled.")
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
    package static let challengeInvalid = APIError(
        .badRequest, .challengeInvalid,
        "The challenge is unknown, expired, already used or was issued to someone else. Start again."
    )
    package static let invalidClientData = APIError(
        .badRequest, .invalidClientData, "clientDataJSON is not valid client data.")

    // Ways in and second factors
    package static let lastWayIn = APIError(
        .conflict, .lastWayIn, "This is the account's last way to sign in; add another first.")

    // The server
    package static let internalError = APIError(
        .internalServerError, .internalError, "Something went wrong on the server.")
    package static let unavailable = APIError(
        .serviceUnavailable, .unavailable, "The database is not reachable. Try again shortly.")
    /// The database's disk is full: nothing can be saved, what is saved can still be read.
    package static let storageFull = APIError(
        .serviceUnavailable, .storageFull, "The server cannot save anything right now. Try again later.")
}
