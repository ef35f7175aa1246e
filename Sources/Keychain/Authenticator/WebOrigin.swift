/// The origin of the page asking for a passkey, as the trusted side (the browser, through the extension's
/// native host, or the person at the command line) states it. It is never taken from the options or from the
/// relying party's own word.
///
/// Accepted: `https://host[:port]`, or `http://host[:port]` on a loopback name (`localhost`, `*.localhost`),
/// which browsers also treat as secure contexts. The host must be a DNS name in ASCII (IDNs in their `xn--` form);
/// IP addresses are refused because they have no registrable domain to scope a passkey to. A default port is
/// dropped; a path, query, fragment or user part is refused since an origin has none.
public struct WebOrigin: Sendable, Hashable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int?

    public init(_ text: String) throws(KeychainError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= 300 else { throw KeychainError(.invalidOrigin, reason: "origin longer than 300 bytes") }
        let lower = text.lowercased()
        let scheme: String
        if lower.hasPrefix("https://") {
            scheme = "https"
        } else if lower.hasPrefix("http://") {
            scheme = "http"
        } else {
            throw KeychainError(.invalidOrigin, reason: "the origin's scheme must be https (or http on localhost)")
        }
        var rest = Substring(lower.dropFirst(scheme.count + 3))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains(where: { "/?#@[]\\ ".contains($0) }) else {
            throw KeychainError(.invalidOrigin, reason: "an origin is scheme://host[:port] with a DNS host name")
        }
        var port: Int?
        if let colon = rest.firstIndex(of: ":") {
            let digits = rest[rest.index(after: colon)...]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                digits.first != "0", let p = Int(digits), (1...65535).contains(p)
            else { throw KeychainError(.invalidOrigin, reason: "the origin's port is not 1 to 65535") }
            port = p
            rest = rest[..<colon]
        }
        let host = String(rest)
        guard DomainName.isValid(host) else {
            throw KeychainError(.invalidOrigin, reason: "the origin's host is not a DNS name in ASCII")
        }
        guard !host.split(separator: ".").allSatisfy({ $0.allSatisfy(\.isNumber) }) else {
            throw KeychainError(.invalidOrigin, reason: "an IP address has no registrable domain for a passkey")
        }
        if port == (scheme == "https" ? 443 : 80) { port = nil }
        self.scheme = scheme
        self.host = host
        self.port = port
        if scheme == "http" && !isLoopback {
            throw KeychainError(.invalidOrigin, reason: "http origins are only secure on localhost")
        }
    }

    var isLoopback: Bool { host == "localhost" || host.hasSuffix(".localhost") }

    /// The serialisation browsers put in client data: `https://example.com`, `http://localhost:8080`.
    public var description: String { "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "") }

    /// The RP ID for a request from this origin (W3C WebAuthn Level 3 §5.1.3 step 8, §5.1.4.1 step 7; HTML "is a
    /// registrable domain suffix of or is equal to"): `requested`, or the host when absent. It must be the host
    /// itself or a suffix of it that ends with the host's registrable domain, so never a public suffix. One
    /// stricter rule than browsers: an RP ID equal to a host that is itself a public suffix (`github.io` serving
    /// its own page) is refused too, except the loopback names used in development.
    public func relyingPartyId(_ requested: String?, suffixes: PublicSuffixList) throws(KeychainError) -> String {
        let rpId = (requested ?? host).lowercased()
        guard DomainName.isValid(rpId) else {
            throw KeychainError(.rpIdNotAllowed, reason: "the RP ID is not a DNS name in ASCII")
        }
        if rpId == host && isLoopback { return rpId }
        guard let registrable = suffixes.registrableDomain(of: host) else {
            throw KeychainError(.rpIdNotAllowed, reason: "the origin's host is a public suffix")
        }
        guard rpId == host || host.hasSuffix("." + rpId) else {
            throw KeychainError(.rpIdNotAllowed, reason: "the RP ID is not the origin's host or a suffix of it")
        }
        guard rpId == registrable || rpId.hasSuffix("." + registrable) else {
            throw KeychainError(.rpIdNotAllowed, reason: "the RP ID is a public suffix")
        }
        return rpId
    }
}
