import SesameCore

/// Who may pass forward auth at which address: the `forwardAuthRules` setting (docs/integrations.md, "Access
/// rules"), a JSON list in the configuration file:
///
/// ```json
/// "forwardAuthRules": [
///   {"host": "router.example.org", "policy": "groups", "groups": ["admins"]},
///   {"host": "photos.example.org", "path": "/admin", "policy": "passkey"},
///   {"host": "photos.example.org", "policy": "signed-in"},
///   {"host": "*.example.org", "path": "/internal", "policy": "nobody"}
/// ]
/// ```
///
/// - `host`: a DNS name matched exactly, or `*.` and a name, matching every name below it (`a.example.org`,
///   `b.a.example.org`) but not the name itself. Every host must lie within `forwardAuthDomains`.
/// - `path` (optional, default `/`): a prefix matched segment by segment on the normalised path
///   (`ForwardAuthPath`): `/admin` matches `/admin`, `/admin/` and `/admin/x`, never `/administrator`.
/// - `policy`: `signed-in` (any signed-in person), `groups` (members of at least one of `groups`, read from the
///   store at every check), `passkey` (a session signed in with a passkey, `acr` `phr`), or `nobody`.
///
/// The first rule that matches decides. With no rules, every signed-in person passes (as before rules existed);
/// once there is one, an address no rule matches is refused, and so is a path that cannot be normalised
/// unambiguously. A rule that an earlier one shadows entirely (its host and path within the earlier rule's) could
/// never decide anything: it stops the start, since it is always a mistake in the order.
package struct ForwardAuthRule: Sendable, Equatable, Codable {
    package enum Policy: String, Sendable, Equatable, Codable, CaseIterable {
        case signedIn = "signed-in"
        case groups
        case passkey
        case nobody
    }

    package var host: String
    package var path: String?
    package var policy: String
    package var groups: [String]?

    package init(host: String, path: String? = nil, policy: Policy, groups: [String]? = nil) {
        self.host = host
        self.path = path
        self.policy = policy.rawValue
        self.groups = groups
    }
}

/// The checked rules, ready to match.
package struct ForwardAuthRules: Sendable, Equatable {
    package struct Rule: Sendable, Equatable {
        /// The exact host, or the parent name of a `*.` pattern.
        package let host: String
        package let wildcard: Bool
        /// The prefix's segments (`/admin/tools` → `["admin", "tools"]`; `/` → none).
        package let segments: [String]
        package let policy: ForwardAuthRule.Policy
        package let groups: [String]

        package func matchesHost(_ name: String) -> Bool {
            wildcard ? name.hasSuffix("." + host) : name == host
        }

        /// Whether every address this rule matches, `other` matches too.
        func covers(_ later: Rule) -> Bool {
            let hostCovered =
                wildcard
                ? (later.host == host ? later.wildcard : later.host.hasSuffix("." + host))
                : (!later.wildcard && later.host == host)
            return hostCovered && later.segments.starts(with: segments)
        }

        /// The rule as its configuration wrote it, for messages.
        var display: String {
            (wildcard ? "*." : "") + host + "/" + segments.joined(separator: "/")
        }
    }

    package let rules: [Rule]

    package static let none = ForwardAuthRules(rules: [])

    /// What a configuration that was never checked (and fails the check) gets: every address refused.
    package static let refuseAll = ForwardAuthRules(rules: [
        Rule(host: "", wildcard: false, segments: [], policy: .nobody, groups: [])
    ])

    package var isEmpty: Bool { rules.isEmpty }

    /// What a check at an address comes to before the session is looked at.
    package enum Match: Sendable, Equatable {
        /// No rules at all: any signed-in person.
        case unruled
        case rule(Rule)
        /// Rules exist and none matches, or the path cannot be normalised: refused whoever asks.
        case refused
    }

    package func match(host: String, path: String) -> Match {
        if rules.isEmpty { return .unruled }
        guard let segments = ForwardAuthPath.segments(path) else { return .refused }
        for rule in rules where rule.matchesHost(host) && segments.starts(with: rule.segments) {
            return .rule(rule)
        }
        return .refused
    }

    /// Checks the configured rules; `domains` are `forwardAuthDomains`. Messages name the rule by its position.
    package init(_ configured: [ForwardAuthRule], domains: [String]) throws(ConfigurationError) {
        var rules: [Rule] = []
        for (index, rule) in configured.enumerated() {
            let name = "forward-auth-rules[\(index)]"
            var host = rule.host
            let wildcard = host.hasPrefix("*.")
            if wildcard { host.removeFirst(2) }
            guard DomainName.isValid(host) else {
                throw ConfigurationError(
                    "\(name).host: \(rule.host.prefix(80)) is not a DNS name or *. and a DNS name (lowercase)")
            }
            guard domains.contains(where: { DomainName.covers($0, host: host) }) else {
                throw ConfigurationError("\(name).host: \(rule.host.prefix(80)) is not within forward-auth-domains")
            }
            guard let policy = ForwardAuthRule.Policy(rawValue: rule.policy) else {
                throw ConfigurationError(
                    "\(name).policy: \(rule.policy.prefix(40)) is not one of "
                        + ForwardAuthRule.Policy.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let path = rule.path ?? "/"
            guard path.hasPrefix("/"), !path.contains("?"), !path.contains("%"), !path.contains(";"),
                let segments = ForwardAuthPath.segments(path)
            else {
                throw ConfigurationError(
                    "\(name).path: \(path.prefix(80)) is not a plain path (starts with /, no ., .., //, %, ; or ?)")
            }
            let groups = rule.groups ?? []
            switch policy {
            case .groups:
                guard !groups.isEmpty else { throw ConfigurationError("\(name).groups: name at least one group") }
                for group in groups where !Self.isSlug(group) {
                    throw ConfigurationError(
                        "\(name).groups: \(group.prefix(64)) is not a group slug (lowercase letters, digits, -, _)")
                }
            default:
                guard rule.groups == nil else {
                    throw ConfigurationError("\(name).groups: only the groups policy names groups")
                }
            }
            let checked = Rule(host: host, wildcard: wildcard, segments: segments, policy: policy, groups: groups)
            if let earlier = rules.firstIndex(where: { $0.covers(checked) }) {
                throw ConfigurationError(
                    "\(name) (\(checked.display)) is shadowed by forward-auth-rules[\(earlier)] (\(rules[earlier].display)), "
                        + "which matches everything it does and comes first: put the narrower rule first")
            }
            rules.append(checked)
        }
        self.rules = rules
    }

    private init(rules: [Rule]) { self.rules = rules }

    /// Group slugs as rules name them: 1 to 64 of lowercase letters, digits, `-` and `_`. A name with capitals or
    /// other characters could only ever fail to match, so it is refused at start.
    package static func isSlug(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: "_")
            }
    }
}

/// The path of a proxied request as rules see it. Each `%XX` is decoded; the path is then split at `/` into
/// segments, each cut at its first `;` (a path parameter: some servers read `/admin;x` as `/admin`). It is refused
/// (nil: the check denies) when another reading is possible on the app's side:
/// - an encoded `/` or `\` (`%2F`, `%5C`, either case), an encoded `%` or `;`, `%00` or any control byte, or a
///   malformed escape: servers differ on whether they decode these before routing;
/// - a `.` or `..` segment, written plainly or encoded (`%2e`): servers differ on whether they resolve them;
/// - an empty segment (`//`) other than one trailing `/`: some servers merge slashes, others do not;
/// - a backslash, which some servers read as `/`.
/// The query (after `?`) is not part of the path.
package enum ForwardAuthPath {
    package static func segments(_ pathAndQuery: String) -> [String]? {
        let bytes = Array(pathAndQuery.utf8)
        let end = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        guard end > 0, bytes[0] == UInt8(ascii: "/") else { return nil }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(end)
        var index = 0
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < end,
                    let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { return nil }
                let value = high << 4 | low
                switch value {
                case UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: "%"), UInt8(ascii: ";"), UInt8(ascii: "?"),
                    UInt8(ascii: "#"):
                    return nil
                default: break
                }
                guard value >= 0x20, value != 0x7F else { return nil }
                decoded.append(value)
                index += 3
            } else {
                guard byte > 0x20, byte != 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                decoded.append(byte)
                index += 1
            }
        }
        if decoded == [UInt8(ascii: "/")] { return [] }
        var parts = decoded.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        // One trailing `/` names the same prefix; any other empty segment is refused below.
        if parts.last?.isEmpty == true { parts.removeLast() }
        var segments: [String] = []
        for part in parts {
            let cut = part.firstIndex(of: UInt8(ascii: ";")).map { part[..<$0] } ?? part
            guard !cut.isEmpty, let segment = String(validating: cut, as: UTF8.self),
                segment != ".", segment != ".."
            else { return nil }
            segments.append(segment)
        }
        return segments
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
