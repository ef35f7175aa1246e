import Foundation
import Hummingbird
import NIOCore
import WebAuthn

/// Writes handler results as JSON: sorted keys (the same value is the same bytes), ISO 8601 dates, slashes
/// unescaped, `application/json; charset=utf-8`. Every answer is `Cache-Control: no-store` unless the handler said
/// otherwise (`ErrorMiddleware`).
public struct SesameResponseEncoder: ResponseEncoder {

    package init() {

    }
    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response
    {
        // The sign-in options have a fast path that writes the same bytes (`FastPathEncodable`).
        if let fast = value as? any FastPathEncodable, let bytes = fast.fastPathJSON() {
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        let data = try Self.encoder.encode(value)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}

/// A value that can write its JSON without `JSONEncoder`: the same bytes the encoder above writes, or nil when it
/// cannot (the encoder then writes it).
package protocol FastPathEncodable {
    func fastPathJSON() -> [UInt8]?
}

extension PublicKeyCredentialRequestOptionsJSON: FastPathEncodable {}

extension JSONBody: FastPathEncodable where Value: FastPathEncodable {
    package func fastPathJSON() -> [UInt8]? { value.fastPathJSON() }
}

/// A value of another module (the WebAuthn library's options) answered as JSON through the context's encoder.
package struct JSONBody<Value: Encodable & Sendable>: ResponseEncodable, Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
    package func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
