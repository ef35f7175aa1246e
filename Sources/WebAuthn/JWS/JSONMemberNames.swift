/// The member names of a JSON object's top level, in order, duplicates included.
///
/// `JSONSerialization` and `JSONDecoder` keep the last of two equal names silently; a JWS header with two `alg`
/// members must be refused instead (RFC 7515 §4: member names MUST be unique, and a reader either rejects
/// duplicates or uses a parser that returns only the lexically last). This scanner runs after the text has been
/// accepted as JSON by Foundation, so it only tracks strings and nesting; it still never reads past the input.
enum JSONMemberNames {
    /// The names, or nil when `bytes` is not a single JSON object.
    static func topLevel(_ bytes: [UInt8]) -> [[UInt8]]? {
        var names: [[UInt8]] = []
        var depth = 0
        var index = 0
        var expectingName = false
        var sawObject = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                // A string: find its end, honouring backslash escapes.
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard end < bytes.count else { return nil }
                if depth == 1 && expectingName {
                    names.append(Array(bytes[(index + 1)..<end]))
                    expectingName = false
                }
                index = end + 1
                continue
            case UInt8(ascii: "{"):
                if depth == 0 {
                    guard !sawObject else { return nil }
                    sawObject = true
                }
                depth += 1
                if depth == 1 { expectingName = true }
            case UInt8(ascii: "["):
                guard depth > 0 else { return nil }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                guard depth >= 0 else { return nil }
            case UInt8(ascii: ","):
                if depth == 1 { expectingName = true }
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                break
            default:
                guard depth > 0 else { return nil }
            }
            index += 1
        }
        return depth == 0 && sawObject ? names : nil
    }
}
