/// A decoded CBOR data item (RFC 8949), restricted to what CTAP2 and WebAuthn use.
///
/// Maps keep their entries in the order they were read (or given), so a canonical encoder can check or
/// produce the CTAP2 order; lookup helpers are provided for the common integer- and text-keyed maps.
///
/// CTAP2 canonical form (CTAP 2.1 §8 "Message Encoding"):
/// ```
/// - integers, lengths and tags use the shortest encoding
/// - no indefinite-length items
/// - map keys sorted: shorter encoded keys first, then bytewise lexicographic on the encoded form
///   (for integer and text keys this is: major type, then length, then value), and no duplicates
/// - floating point values use the shortest form that keeps the value
/// ```
public enum CBOR: Sendable, Hashable {
    /// Major type 0: 0 ... 2^64-1.
    case unsigned(UInt64)
    /// Major type 1: the value is `-1 - n`; stored as `n` so every encodable value fits.
    case negative(UInt64)
    /// Major type 2.
    case byteString([UInt8])
    /// Major type 3, valid UTF-8.
    case textString(String)
    /// Major type 4.
    case array([CBOR])
    /// Major type 5, entries in order.
    case map([CBORMapEntry])
    /// Major type 6.
    indirect case tagged(UInt64, CBOR)
    /// Major type 7: `false` / `true`.
    case boolean(Bool)
    /// Major type 7: `null`.
    case null
    /// Major type 7: `undefined`.
    case undefined
    /// Major type 7: other simple values (0...19, 32...255).
    case simple(UInt8)
    /// Major type 7: half, single or double precision float, widened to `Double`.
    case float(Double)
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
    public var key: CBOR
    public var value: CBOR

    public init(_ key: CBOR, _ value: CBOR) {
        self.key = key
        self.value = value
    }
}

extension CBOR {
    /// An integer value, from either major type 0 or 1, if it fits in `Int64`.
    public var int64: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }

    /// An integer value as `Int`, if it fits.
    public var int: Int? { int64.flatMap { Int(exactly: $0) } }

    public var bytes: [UInt8]? {
        if case .byteString(let b) = self { return b }
        return nil
    }

    public var string: String? {
        if case .textString(let s) = self { return s }
        return nil
    }

    public var array: [CBOR]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var mapEntries: [CBORMapEntry]? {
        if case .map(let m) = self { return m }
        return nil
    }

    public var bool: Bool? {
        if case .boolean(let b) = self { return b }
        return nil
    }

    /// The value stored under `key` in a map (first match), or nil if this is not a map or the key is absent.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first(where: { $0.key == key })?.value
    }

    /// The value stored under an integer key (COSE and CTAP maps).
    public subscript(int key: Int64) -> CBOR? { self[CBOR(key)] }

    /// The value stored under a text key (attestation objects and statements).
    public subscript(text key: String) -> CBOR? { self[.textString(key)] }

    /// An integer item, using major type 1 for negative values.
    public init(_ value: Int64) {
        self = value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    public init(_ value: Int) { self.init(Int64(value)) }
}

extension CBOR: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral
{
    public init(integerLiteral value: Int64) { self.init(value) }
    public init(stringLiteral value: String) { self = .textString(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(arrayLiteral elements: CBOR...) { self = .array(elements) }
}
