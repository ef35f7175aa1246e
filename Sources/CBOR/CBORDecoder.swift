/// Limits and rules for decoding untrusted CBOR.
public struct CBORDecodingOptions: Sendable, Hashable {
    /// Deepest nesting of arrays, maps and tags accepted. CTAP2 messages nest at most 4 deep.
    public var maximumDepth: Int
    /// Largest number of elements in one array or entries in one map.
    public var maximumCollectionCount: Int
    /// Require CTAP2 canonical map key order (no duplicate keys is always required).
    public var requireCanonicalMapOrder: Bool

    public init(maximumDepth: Int = 16, maximumCollectionCount: Int = 65_536, requireCanonicalMapOrder: Bool = true) {
        self.maximumDepth = maximumDepth
        self.maximumCollectionCount = maximumCollectionCount
        self.requireCanonicalMapOrder = requireCanonicalMapOrder
    }

    /// CTAP2 canonical: sorted keys, shortest forms, no indefinite lengths.
    public static let ctap2 = CBORDecodingOptions()
    /// As ``ctap2`` but accepting any key order (still no duplicates). Some authenticators emit
    /// attestation statements whose map keys are not in canonical order.
    public static let lenientMapOrder = CBORDecodingOptions(requireCanonicalMapOrder: false)
}

/// Decodes one CBOR item from untrusted bytes.
///
/// Every length is checked against the bytes that remain before anything is allocated, so a hostile length
/// cannot make the decoder allocate more than the input's size.
public struct CBORDecoder: Sendable {
    public var options: CBORDecodingOptions

    public init(options: CBORDecodingOptions = .ctap2) {
        self.options = options
    }

    /// Decodes exactly one item; bytes after it are an error (``CBORError/Code/trailingBytes``).
    public func decode(_ bytes: some Collection<UInt8>) throws(CBORError) -> CBOR {
        let (item, consumed) = try decodePrefix(bytes)
        if consumed != bytes.count { throw CBORError(.trailingBytes, offset: consumed) }
        return item
    }

    /// Decodes the first item and returns it with the number of bytes it took, for formats such as
    /// authenticator data where a CBOR item is followed by more data.
    public func decodePrefix(_ bytes: some Collection<UInt8>) throws(CBORError) -> (CBOR, Int) {
        let array = Array(bytes)
        var reader = Reader(bytes: array, options: options)
        let item = try reader.readItem(depth: 0)
        return (item, reader.offset)
    }
}

private struct Reader {
    let bytes: [UInt8]
    let options: CBORDecodingOptions
    var offset = 0

    init(bytes: [UInt8], options: CBORDecodingOptions) {
        self.bytes = bytes
        self.options = options
    }

    var remaining: Int { bytes.count - offset }

    mutating func readByte() throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw CBORError(.truncated, offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readBytes(_ count: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard count <= remaining else { throw CBORError(.truncated, offset: offset) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Reads the argument of an initial byte, enforcing the shortest encoding.
    mutating func readArgument(_ info: UInt8, start: Int) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24:
            return UInt64(info)
        case 24:
            let v = UInt64(try readByte())
            if v < 24 { throw CBORError(.nonCanonicalInteger, offset: start) }
            return v
        case 25:
            let v = try readBigEndian(2)
            if v <= UInt64(UInt8.max) { throw CBORError(.nonCanonicalInteger, offset: start) }
            return v
        case 26:
            let v = try readBigEndian(4)
            if v <= UInt64(UInt16.max) { throw CBORError(.nonCanonicalInteger, offset: start) }
            return v
        case 27:
            let v = try readBigEndian(8)
            if v <= UInt64(UInt32.max) { throw CBORError(.nonCanonicalInteger, offset: start) }
            return v
        case 31:
            throw CBORError(.indefiniteLength, offset: start)
        default:
            throw CBORError(.reservedAdditionalInfo, offset: start)
        }
    }

    mutating func readBigEndian(_ count: Int) throws(CBORError) -> UInt64 {
        var v: UInt64 = 0
        for b in try readBytes(count) { v = v << 8 | UInt64(b) }
        return v
    }

    /// A length argument that must also fit in what remains of the input (each element takes at least
    /// `minimumBytesEach` bytes), so nothing is allocated for lengths the input cannot back.
    mutating func readLength(_ info: UInt8, start: Int, minimumBytesEach: Int) throws(CBORError) -> Int {
        let raw = try readArgument(info, start: start)
        guard raw <= UInt64(Int.max / 2) else { throw CBORError(.integerOverflow, offset: start) }
        let n = Int(raw)
        let (needed, overflow) = n.multipliedReportingOverflow(by: minimumBytesEach)
        if overflow || needed > remaining { throw CBORError(.truncated, offset: start) }
        return n
    }

    mutating func readItem(depth: Int) throws(CBORError) -> CBOR {
        let start = offset
        let initial = try readByte()
        let major = initial >> 5
        let info = initial & 0x1f
        switch major {
        case 0:
            return .unsigned(try readArgument(info, start: start))
        case 1:
            return .negative(try readArgument(info, start: start))
        case 2:
            let n = try readLength(info, start: start, minimumBytesEach: 1)
            return .byteString(Array(try readBytes(n)))
        case 3:
            let n = try readLength(info, start: start, minimumBytesEach: 1)
            let raw = try readBytes(n)
            guard let s = String(validating: raw, as: UTF8.self) else {
                throw CBORError(.invalidUTF8, offset: start)
            }
            return .textString(s)
        case 4:
            guard depth < options.maximumDepth else { throw CBORError(.depthLimitExceeded, offset: start) }
            let n = try readLength(info, start: start, minimumBytesEach: 1)
            guard n <= options.maximumCollectionCount else { throw CBORError(.sizeLimitExceeded, offset: start) }
            var items: [CBOR] = []
            items.reserveCapacity(n)
            for _ in 0..<n { items.append(try readItem(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard depth < options.maximumDepth else { throw CBORError(.depthLimitExceeded, offset: start) }
            let n = try readLength(info, start: start, minimumBytesEach: 2)
            guard n <= options.maximumCollectionCount else { throw CBORError(.sizeLimitExceeded, offset: start) }
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(n)
            var previousKey: ArraySlice<UInt8>? = nil
            var seen = Set<CBOR>()
            for _ in 0..<n {
                let keyStart = offset
                let key = try readItem(depth: depth + 1)
                let encodedKey = bytes[keyStart..<offset]
                if options.requireCanonicalMapOrder, let previous = previousKey {
                    switch CBOREncoder.compareCanonical(previous, encodedKey) {
                    case .orderedAscending: break
                    case .orderedSame: throw CBORError(.duplicateMapKey, offset: keyStart)
                    case .orderedDescending: throw CBORError(.unsortedMapKeys, offset: keyStart)
                    }
                }
                if !seen.insert(key).inserted { throw CBORError(.duplicateMapKey, offset: keyStart) }
                previousKey = encodedKey
                let value = try readItem(depth: depth + 1)
                entries.append(CBORMapEntry(key, value))
            }
            return .map(entries)
        case 6:
            guard depth < options.maximumDepth else { throw CBORError(.depthLimitExceeded, offset: start) }
            let tag = try readArgument(info, start: start)
            return .tagged(tag, try readItem(depth: depth + 1))
        default:
            return try readSimple(info, start: start)
        }
    }

    mutating func readSimple(_ info: UInt8, start: Int) throws(CBORError) -> CBOR {
        switch info {
        case 20: return .boolean(false)
        case 21: return .boolean(true)
        case 22: return .null
        case 23: return .undefined
        case 0..<20: return .simple(info)
        case 24:
            let v = try readByte()
            if v < 32 { throw CBORError(.unsupportedSimpleValue, offset: start) }
            return .simple(v)
        case 25:
            let bits = UInt16(try readBigEndian(2))
            let value = Float16Bits.toFloat(bits)
            // Canonical NaN is 0x7e00; other NaN payloads would not survive re-encoding.
            if value.isNaN && bits != 0x7e00 { throw CBORError(.nonCanonicalFloat, offset: start) }
            return .float(Double(value))
        case 26:
            let bits = UInt32(try readBigEndian(4))
            let f = Float(bitPattern: bits)
            if Float16Bits.exactly(f) != nil { throw CBORError(.nonCanonicalFloat, offset: start) }
            return .float(Double(f))
        case 27:
            let d = Double(bitPattern: try readBigEndian(8))
            if d.isNaN || Float(exactly: d) != nil { throw CBORError(.nonCanonicalFloat, offset: start) }
            return .float(d)
        case 31:
            throw CBORError(.indefiniteLength, offset: start)
        default:
            throw CBORError(.reservedAdditionalInfo, offset: start)
        }
    }
}

/// IEEE 754 half precision conversions without relying on `Float16` (unavailable on some platforms).
enum Float16Bits {
    static func toFloat(_ h: UInt16) -> Float {
        let sign: Float = (h & 0x8000) != 0 ? -1 : 1
        let exponent = Int((h >> 10) & 0x1f)
        let mantissa = Float(h & 0x3ff)
        switch exponent {
        case 0: return sign * mantissa * Float(sign: .plus, exponent: -24, significand: 1)
        case 31: return mantissa == 0 ? sign * .infinity : .nan
        default: return sign * (1 + mantissa / 1024) * Float(sign: .plus, exponent: exponent - 15, significand: 1)
        }
    }

    /// The half-precision bits that represent `f` exactly, if any.
    static func exactly(_ f: Float) -> UInt16? {
        if f.isNaN { return 0x7e00 }
        for candidate in halfCandidates(f) where toFloat(candidate).bitPattern == f.bitPattern {
            return candidate
        }
        return nil
    }

    private static func halfCandidates(_ f: Float) -> [UInt16] {
        let sign: UInt16 = f.sign == .minus ? 0x8000 : 0
        if f.isInfinite { return [sign | 0x7c00] }
        if f == 0 { return [sign] }
        let magnitude = abs(f)
        // Subnormal halves: multiples of 2^-24 below 2^-14.
        if magnitude < Float(sign: .plus, exponent: -14, significand: 1) {
            let m = magnitude / Float(sign: .plus, exponent: -24, significand: 1)
            guard m == m.rounded(), m < 1024 else { return [] }
            return [sign | UInt16(m)]
        }
        let e = Int(magnitude.exponent)
        guard e <= 15 else { return [] }
        let scaled = (magnitude / Float(sign: .plus, exponent: e, significand: 1) - 1) * 1024
        guard scaled == scaled.rounded(), scaled >= 0, scaled < 1024 else { return [] }
        return [sign | UInt16(e + 15) << 10 | UInt16(scaled)]
    }
}
