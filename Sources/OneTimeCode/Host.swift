/// DNS host names as the library accepts them in SMS bindings and `apple-otpauth:` issuers.
///
/// Accepted: ASCII letters, digits and hyphens in dot-separated labels of 1 to 63 characters, no label starting
/// or ending with a hyphen, 253 characters at most, no trailing dot. Internationalised names must be given in
/// their ASCII (Punycode) form. This is deliberately narrower than what a URL parser accepts: a host here ends up
/// in text that people and autofill read, and must name one site unambiguously.
enum Host {
    static func isValid(_ host: some StringProtocol) -> Bool {
        let bytes = Array(host.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        for label in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard (1...63).contains(label.count),
                label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
                label.allSatisfy(isLetterDigitHyphen)
            else { return false }
        }
        return true
    }

    private static func isLetterDigitHyphen(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
