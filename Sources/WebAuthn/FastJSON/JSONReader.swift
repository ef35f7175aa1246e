/// A strict reader of JSON text (RFC 8259) into a tree of values, for the request bodies on the sign-in path, where
/// Foundation's `JSONDecoder` cost more than the signature check it feeds (docs/server.md, "Benchmark").
///
/// It is a fast path, never the only path: whatever it refuses is decoded by `JSONDecoder` as before, which then
/// gives its own answer (and error). So it refuses anything it is unsure of:
/// - anything but one value, with optional whitespace around it (space, tab, line feed, carriage return);
/// - control characters (U+0000 to U+001F) unescaped inside strings, unknown escapes, and `\u` escapes that leave a
///   surrogate unpaired;
/// - bytes that are not UTF-8 (overlong forms, surrogates, values above U+10FFFF, truncated sequences);
/// - numbers outside the grammar `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, or too large for a `Double`;
/// - objects that name a member twice;
/// - nesting deeper than `maximumDepth`, and input longer than `maximumLength`.
///
/// `FuzzFastJSON` checks that every value it reads is the value `JSONDecoder` reads from the same bytes.
public enum JSONReader {
    public static let maximumDepth = 32
    public static let maximumLength = 256 * 1024

    /// The value the bytes hold, or nil for anything outside the strict grammar above.
    public static func read(_ bytes: some Collection<UInt8>) -> JSONValue? {
        guard bytes.count <= maximumLength else { return nil }
        if let value = bytes.withContiguousStorageIfAvailable({ read(buffer: $0) }) { return value }
        return Array(bytes).withUnsafeBufferPointer { read(buffer: $0) }
    }

    private static func read(buffer: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        var cursor = Cursor(bytes: buffer)
        cursor.skipWhitespace()
        guard let value = cursor.value(depth: 0) else { return nil }
        cursor.skipWhitespace()
        return cursor.offset == buffer.count ? value : nil
    }
}

private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    mutating func expect(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - offset >= count else { return false }
        for index in 0..<count where bytes[offset + index] != literal.utf8Start[index] { return false }
        offset += count
        return true
    }

    mutating func value(depth: Int) -> JSONValue? {
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return depth < JSONReader.maximumDepth ? object(depth: depth + 1) : nil
        case UInt8(ascii: "["): return depth < JSONReader.maximumDepth ? array(depth: depth + 1) : nil
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return expect("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return expect("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return expect("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    mutating func object(depth: Int) -> JSONValue? {
        offset += 1  // {
        var members: [JSONValue.Member] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\""), let key = string() else { return nil }
            // A member named twice is refused: readers disagree on which one counts.
            guard !members.contains(where: { $0.key == key }) else { return nil }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            offset += 1
            skipWhitespace()
            guard let value = value(depth: depth) else { return nil }
            members.append(.init(key: key, value: value))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                return .object(members)
            default: return nil
            }
        }
    }

    mutating func array(depth: Int) -> JSONValue? {
        offset += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            guard let value = value(depth: depth) else { return nil }
            elements.append(value)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return .array(elements)
            default: return nil
            }
        }
    }

    mutating func number() -> JSONValue? {
        let start = offset
        if current == UInt8(ascii: "-") { offset += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
        offset += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            offset += 1
            guard skipDigits() > 0 else { return nil }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard skipDigits() > 0 else { return nil }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        // Foundation refuses a number too large for a Double (`1e400`); so does this reader.
        guard let number = Double(text), number.isFinite else { return nil }
        return .number(text)
    }

    @discardableResult
    mutating func skipDigits() -> Int {
        let start = offset
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
        return offset - start
    }

    /// A string from its opening quote: without escapes, its bytes as they are (checked as UTF-8); with escapes,
    /// unescaped into a buffer first.
    mutating func string() -> String? {
        offset += 1  // "
        let start = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: start) }
            guard byte >= 0x20 else { return nil }
            offset += 1
        }
        return nil
    }

    private mutating func escapedString(from start: Int) -> String? {
        var unescaped = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: unescaped, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escape = current else { return nil }
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = escapedScalar() else { return nil }
                    unescaped.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                unescaped.append(byte)
            }
        }
        return nil
    }

    /// The scalar of a `\u` escape (the `u` read already), with its low surrogate's escape when it is a high one.
    private mutating func escapedScalar() -> Unicode.Scalar? {
        guard let unit = hex4() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard expect("\\u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }
}
