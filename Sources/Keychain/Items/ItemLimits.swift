import Foundation

/// Size and character rules every item field obeys, so a planted or imported item cannot carry unbounded text
/// or characters that make one site look like another in a terminal.
public enum ItemLimits {
    /// Site names, user names, RP IDs, display names.
    public static let nameBytes = 1024
    /// Passwords.
    public static let passwordBytes = 4096
    /// Notes.
    public static let notesBytes = 16 * 1024
    /// Sites per item.
    public static let sites = 64

    /// Refuses empty or over-long text and control or format characters (bidirectional overrides, zero-width
    /// characters); notes may hold line breaks and tabs.
    static func checkText(
        _ text: String, field: String, maximum: Int = nameBytes, allowEmpty: Bool = false,
        allowLineBreaks: Bool = false
    ) throws(KeychainError) {
        guard allowEmpty || !text.isEmpty else {
            throw KeychainError(.invalidItem, reason: "\(field) is empty")
        }
        guard text.utf8.count <= maximum else {
            throw KeychainError(.invalidItem, reason: "\(field) is longer than \(maximum) bytes")
        }
        let forbidden: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator]
        for scalar in text.unicodeScalars where forbidden.contains(scalar.properties.generalCategory) {
            if allowLineBreaks && (scalar == "\n" || scalar == "\t") { continue }
            throw KeychainError(.invalidItem, reason: "\(field) contains a control or format character")
        }
    }
}

/// Site names as items keep them: a lower-case DNS name in its ASCII form, no scheme, path or port.
public enum SiteName {
    /// `example.com`, `https://example.com/login` or `Example.COM:443` all give `example.com`; nil when what is
    /// left is not a DNS name.
    public static func normalise(_ text: String) -> String? {
        var s = Substring(text.trimmingCharacters(in: .whitespaces))
        if let scheme = s.range(of: "://") { s = s[scheme.upperBound...] }
        if let end = s.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { s = s[..<end] }
        if let at = s.lastIndex(of: "@") { s = s[s.index(after: at)...] }
        if let colon = s.lastIndex(of: ":"), s[s.index(after: colon)...].allSatisfy(\.isNumber) { s = s[..<colon] }
        if s.hasSuffix(".") { s = s.dropLast() }
        let host = s.lowercased()
        return DomainName.isValid(host) ? host : nil
    }
}

/// DNS host names in ASCII: letters, digits and hyphens in dot-separated labels of 1 to 63 characters, no label
/// starting or ending with a hyphen, 253 characters at most.
enum DomainName {
    static func isValid(_ host: some StringProtocol) -> Bool {
        let bytes = Array(host.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        for label in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
                label.allSatisfy({ isLetterDigitHyphen($0) })
            else { return false }
        }
        return true
    }

    static func isLetterDigitHyphen(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
