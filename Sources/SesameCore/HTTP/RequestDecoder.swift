import Foundation
import Hummingbird
import NIOCore
import WebAuthn

/// Reads JSON request bodies for `request.decode(as:context:)`: the content type must be JSON, the body at most
/// 64 KiB, UTF-8 (RFC 8259 §8.1), and decoding errors are 400 `malformed_json` naming the field (never its value).
public struct SesameRequestDecoder: RequestDecoder {

    package init() {

    }
    package static let maxBytes = 64 * 1024

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws
        -> T
    {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" else { throw APIError.unsupportedMediaType }
        return try Self.decode(T.self, bytes: try await Self.collect(request))
    }

    package static func collect(_ request: Request) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBytes {
            throw APIError.bodyTooLarge
        }
        do {
            return try await request.body.collect(upTo: maxBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.bodyTooLarge
        } catch {
            throw APIError.malformedJSON
        }
    }

    package static func decode<T: Decodable>(_ type: T.Type, bytes buffer: ByteBuffer) throws -> T {
        // The sign-in bodies have a fast path (`FastPathDecodable`); whatever it does not take, JSONDecoder judges.
        if let fast = T.self as? any FastPathDecodable.Type,
            let value = JSONReader.read(buffer.readableBytesView).flatMap(fast.init(fastPath:)) as? T
        {
            return value
        }
        // JSONDecoder lets invalid UTF-8 inside strings through (as U+FFFD): such a body is malformed, not a request
        // for a name nobody typed.
        guard String(validating: buffer.readableBytesView, as: UTF8.self) != nil else { throw APIError.malformedJSON }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError(.badRequest, .malformedJSON, "Missing field \"\(key.stringValue.prefix(40))\".")
        } catch let DecodingError.typeMismatch(_, context) {
            throw APIError(
                .badRequest, .malformedJSON, "Field \"\(Self.path(context.codingPath))\" has the wrong type.")
        } catch let DecodingError.valueNotFound(_, context) {
            throw APIError(.badRequest, .malformedJSON, "Field \"\(Self.path(context.codingPath))\" is null.")
        } catch {
            throw APIError.malformedJSON
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        String(codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".").prefix(80))
    }
}

extension Request {
    /// For endpoints whose body is optional: no body (or an empty one, whatever its content type) is nil; anything
    /// else must be JSON of the expected shape, as for `decode(as:context:)`.
    package func decodeIfPresent<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T? {
        if let length = headers[.contentLength].flatMap(Int.init), length == 0 { return nil }
        let buffer = try await SesameRequestDecoder.collect(self)
        if buffer.readableBytes == 0 { return nil }
        let contentType = headers[.contentType]?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" else { throw APIError.unsupportedMediaType }
        return try SesameRequestDecoder.decode(T.self, bytes: buffer)
    }
}

/// A request body that `JSONReader` can read without `JSONDecoder` when its shape is the common one (nil
/// otherwise, and JSONDecoder decodes it as any other body, with the same errors). For the bodies of every sign-in,
/// where the generic decoder cost more than the signature check (docs/server.md, "Benchmark").
package protocol FastPathDecodable: Decodable {
    init?(fastPath value: JSONValue)
}
