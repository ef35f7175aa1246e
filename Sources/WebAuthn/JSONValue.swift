import SesameBytes

/// Any JSON value (RFC 8259): the one JSON tree of the package. `JSONReader` reads the sign-in bodies into it, the
/// virtual authenticator writes its responses with it, the keychain passes the browser's untyped JSON through it,
/// and the command line prints its reports with it.
///
/// An object keeps its members in order; ``object(_:)-(Dictionary<String,JSONValue>)`` builds one from a dictionary
/// with the keys sorted (as `JSONEncoder`'s `.sortedKeys` would write them), so the bytes are stable. A number is
/// kept as its text, so nothing is lost to a `Double` and integers stay integers (`-7` is written back as `-7`).
public enum JSONValue: Sendable, Hashable {
    case object([Member])
    case array([JSONValue])
    case string(String)
    /// The number's text as written (the fast paths read no numbers; it is kept for equality checks).
    case number(String)
    case bool(Bool)
    case null

    public struct Member: Sendable, Hashable {
        public let key: String
        public let value: JSONValue

        package init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value of `key`, when this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

// MARK: - Building

extension JSONValue {
    /// An object with the members in the order given.
    package static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        .object(members.map { Member(key: $0.0, value: $0.1) })
    }

    /// An object with the dictionary's members, keys sorted (by `String`'s `<`, as `JSONEncoder` sorts them).
    package static func object(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.sorted { $0.key < $1.key }.map { Member(key: $0.key, value: $0.value) })
    }

    /// An integer, as its decimal text.
    package static func int(_ value: some BinaryInteger) -> JSONValue {
        .number(String(value))
    }
}

// MARK: - Writing

extension JSONValue {
    /// JSON text: compact (one line, no spaces) or pretty (two-space indent, `": "` after keys). Members are
    /// written in their order; strings as `JSONString.quoted` writes them (`\n`, `\r`, `\t`, else `\u00xx` for
    /// control characters; everything else as UTF-8).
    package func rendered(pretty: Bool = false) -> String {
        var out = ""
        write(into: &out, pretty: pretty, indent: 0)
        return out
    }

    /// ``rendered(pretty:)`` as UTF-8 bytes.
    package func encoded(pretty: Bool = false) -> [UInt8] {
        Array(rendered(pretty: pretty).utf8)
    }

    private func write(into out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .string(let s): out += JSONString.quoted(s)
        case .number(let text): out += text
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            Self.write(items, open: "[", close: "]", into: &out, pretty: pretty, indent: indent) { item, out in
                item.write(into: &out, pretty: pretty, indent: indent + 1)
            }
        case .object(let members):
            Self.write(members, open: "{", close: "}", into: &out, pretty: pretty, indent: indent) { member, out in
                out += JSONString.quoted(member.key) + (pretty ? ": " : ":")
                member.value.write(into: &out, pretty: pretty, indent: indent + 1)
            }
        }
    }

    /// An array's or object's brackets around its elements, one per line when pretty.
    private static func write<Element>(
        _ elements: [Element], open: String, close: String, into out: inout String, pretty: Bool, indent: Int,
        element: (Element, inout String) -> Void
    ) {
        guard !elements.isEmpty else {
            out += open + close
            return
        }
        let newline = pretty ? "\n" : ""
        let pad = pretty ? String(repeating: "  ", count: indent + 1) : ""
        out += open
        for (index, item) in elements.enumerated() {
            out += (index > 0 ? "," : "") + newline + pad
            element(item, &out)
        }
        out += newline + (pretty ? String(repeating: "  ", count: indent) : "") + close
    }
}

// MARK: - Codable

/// Through `Codable`, for JSON that other `Codable` types carry without a fixed shape. Decoding tries null, then
/// `Bool`, `Int`, `Double`, `String`, an array and an object, in that order; a number keeps the text of the `Int` or
/// `Double` it decoded as, and an object's keys come out sorted (a decoder gives them in no set order). Encoding
/// writes a number as an `Int` when its text is one, else as a `Double`.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .number(String(value))
        } else if let value = try? container.decode(Double.self) {
            self = .number(String(value))
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for member in members { try container.encode(member.value, forKey: MemberKey(member.key)) }
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .number(let text):
                if let value = Int(text) {
                    try container.encode(value)
                } else if let value = Double(text) {
                    try container.encode(value)
                } else {
                    throw EncodingError.invalidValue(
                        text, .init(codingPath: encoder.codingPath, debugDescription: "not a JSON number"))
                }
            case .string(let value): try container.encode(value)
            case .array(let items): try container.encode(items)
            case .object: break
            }
        }
    }

    private struct MemberKey: CodingKey {
        let stringValue: String
        init(_ key: String) { stringValue = key }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}
