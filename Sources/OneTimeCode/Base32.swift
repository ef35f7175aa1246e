/// RFC 4648 §6 Base32 (the `A`–`Z`, `2`–`7` alphabet), as used for shared secrets in key URIs.
///
/// Encoding emits upper case without `=` padding, which is what the Google Key URI format asks for. Decoding is
/// lenient in the ways people and apps are when they copy a secret: it ignores case, spaces and trailing `=`
/// padding, and it refuses anything else: characters outside the alphabet, `=` in the middle, lengths that
/// cannot come from whole bytes (1, 3 or 6 symbols in the final group), and non-zero unused trailing bits, so
/// that every accepted text names exactly one byte string.
public enum Base32 {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Maps an ASCII byte to its 5-bit value, or 0xFF when it is not in the alphabet (either case).
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() {
            table[Int(symbol)] = UInt8(value)
            if symbol >= UInt8(ascii: "A"), symbol <= UInt8(ascii: "Z") {
                table[Int(symbol | 0x20)] = UInt8(value)
            }
        }
        return table
    }()

    /// Encodes bytes as unpadded upper-case Base32.
    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x1F)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes Base32 text; see the type's documentation for what is tolerated.
    public static func decode(_ text: some StringProtocol) throws(OneTimeCodeError) -> [UInt8] {
        var symbols: [UInt8] = []
        symbols.reserveCapacity(text.utf8.count)
        var sawPadding = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: " ") { continue }
            if byte == UInt8(ascii: "=") {
                sawPadding = true
                continue
            }
            let value = decodeTable[Int(byte)]
            guard value != 0xFF else {
                throw OneTimeCodeError(.invalidBase32, reason: "character outside the Base32 alphabet")
            }
            guard !sawPadding else {
                throw OneTimeCodeError(.invalidBase32, reason: "padding before the end of the text")
            }
            symbols.append(value)
        }
        // Symbols in a final partial group: 2 → 1 byte, 4 → 2, 5 → 3, 7 → 4. Others cannot come from bytes.
        switch symbols.count % 8 {
        case 1, 3, 6:
            throw OneTimeCodeError(.invalidBase32, reason: "length is not a whole number of bytes")
        default:
            break
        }
        var output: [UInt8] = []
        output.reserveCapacity(symbols.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        for value in symbols {
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        guard buffer == 0 else {
            throw OneTimeCodeError(.invalidBase32, reason: "unused trailing bits are not zero")
        }
        return output
    }
}
