import Foundation

/// Any JSON value, for the parts of native messages the host passes on without a fixed shape (the page's options,
/// the credential JSON it answers with). Integers stay integers, so `-7` is written back as `-7`.
enum BrowserJSON: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([BrowserJSON])
    case object([String: BrowserJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([BrowserJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: BrowserJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    static func encoded(_ value: some Encodable) throws(KeychainError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw KeychainError(.malformedNativeMessage, reason: "a value could not be written as JSON")
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

    static func decoded(_ bytes: [UInt8]) throws(KeychainError) -> BrowserJSON {
        guard nestsWithinLimit(bytes) else {
            throw KeychainError(.malformedNativeMessage, reason: "JSON nested deeper than \(maximumDepth)")
        }
        do {
            return try JSONDecoder().decode(BrowserJSON.self, from: Data(bytes))
        } catch {
            throw KeychainError(.malformedNativeMessage, reason: "not JSON")
        }
    }
}
