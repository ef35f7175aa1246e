import CBOR
import Foundation

/// Reads a CBOR map with text keys strictly: every member the caller does not ask for is an error
/// (``finish()``), types are checked, and lengths are bounded. The error code is the caller's (`corruptFile`
/// for the vault body, `malformedRecord` for sealed plaintexts, `shareInvalid` for shares).
struct CBORFields {
    private var entries: [String: CBOR]
    private var read: Set<String> = []
    let code: KeychainError.Code
    let what: String

    init(_ item: CBOR, code: KeychainError.Code, what: String) throws(KeychainError) {
        guard case .map(let list) = item else { throw KeychainError(code, reason: "\(what) is not a CBOR map") }
        var entries: [String: CBOR] = [:]
        for entry in list {
            guard case .textString(let key) = entry.key else {
                throw KeychainError(code, reason: "\(what) has a non-text key")
            }
            entries[key] = entry.value
        }
        self.entries = entries
        self.code = code
        self.what = what
    }

    init(decoding bytes: [UInt8], code: KeychainError.Code, what: String) throws(KeychainError) {
        let item: CBOR
        do {
            item = try CBORDecoder(options: CBORDecodingOptions(maximumDepth: 8, maximumCollectionCount: 1_000_000))
                .decode(bytes)
        } catch {
            throw KeychainError(code, reason: "\(what) is not canonical CBOR (\(error.code))")
        }
        try self.init(item, code: code, what: what)
    }

    mutating func optional(_ key: String) -> CBOR? {
        read.insert(key)
        return entries[key]
    }

    mutating func required(_ key: String) throws(KeychainError) -> CBOR {
        guard let value = optional(key) else { throw KeychainError(code, reason: "\(what) lacks '\(key)'") }
        return value
    }

    mutating func bytes(_ key: String, count: ClosedRange<Int> = 0...Int.max) throws(KeychainError) -> [UInt8] {
        guard case .byteString(let b) = try required(key), count.contains(b.count) else {
            throw KeychainError(code, reason: "\(what) '\(key)' is not a byte string of the right length")
        }
        return b
    }

    mutating func optionalBytes(_ key: String, count: ClosedRange<Int> = 0...Int.max) throws(KeychainError) -> [UInt8]?
    {
        guard optional(key) != nil else { return nil }
        return try bytes(key, count: count)
    }

    mutating func text(_ key: String, maximum: Int = ItemLimits.notesBytes) throws(KeychainError) -> String {
        guard case .textString(let s) = try required(key), s.utf8.count <= maximum else {
            throw KeychainError(code, reason: "\(what) '\(key)' is not text of at most \(maximum) bytes")
        }
        return s
    }

    mutating func optionalText(_ key: String, maximum: Int = ItemLimits.notesBytes) throws(KeychainError) -> String? {
        guard optional(key) != nil else { return nil }
        return try text(key, maximum: maximum)
    }

    mutating func int(_ key: String) throws(KeychainError) -> Int64 {
        guard let v = try required(key).int64 else {
            throw KeychainError(code, reason: "\(what) '\(key)' is not an integer")
        }
        return v
    }

    /// A time in Unix milliseconds within ``ItemTime/range`` (years 1 to 9999), so that it re-encodes to itself.
    mutating func time(_ key: String) throws(KeychainError) -> Date {
        let ms = try int(key)
        guard let date = ItemTime.date(checkedMilliseconds: ms) else {
            throw KeychainError(code, reason: "\(what) '\(key)' is not a time between the years 1 and 9999")
        }
        return date
    }

    mutating func optionalTime(_ key: String) throws(KeychainError) -> Date? {
        guard optional(key) != nil else { return nil }
        return try time(key)
    }

    mutating func optionalInt(_ key: String) throws(KeychainError) -> Int64? {
        guard optional(key) != nil else { return nil }
        return try int(key)
    }

    mutating func unsigned(_ key: String) throws(KeychainError) -> UInt64 {
        guard case .unsigned(let v) = try required(key) else {
            throw KeychainError(code, reason: "\(what) '\(key)' is not an unsigned integer")
        }
        return v
    }

    mutating func bool(_ key: String) throws(KeychainError) -> Bool {
        guard case .boolean(let b) = try required(key) else {
            throw KeychainError(code, reason: "\(what) '\(key)' is not a boolean")
        }
        return b
    }

    mutating func optionalBool(_ key: String) throws(KeychainError) -> Bool? {
        guard optional(key) != nil else { return nil }
        return try bool(key)
    }

    mutating func array(_ key: String, maximum: Int = 1_000_000) throws(KeychainError) -> [CBOR] {
        guard case .array(let a) = try required(key), a.count <= maximum else {
            throw KeychainError(code, reason: "\(what) '\(key)' is not an array of at most \(maximum) entries")
        }
        return a
    }

    mutating func texts(_ key: String, maximum: Int) throws(KeychainError) -> [String] {
        var out: [String] = []
        for element in try array(key, maximum: maximum) {
            guard case .textString(let s) = element, s.utf8.count <= ItemLimits.nameBytes else {
                throw KeychainError(code, reason: "\(what) '\(key)' holds something other than short text")
            }
            out.append(s)
        }
        return out
    }

    /// Every member must have been read: an unknown one means a format this build does not know.
    func finish() throws(KeychainError) {
        let unknown = Set(entries.keys).subtracting(read)
        guard unknown.isEmpty else {
            throw KeychainError(code, reason: "\(what) has \(unknown.count) unknown member(s)")
        }
    }
}
