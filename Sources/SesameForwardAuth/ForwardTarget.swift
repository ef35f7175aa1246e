import SesameCore
/// The address a person asked for behind a reverse proxy: where forward auth sends them back after signing in.
///
/// It comes from two places, both read strictly by hand (no URL parser whose reading could differ from a
/// browser's):
/// - the proxy's `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-Uri` headers on `/forward-auth`;
/// - the `rd` parameter of `/forward-auth/return`: `scheme "://" host [":" port] [path-and-query] ["#" fragment]`.
///
/// The scheme is `http` or `https`; the host a lowercase DNS name (`DomainName`); the port 1…65535; the path starts
/// with `/` and holds only visible ASCII other than `\` and `#`, at most `maxPathLength` bytes. No user info, no IP
/// literal. Whether the host is one Sesame answers for is `ForwardAuthService`'s rule, not this type's.
package struct ForwardTarget: Sendable, Equatable {
    package let scheme: String
    package let host: String
    package let port: Int?
    /// Path and query, starting with `/`.
    package let path: String

    package static let maxPathLength = 2048

    /// `scheme://host[:port]`.
    package var origin: String { scheme + "://" + host + (port.map { ":\($0)" } ?? "") }
    package var url: String { origin + path }

    /// From the proxy's headers; a missing `X-Forwarded-Uri` is `/`.
    package init?(proto: String?, host: String?, uri: String?) {
        guard let proto = proto?.lowercased(), let host else { return nil }
        self.init(scheme: proto, authority: Substring(host), path: Substring(uri ?? "/"))
    }

    /// From an absolute URL (the `rd` parameter); a fragment is dropped.
    package init?(url: String) {
        guard let separator = url.range(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        var rest = url[separator.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let path = rest[end...]
        self.init(
            scheme: scheme, authority: rest[..<end], path: path.isEmpty ? "/" : path.first == "?" ? "/" + path : path)
    }

    private init?(scheme: String, authority: Substring, path: Substring) {
        guard scheme == "https" || scheme == "http" else { return nil }
        var host = authority.lowercased()
        var port: Int?
        if let colon = host.lastIndex(of: ":") {
            let digits = host[host.index(after: colon)...]
            guard (1...5).contains(digits.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let number = Int(digits),
                (1...65535).contains(number)
            else { return nil }
            port = number
            host = String(host[..<colon])
        }
        guard DomainName.isValid(host) else { return nil }
        guard path.first == "/", path.utf8.count <= Self.maxPathLength,
            path.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\\") && $0 != UInt8(ascii: "#") })
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = String(path)
    }
}
