import Foundation
import Hummingbird
import NIOCore

/// Per-request state: the client address (for rate limits and audit) and, once the session middleware ran,
/// who is signed in and how.
public struct SesameRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address, or `unknown` (in-process tests have no socket).
    public let peerAddress: String
    /// Set by `SessionMiddleware`.
    var authentication: Authentication?
    /// A session cookie came with an unsafe request but without the right CSRF token.
    var csrfFailed = false
    /// Client address after the `X-Forwarded-For` policy; set by `SessionMiddleware`.
    var clientAddress: String

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        self.clientAddress = self.peerAddress
        self.authentication = nil
    }

    /// Request bodies are read by `JSONBody` with its own smaller limit.
    public var maxUploadSize: Int { JSONBody.maxBytes }
}

/// A signed-in request.
struct Authentication: Sendable {
    enum Carrier: Sendable { case cookie, bearer }
    let session: SessionRecord
    let tokenHash: [UInt8]
    let user: User
    let carrier: Carrier
}

extension SesameRequestContext {
    /// The signed-in user, or 401.
    func requireAuthentication() throws -> Authentication {
        guard let authentication else { throw csrfFailed ? APIError.csrf : APIError.unauthenticated }
        return authentication
    }

    /// The signed-in user, if the session's holder signed in or re-authenticated within the configured window;
    /// else 403 `reauthentication_required` (which names the endpoints to re-authenticate with).
    func requireRecentAuthentication(_ sesame: Sesame) throws -> Authentication {
        let authentication = try requireAuthentication()
        let window = TimeInterval(sesame.configuration.reauthenticationWindow)
        guard sesame.now.timeIntervalSince(authentication.session.authenticatedAt) <= window else {
            throw APIError.reauthenticationRequired(window: sesame.configuration.reauthenticationWindow)
        }
        return authentication
    }
}

/// Reading JSON request bodies: content type must be JSON, size is bounded, decoding errors are 400.
enum JSONBody {
    static let maxBytes = 64 * 1024

    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: SesameRequestContext) async throws -> T {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" else { throw APIError.unsupportedMediaType }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBytes { throw APIError.bodyTooLarge }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.bodyTooLarge
        } catch {
            throw APIError.malformedJSON
        }
        return try decode(T.self, bytes: buffer)
    }

    /// For endpoints whose body is optional: no body (or an empty one, whatever its content type) is nil; anything
    /// else must be JSON of the expected shape, as for `decode`.
    static func decodeIfPresent<T: Decodable>(_ type: T.Type, from request: Request, context: SesameRequestContext) async throws -> T? {
        if let length = request.headers[.contentLength].flatMap(Int.init) {
            if length == 0 { return nil }
            if length > maxBytes { throw APIError.bodyTooLarge }
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.bodyTooLarge
        } catch {
            throw APIError.malformedJSON
        }
        if buffer.readableBytes == 0 { return nil }
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" else { throw APIError.unsupportedMediaType }
        return try decode(T.self, bytes: buffer)
    }

    private static func decode<T: Decodable>(_ type: T.Type, bytes buffer: ByteBuffer) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError(.badRequest, "malformed_json", "Missing field \"\(key.stringValue.prefix(40))\".")
        } catch let DecodingError.typeMismatch(_, context) {
            throw APIError(.badRequest, "malformed_json", "Field \"\(Self.path(context.codingPath))\" has the wrong type.")
        } catch let DecodingError.valueNotFound(_, context) {
            throw APIError(.badRequest, "malformed_json", "Field \"\(Self.path(context.codingPath))\" is null.")
        } catch {
            throw APIError.malformedJSON
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        String(codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".").prefix(80))
    }
}

/// A JSON answer with `Cache-Control: no-store`.
struct JSONResponse<Value: Encodable & Sendable>: ResponseGenerator {
    var status: HTTPResponse.Status = .ok
    var value: Value
    var headers: HTTPFields = [:]

    init(_ value: Value, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) {
        self.value = value
        self.status = status
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
