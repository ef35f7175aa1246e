import Foundation
import WebAuthn

/// The native messages' JSON: the parts the host passes on without a fixed shape (the page's options, the
/// credential JSON it answers with) are the `WebAuthn` library's `JSONValue`, through `Codable` (integers stay
/// integers, so `-7` is written back as `-7`); this is how the host writes and reads them, within its limits.
enum BrowserJSON {
    /// `value` as JSON with sorted keys and unescaped slashes, as the host and the keychain's passkey responses are
    /// written; `failure` when the encoder refuses it.
    static func encoded(
        _ value: some Encodable,
        failure: @autoclosure () -> KeychainError = KeychainError(
            .malformedNativeMessage, reason: "a value could not be written as JSON")
    ) throws(KeychainError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw failure()
        }
    }

    /// The deepest nesting of arrays and objects the host reads. WebAuthn options nest about six deep
    /// (`publicKey.extensions.prf.evalByCredential.<id>.first`); decoding a value tries each JSON type in turn,
    /// which costs time that grows with the square of the depth, so a page's deeply nested options would otherwise
    /// hold the host for seconds per request (FuzzNativeMessage found it).
    static let maximumDepth = 32

    /// Whether `bytes` nest arrays and objects no deeper than `maximumDepth`, in one pass that skips strings (and
    /// the escapes in them). Bytes that are not JSON pass here and fail in the decoder.
    static func nestsWithinLimit(_ bytes: [UInt8]) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maximumDepth { return false }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return true
    }

    static func decoded(_ bytes: [UInt8]) throws(KeychainError) -> JSONValue {
        guard nestsWithinLimit(bytes) else {
            throw KeychainError(.malformedNativeMessage, reason: "JSON nested deeper than \(maximumDepth)")
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw KeychainError(.malformedNativeMessage, reason: "not JSON")
        }
    }
}
