/// The Public Suffix List (https://publicsuffix.org/list/), read from Debian's `publicsuffix` package
/// (`/usr/share/publicsuffix/public_suffix_list.dat`), for checking RP IDs the way browsers do.
///
/// File format, as the list's documentation defines it: UTF-8 text, one rule per line; a line is read up to its
/// first whitespace; lines starting with `//` are comments; a rule is a domain in dot-separated labels, optionally
/// with a leading `*.` (wildcard: any one label in its place) or a leading `!` (exception to a wildcard). Both the
/// ICANN and the private sections are used, as browsers do.
///
/// The parser is strict about what it keeps: a rule with an empty label, a `*` anywhere but as the whole first
/// label, an exception with a wildcard, a label longer than 63 bytes, or characters other than letters, digits and
/// hyphens (after Punycode conversion of Unicode labels) makes the whole file `invalidPublicSuffixList` with its
/// line number, rather than a silently partial list. Sizes are bounded.
///
/// Lookup follows the list's algorithm: the prevailing rule is a matching exception if any (with its first label
/// removed), else the matching rule with the most labels, else `*` (the last label).
public struct PublicSuffixList: Sendable {
    public static let defaultPath = "/usr/share/publicsuffix/public_suffix_list.dat"
    static let maximumSize = 8 * 1024 * 1024
    static let maximumRules = 200_000

    private let rules: Set<String>
    private let wildcards: Set<String>
    private let exceptions: Set<String>

    public var count: Int { rules.count + wildcards.count + exceptions.count }

    public init(bytes: [UInt8]) throws(KeychainError) {
        guard bytes.count <= Self.maximumSize else {
            throw KeychainError(.invalidPublicSuffixList, reason: "larger than \(Self.maximumSize) bytes")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw KeychainError(.invalidPublicSuffixList, reason: "not UTF-8")
        }
        var rules = Set<String>()
        var wildcards = Set<String>()
        var exceptions = Set<String>()
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.prefix { $0 != " " && $0 != "\t" && $0 != "\r" }
            if line.isEmpty || line.hasPrefix("//") { continue }
            guard rules.count + wildcards.count + exceptions.count < Self.maximumRules else {
                throw KeychainError(.invalidPublicSuffixList, reason: "more than \(Self.maximumRules) rules")
            }
            var body = Substring(line)
            let isException = body.hasPrefix("!")
            if isException { body = body.dropFirst() }
            var labels = body.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let isWildcard = labels.first == "*"
            if isWildcard { labels.removeFirst() }
            guard !(isException && isWildcard), !labels.isEmpty else {
                throw KeychainError(.invalidPublicSuffixList, reason: "line \(lineNumber): malformed rule")
            }
            var ascii: [String] = []
            for label in labels {
                guard !label.isEmpty, label != "*", let converted = Punycode.asciiLabel(label.lowercased()),
                    (1...63).contains(converted.utf8.count), converted.utf8.allSatisfy(DomainName.isLetterDigitHyphen)
                else {
                    throw KeychainError(.invalidPublicSuffixList, reason: "line \(lineNumber): malformed label")
                }
                ascii.append(converted.lowercased())
            }
            let rule = ascii.joined(separator: ".")
            guard rule.utf8.count <= 253 else {
                throw KeychainError(.invalidPublicSuffixList, reason: "line \(lineNumber): rule longer than 253 bytes")
            }
            if isException {
                guard ascii.count >= 2 else {
                    throw KeychainError(.invalidPublicSuffixList, reason: "line \(lineNumber): exception for a TLD")
                }
                exceptions.insert(rule)
            } else if isWildcard {
                wildcards.insert(rule)
            } else {
                rules.insert(rule)
            }
        }
        guard !(rules.isEmpty && wildcards.isEmpty) else {
            throw KeychainError(.invalidPublicSuffixList, reason: "no rules")
        }
        self.rules = rules
        self.wildcards = wildcards
        self.exceptions = exceptions
    }

    /// Reads the list from `path`; a missing or unreadable file is `publicSuffixListUnavailable` (the keychain
    /// then refuses to sign rather than guess).
    public static func load(path: String = defaultPath) throws(KeychainError) -> PublicSuffixList {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, maximumSize: maximumSize)
        } catch {
            throw KeychainError(
                .publicSuffixListUnavailable, reason: "cannot read \(path) (Debian package publicsuffix)")
        }
        guard let bytes else {
            throw KeychainError(
                .publicSuffixListUnavailable, reason: "\(path) is missing (install the Debian package publicsuffix)")
        }
        return try PublicSuffixList(bytes: bytes)
    }

    /// The public suffix of a lower-case ASCII domain name.
    public func publicSuffix(of domain: String) -> String {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !labels.isEmpty else { return domain }
        var longest = 1  // the implicit "*" rule
        for start in 0..<labels.count {
            let suffix = labels[start...].joined(separator: ".")
            if exceptions.contains(suffix) {
                return labels[(start + 1)...].joined(separator: ".")
            }
            let length = labels.count - start
            if rules.contains(suffix) { longest = max(longest, length) }
            if start + 1 < labels.count, wildcards.contains(labels[(start + 1)...].joined(separator: ".")) {
                longest = max(longest, length)
            }
        }
        return labels[(labels.count - longest)...].joined(separator: ".")
    }

    /// Whether `domain` is itself a public suffix (`com`, `co.uk`, `github.io`, an unlisted TLD).
    public func isPublicSuffix(_ domain: String) -> Bool { publicSuffix(of: domain) == domain }

    /// The registrable domain (the public suffix plus one label), or nil when `domain` is a public suffix.
    public func registrableDomain(of domain: String) -> String? {
        let suffix = publicSuffix(of: domain)
        guard suffix != domain else { return nil }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        let suffixCount = suffix.split(separator: ".", omittingEmptySubsequences: false).count
        return labels[(labels.count - suffixCount - 1)...].joined(separator: ".")
    }
}
