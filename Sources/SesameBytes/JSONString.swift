/// JSON string literals (RFC 8259 §7), written once for every JSON the package writes by hand.
package enum JSONString {
    /// How code points below U+0020 are escaped.
    package enum ControlEscapes: Sendable {
        /// `\n`, `\r` and `\t` for those three, `\u00xx` for the rest: the common JSON form.
        case short
        /// `\u00xx` for all of them, as W3C WebAuthn Level 3 §5.8.1.1 (CCDToString) writes client data.
        case unicode
    }

    /// `s` between quotes, with `"` and `\` escaped, code points below U+0020 escaped as `controls` says, and
    /// everything else as it is (UTF-8 once encoded).
    package static func quoted(_ s: String, controls: ControlEscapes = .short) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n" where controls == .short: out += "\\n"
            case "\r" where controls == .short: out += "\\r"
            case "\t" where controls == .short: out += "\\t"
            case _ where scalar.value < 0x20: out += "\\u00" + Hex.encode([UInt8(scalar.value)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
