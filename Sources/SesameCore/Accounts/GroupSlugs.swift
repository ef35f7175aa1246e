import Foundation

/// The rule for a group's slug, the name by which clients' allowed groups, forward-auth rules, invitations and the
/// `groups` claim refer to a group: 1 to 64 of ASCII lowercase letters, digits and `-`, starting with a letter. It
/// is checked, never repaired: `Family`, a Cyrillic `а` that looks like a Latin `a`, or a space is refused rather
/// than folded into some other group's name, so the slug an operator reads is the slug that is compared.
package enum GroupSlugs {
    /// The longest slug.
    package static let maximumLength = 64

    /// Whether `slug` follows the rule.
    package static func isValid(_ slug: String) -> Bool {
        let bytes = Array(slug.utf8)
        guard (1...maximumLength).contains(bytes.count), let first = bytes.first, isLetter(first) else {
            return false
        }
        return bytes.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") }
    }

    /// Why `slug` is refused, in words an operator can act on (nil when it follows the rule).
    package static func problem(_ slug: String) -> String? {
        guard !isValid(slug) else { return nil }
        let shown = String(slug.unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" })
        if slug.isEmpty { return "a group slug cannot be empty" }
        if slug.utf8.count > maximumLength { return "a group slug has at most \(maximumLength) characters" }
        if slug.unicodeScalars.contains(where: { !$0.isASCII }) {
            return "group slug \"\(shown)\" has a character outside ASCII; use a-z, 0-9 and -"
        }
        if slug.unicodeScalars.contains(where: { ("A"..."Z").contains($0) }) {
            return "group slug \"\(shown)\" has a capital letter; slugs are lowercase (a-z, 0-9 and -)"
        }
        return "group slug \"\(shown)\" must start with a letter and use only a-z, 0-9 and -"
    }

    /// A comma-separated list of slugs (`--allowed-groups family,admins`), each checked; empty items are refused.
    package static func list(_ text: String) -> (slugs: [String], problem: String?) {
        let slugs = text.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0).trimmingCharacters(in: .whitespaces)
        }
        for slug in slugs {
            if let problem = problem(slug) { return (slugs, problem) }
        }
        return (slugs, nil)
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
