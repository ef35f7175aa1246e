import Foundation

/// Unpadded base64url (RFC 4648 §5), the only binary encoding used in WebAuthn Level 3 JSON.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes without padding. (Straight from the bytes: a server encodes several values per request, and
    /// rewriting Foundation's standard base64 with string replacements cost more than the encoding.)
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= input.count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int(n >> 12 & 0x3f)])
            out.append(alphabet[Int(n >> 6 & 0x3f)])
            out.append(alphabet[Int(n & 0x3f)])
            i += 3
        }
        switch input.count - i {
        case 1:
            let n = UInt32(input[i]) << 16
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int(n >> 12 & 0x3f)])
        case 2:
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int(n >> 12 & 0x3f)])
            out.append(alphabet[Int(n >> 6 & 0x3f)])
        default: break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strict unpadded base64url. Padding (`=`), the standard alphabet's `+` and `/`, whitespace and
    /// non-zero trailing bits are refused with ``WebAuthnError/Code/invalidBase64URL``.
    public static func decode(_ string: String, field: String = "") throws(WebAuthnError) -> [UInt8] {
        let detail = field.isEmpty ? "" : "\(field) is not unpadded base64url"
        var values: [UInt8] = []
        values.reserveCapacity(string.utf8.count)
        for c in string.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = c - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "_"): v = 63
            default: throw WebAuthnError(.invalidBase64URL, detail: detail)
            }
            values.append(v)
        }
        if values.count % 4 == 1 { throw WebAuthnError(.invalidBase64URL, detail: detail) }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i + 4 <= values.count {
            let n =
                UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | UInt32(values[i + 2]) << 6
                | UInt32(values[i + 3])
            out.append(UInt8(truncatingIfNeeded: n >> 16))
            out.append(UInt8(truncatingIfNeeded: n >> 8))
            out.append(UInt8(truncatingIfNeeded: n))
            i += 4
        }
        switch values.count - i {
        case 2:
            guard values[i + 1] & 0x0f == 0 else { throw WebAuthnError(.invalidBase64URL, detail: detail) }
            out.append(values[i] << 2 | values[i + 1] >> 4)
        case 3:
            guard values[i + 2] & 0x03 == 0 else { throw WebAuthnError(.invalidBase64URL, detail: detail) }
            out.append(values[i] << 2 | values[i + 1] >> 4)
            out.append(values[i + 1] << 4 | values[i + 2] >> 2)
        default: break
        }
        return out
    }
}
