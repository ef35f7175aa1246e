import Foundation
import Hummingbird
import NIOCore

/// The code of a server error: opaque and extensible (a struct with a raw value, new codes are `static let`s in
/// an extension, declared by the target that throws them), compared by value.
public protocol ServerErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The error's text for logs and operators from its fixed message; the message alone unless a domain adds the
    /// code (`[newerSchema]`).
    static func describe(_ message: String, code: Self) -> String
}

extension ServerErrorCode {
    public static func describe(_ message: String, code: Self) -> String { message }
}

/// A code whose errors answer an HTTP request, and how: the body's fields and the headers of its rendering.
public protocol HTTPRenderedErrorCode: ServerErrorCode {
    /// The JSON object of the answer's body.
    static func body(of error: ServerError<Self>) -> [String: String]
    /// Headers every answer of this rendering carries besides the common ones.
    static var renderingHeaders: HTTPFields { get }
}

/// The server's one error shape, as each library has one (`WebAuthnError`, `CBORError`): an opaque, extensible
/// `code` (equality and hashing look at the code only), a fixed `message` that never contains a secret, challenge,
/// code, token, key or echoed input, the `file` and `line` that made it, and how it answers over HTTP.
///
/// Each domain is one `Code` type: `APIError` (`ServerError<APIErrorCode>`, rendered `{"error", "message"}`),
/// `OAuthError` (`ServerError<OAuthErrorCode>`, rendered `{"error", "error_description"}`, RFC 6749 §5.2) are the
/// two HTTP renderings of the same shape; domains that never reach HTTP (`BackupError`, `DatabaseError`,
/// `AdminError`, …) use the same struct and answer 500 if one ever escapes to the error middleware.
public struct ServerError<Code: ServerErrorCode>: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Code
    /// Fixed text, safe to show and log.
    public let message: String
    public let file: String
    public let line: Int
    /// The answer's status when the error reaches HTTP.
    public var status: HTTPResponse.Status
    /// `Retry-After` (seconds).
    public var retryAfter: Int?
    /// The `Allow` header of a 405 answer.
    public var allow: String?
    /// The `WWW-Authenticate` header of a 401 answer (a bearer or Basic challenge).
    public var wwwAuthenticate: String?
    /// More fields for the page, e.g. `credentialId` and `rpId` of an unknown credential (never secrets).
    public var extra: [String: String] = [:]

    public init(
        code: Code, message: String, status: HTTPResponse.Status = .internalServerError,
        file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.status = status
        self.file = file
        self.line = line
    }

    public static func == (lhs: ServerError, rhs: ServerError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { Code.describe(message, code: code) }
}

extension ServerError: HTTPResponseError where Code: HTTPRenderedErrorCode {}

extension ServerError: ResponseGenerator where Code: HTTPRenderedErrorCode {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        headers.append(contentsOf: Code.renderingHeaders)
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let allow { headers[.allow] = allow }
        if let wwwAuthenticate { headers[.wwwAuthenticate] = wwwAuthenticate }
        // Sorted keys: the same error is the same bytes every time (a dictionary's order varies per process).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = try encoder.encode(Code.body(of: self))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension ServerError {
    /// Lets `catch StoreError.conflict` (or any code's error value) match an error of this domain by its code, as a
    /// `catch` of an enum case would.
    public static func ~= (pattern: ServerError, value: any Error) -> Bool {
        (value as? ServerError)?.code == pattern.code
    }
}
