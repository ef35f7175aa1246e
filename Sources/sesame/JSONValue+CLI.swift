import CBOR
import Foundation
import WebAuthn

/// The command line's reports are `JSONValue`s (the `WebAuthn` library's, members in order so output is stable for
/// scripts and tests); these build them from what the commands show.
extension JSONValue {
    static func optional(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }

    /// CBOR rendered as JSON: byte strings become base64url text, map keys become strings.
    static func from(_ item: CBOR) -> JSONValue {
        switch item {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? .int(n) : .string(String(n))
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
    static func metadata(_ entry: MetadataEntry) -> JSONValue {
        .object([
            ("description", .optional(entry.name)),
            ("certificationLevel", .optional(entry.certificationLevel?.description)),
            ("statuses", .array(entry.statusReports.map { .string($0.status.rawValue) })),
        ])
    }

    static func flags(_ f: AuthenticatorFlags) -> JSONValue {
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
