/// Writes CBOR in CTAP2 canonical form: shortest integers and lengths, definite lengths, map entries sorted by
/// their encoded keys (shorter first, then bytewise), shortest float that keeps the value.
public struct CBOREncoder: Sendable {
    public init() {}

    /// The canonical encoding of `item`. Map entries are sorted; a map with two equal keys is encoded as given
    /// (the caller built it), since the writer cannot choose which value wins.
    public func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        write(item, into: &out)
        return out
    }

    /// Canonical encoding of one item (convenience).
    public static func encode(_ item: CBOR) -> [UInt8] { CBOREncoder().encode(item) }

    func write(_ item: CBOR, into out: inout [UInt8]) {
        switch item {
        case .unsigned(let n): writeHead(0, n, into: &out)
        case .negative(let n): writeHead(1, n, into: &out)
        case .byteString(let b):
            writeHead(2, UInt64(b.count), into: &out)
            out.append(contentsOf: b)
        case .textString(let s):
            let utf8 = Array(s.utf8)
            writeHead(3, UInt64(utf8.count), into: &out)
            out.append(contentsOf: utf8)
        case .array(let items):
            writeHead(4, UInt64(items.count), into: &out)
            for i in items { write(i, into: &out) }
        case .map(let entries):
            writeHead(5, UInt64(entries.count), into: &out)
            let encoded = entries.map { (key: encode($0.key), value: $0.value) }
                .sorted { Self.compareCanonical($0.key[...], $1.key[...]) == .orderedAscending }
            for e in encoded {
                out.append(contentsOf: e.key)
                write(e.value, into: &out)
            }
        case .tagged(let tag, let inner):
            writeHead(6, tag, into: &out)
            write(inner, into: &out)
        case .boolean(let b): out.append(b ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .undefined: out.append(0xf7)
        case .simple(let v):
            if v < 24 {
                out.append(0xe0 | v)
            } else {
                out.append(0xf8)
                out.append(v)
            }
        case .float(let d): writeFloat(d, into: &out)
        }
    }

    private func writeHead(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch argument {
        case 0..<24: out.append(m | UInt8(argument))
        case 24...0xff: out.append(contentsOf: [m | 24, UInt8(argument)])
        case 0x100...0xffff:
            out.append(m | 25)
            appendBigEndian(argument, bytes: 2, into: &out)
        case 0x1_0000...0xffff_ffff:
            out.append(m | 26)
            appendBigEndian(argument, bytes: 4, into: &out)
        default:
            out.append(m | 27)
            appendBigEndian(argument, bytes: 8, into: &out)
        }
    }

    private func writeFloat(_ d: Double, into out: inout [UInt8]) {
        if let f = Float(exactly: d) ?? (d.isNaN ? Float.nan : nil) {
            if let half = Float16Bits.exactly(f) {
                out.append(0xf9)
                appendBigEndian(UInt64(half), bytes: 2, into: &out)
            } else {
                out.append(0xfa)
                appendBigEndian(UInt64(f.bitPattern), bytes: 4, into: &out)
            }
        } else {
            out.append(0xfb)
            appendBigEndian(d.bitPattern, bytes: 8, into: &out)
        }
    }

    private func appendBigEndian(_ v: UInt64, bytes: Int, into out: inout [UInt8]) {
        for i in stride(from: bytes - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: v >> (8 * i))) }
    }

    /// CTAP2 canonical key order: shorter encodings first, then bytewise lexicographic.
    static func compareCanonical(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Ordering {
        if a.count != b.count { return a.count < b.count ? .orderedAscending : .orderedDescending }
        for (x, y) in zip(a, b) where x != y { return x < y ? .orderedAscending : .orderedDescending }
        return .orderedSame
    }

    enum Ordering { case orderedAscending, orderedSame, orderedDescending }
}
