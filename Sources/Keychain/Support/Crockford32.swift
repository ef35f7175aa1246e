/// Crockford's Base32 (https://www.crockford.com/base32.html), for text people read aloud or copy by hand:
/// recovery keys, pairing codes and fingerprints.
///
/// Alphabet `0123456789ABCDEFGHJKMNPQRSTVWXYZ` (no I, L, O, U). Decoding is forgiving in the ways the scheme
/// intends: lower case is accepted, `I`/`L` read as 1 and `O` as 0, and hyphens and spaces (group separators)
/// are ignored. Any other character is refused.
enum Crockford32 {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// Encodes the bits of `bytes`, most significant first, five per character; the last character is padded
    /// with zero bits.
    static func encode(_ bytes: [UInt8]) -> String {
        encode(bits: bytes, count: bytes.count * 8)
    }

    /// Encodes the first `count` bits of `bytes`.
    static func encode(bits bytes: [UInt8], count: Int) -> String {
        var out: [UInt8] = []
        var index = 0
        while index < count {
            var value = 0
            for i in 0..<5 {
                let bit = index + i
                value <<= 1
                if bit < count, bit / 8 < bytes.count, bytes[bit / 8] & (0x80 >> (bit % 8)) != 0 { value |= 1 }
            }
            out.append(alphabet[value])
            index += 5
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The 5-bit values of the characters in `text`, separators dropped; nil when a character is outside the
    /// alphabet.
    static func values(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "-"), UInt8(ascii: " "): continue
            default:
                guard let v = value(of: c) else { return nil }
                out.append(v)
            }
        }
        return out
    }

    /// Packs 5-bit values into `count` bits (most significant first); the bits past `count` must be zero.
    static func bits(_ values: [UInt8], count: Int) -> [UInt8]? {
        guard values.count * 5 >= count, values.count * 5 < count + 5 else { return nil }
        var out = [UInt8](repeating: 0, count: (count + 7) / 8)
        for (i, v) in values.enumerated() {
            for j in 0..<5 where v & (0x10 >> j) != 0 {
                let bit = i * 5 + j
                guard bit < count else { return nil }
                out[bit / 8] |= 0x80 >> (bit % 8)
            }
        }
        return out
    }

    private static func value(of c: UInt8) -> UInt8? {
        var c = c
        if c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z") { c -= 32 }
        switch c {
        case UInt8(ascii: "O"): return 0
        case UInt8(ascii: "I"), UInt8(ascii: "L"): return 1
        default:
            guard let i = alphabet.firstIndex(of: c) else { return nil }
            return UInt8(i)
        }
    }

    /// `text` split into groups of `size` characters joined by `-`.
    static func grouped(_ text: String, size: Int) -> String {
        var groups: [String] = []
        var current = ""
        for c in text {
            current.append(c)
            if current.count == size {
                groups.append(current)
                current = ""
            }
        }
        if !current.isEmpty { groups.append(current) }
        return groups.joined(separator: "-")
    }
}
