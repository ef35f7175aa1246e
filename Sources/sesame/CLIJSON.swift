import CBOR
import Foundation
import WebAuthn

/// A JSON value whose object members keep their order, so command output is stable for scripts and tests.
enum CLIJSON: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case null
    case array([CLIJSON])
    case object([(String, CLIJSON)])

    static func == (lhs: CLIJSON, rhs: CLIJSON) -> Bool { lhs.rendered() == rhs.rendered() }

    static func optional(_ s: String?) -> CLIJSON { s.map(CLIJSON.string) ?? .null }

    /// Compact (one line) or pretty (two-space indented) JSON text.
    func rendered(pretty: Bool = false, indent: Int = 0) -> String {
        let pad = pretty ? String(repeating: "  ", count: indent + 1) : ""
        let end = pretty ? "\n" + String(repeating: "  ", count: indent) : ""
        let nl = pretty ? "\n" : ""
        let colon = pretty ? ": " : ":"
        switch self {
        case .string(let s): return Self.quote(s)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[" + nl
                + items.map { pad + $0.rendered(pretty: pretty, indent: indent + 1) }.joined(separator: "," + nl)
                + end + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            return "{" + nl
                + members.map { pad + Self.quote($0.0) + colon + $0.1.rendered(pretty: pretty, indent: indent + 1) }
                .joined(separator: "," + nl) + end + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// CBOR rendered as JSON: byte strings become base64url text, map keys become strings.
    static func from(_ item: CBOR) -> CLIJSON {
        switch item {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? .int(Int64(n)) : .string(String(n))
        case .negative(let n): return n < UInt64(Int64.max) ? .int(-1 - Int64(n)) : .string("-1-\(n)")
        case .byteString(let b): return .string(Base64URL.encode(b))
        case .textString(let s): return .string(s)
        case .array(let a): return .array(a.map(from))
        case .map(let entries):
            return .object(entries.map { (keyText($0.key), from($0.value)) })
        case .tagged(let tag, let inner): return .object([("tag", .int(Int64(clamping: tag))), ("value", from(inner))])
        case .boolean(let b): return .bool(b)
        case .null, .undefined: return .null
        case .simple(let v): return .string("simple(\(v))")
        case .float(let d): return .string(String(d))
        }
    }

    static func keyText(_ key: CBOR) -> String {
        switch key {
        case .textString(let s): return s
        case .unsigned, .negative: return key.int64.map(String.init) ?? "?"
        default: return from(key).rendered()
        }
    }

    /// A FIDO metadata entry: the model's name, its highest certification level and every status in BLOB order.
    static func metadata(_ entry: MetadataEntry) -> CLIJSON {
        .object([
            ("description", .optional(entry.name)),
            ("certificationLevel", .optional(entry.certificationLevel?.description)),
            ("statuses", .array(entry.statusReports.map { .string($0.status.rawValue) })),
        ])
    }

    static func flags(_ f: AuthenticatorFlags) -> CLIJSON {
        .object([
            ("up", .bool(f.contains(.userPresent))), ("uv", .bool(f.contains(.userVerified))),
            ("be", .bool(f.contains(.backupEligible))), ("bs", .bool(f.contains(.backedUp))),
            ("at", .bool(f.contains(.attestedCredentialData))), ("ed", .bool(f.contains(.extensionData))),
        ])
    }
}

/// Reads a file path, or standard input for `-`.
func readInput(_ path: String) throws -> [UInt8] {
    if path == "-" {
        return Array(FileHandle.standardInput.readDataToEndOfFile())
    }
    return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Prints to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
