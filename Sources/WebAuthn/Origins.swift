/// The origins a relying party accepts in `clientDataJSON.origin` (and, for cross-origin use, `topOrigin`).
///
/// Two kinds are understood:
/// - web origins, written as a browser serialises them (HTML "ASCII serialization of an origin"):
///   `scheme "://" host [":" port]`, no path, query, fragment or user info. They match when scheme, host and port
///   are equal; a missing port stands for the scheme's default (443 for `https`, 80 for `http`), so
///   `https://example.org` and `https://example.org:443` are the same origin. Scheme and host compare
///   case-insensitively (ASCII), nothing else is normalised: `https://sub.example.org` is a different origin.
/// - Android app origins, `android:apk-key-hash:<base64url SHA-256 of the signing certificate>`, which match
///   exactly (the hash is case-sensitive).
public struct AllowedOrigins: Sendable, Hashable {
    /// The origins as configured, for display.
    public let origins: [String]
    private let parsed: Set<ParsedOrigin>
    /// The configured spellings, for the common case where the client data spells the origin the same way.
    private let exact: Set<String>

    /// Parses every origin; an origin that is not in one of the two forms above is a configuration error.
    public init(_ origins: [String]) throws(WebAuthnError) {
        var set = Set<ParsedOrigin>()
        for origin in origins {
            guard let p = ParsedOrigin(origin) else {
                throw WebAuthnError(
                    .invalidConfiguration,
                    detail: "origin \"\(origin)\" is not scheme://host[:port] or android:apk-key-hash:<hash>")
            }
            set.insert(p)
        }
        guard !set.isEmpty else { throw WebAuthnError(.invalidConfiguration, detail: "no allowed origins") }
        self.origins = origins
        self.parsed = set
        self.exact = Set(origins)
    }

    /// The hosts of the web origins (Android app origins have none).
    var webHosts: [String] {
        parsed.compactMap { if case .web(_, let host, _) = $0 { host } else { nil } }
    }

    /// Whether `origin`, as found in client data, is one of the allowed origins.
    public func contains(_ origin: String) -> Bool {
        if exact.contains(origin) { return true }  // every configured origin parsed, so this one is valid
        guard let p = ParsedOrigin(origin) else { return false }
        return parsed.contains(p)
    }
}

/// One origin in comparable form.
enum ParsedOrigin: Hashable, Sendable {
    case web(scheme: String, host: String, port: Int)
    case android(keyHash: String)

    static let androidPrefix = "android:apk-key-hash:"

    init?(_ text: String) {
        if text.hasPrefix(Self.androidPrefix) {
            let hash = String(text.dropFirst(Self.androidPrefix.count))
            // The hash must itself be strict base64url of a SHA-256 value.
            guard let bytes = try? Base64URL.decode(hash), bytes.count == 32 else { return nil }
            self = .android(keyHash: hash)
            return
        }
        guard text.utf8.count <= 2048, let sep = text.range(of: "://") else { return nil }
        let scheme = text[..<sep.lowerBound].lowercased()
        guard !scheme.isEmpty,
            scheme.utf8.allSatisfy({
                ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2b || $0 == 0x2d || $0 == 0x2e
            })
        else { return nil }
        let authority = text[sep.upperBound...]
        // No path, query, fragment or user info: a serialised origin has none.
        guard !authority.isEmpty, !authority.contains(where: { "/?#@\\ ".contains($0) }) else { return nil }
        var host = Substring(authority)
        var port: Int
        switch scheme {
        case "https": port = 443
        case "http": port = 80
        default: port = -1
        }
        if host.hasPrefix("[") {
            // IPv6 literal: "[" address "]" [":" port]
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[...close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let p = Self.port(rest.dropFirst()) else { return nil }
                port = p
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Self.port(host[host.index(after: colon)...]) else { return nil }
            port = p
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains(":") || host.hasPrefix("[") else { return nil }
        self = .web(scheme: scheme, host: host.lowercased(), port: port)
    }

    private static func port(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.count <= 5, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let p = Int(s), p <= 65535
        else { return nil }
        return p
    }
}
