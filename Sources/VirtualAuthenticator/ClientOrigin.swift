import Foundation
import WebAuthn

/// A web origin as the client sees the calling page: scheme, host and port.
///
/// The client only runs in a secure context (W3C WebAuthn Level 3 §5.1.3 step 3 via the `[SecureContext]` IDL
/// attribute): `https`, or `http` on a loopback host (`localhost`, `*.localhost`, `127.0.0.1`, `[::1]`), as browsers
/// treat those as potentially trustworthy.
struct ClientOrigin: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int?

    /// Parses an origin such as `https://example.com` or `http://localhost:8080`; a path, query, fragment or user
    /// part is refused, since an origin has none.
    init(_ text: String) throws(VirtualAuthenticatorError) {
        guard let c = URLComponents(string: text), let scheme = c.scheme?.lowercased(),
            let host = c.host?.lowercased(), !host.isEmpty,
            c.path.isEmpty || c.path == "/", c.query == nil, c.fragment == nil, c.user == nil, c.password == nil
        else { throw VirtualAuthenticatorError(.securityError, detail: "origin is not scheme://host[:port]") }
        guard scheme == "https" || scheme == "http" else {
            throw VirtualAuthenticatorError(.securityError, detail: "origin scheme must be https or http")
        }
        self.scheme = scheme
        self.host = host
        let defaultPort = scheme == "https" ? 443 : 80
        self.port = c.port == defaultPort ? nil : c.port
        if scheme == "http" && !isLoopback {
            throw VirtualAuthenticatorError(
                .securityError, detail: "http origins are only a secure context on loopback hosts")
        }
    }

    var isLoopback: Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "127.0.0.1" || host == "[::1]" || host == "::1"
    }

    var isIPAddress: Bool {
        host.hasPrefix("[") || host.contains(":") || host.split(separator: ".").allSatisfy { Int($0) != nil }
    }

    /// The ASCII serialisation (HTML "serialization of an origin"): default ports are omitted.
    var serialized: String {
        "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// The RP ID to use: `requested`, or the origin's host when absent. §5.1.3 step 8 / §5.1.4.1 step 7: the RP ID
    /// must be the host or a registrable domain suffix of it, else `SecurityError`.
    ///
    /// This client has no Public Suffix List; it refuses IP addresses, empty labels and single-label suffixes
    /// (`com`, `localhost` as a parent), which covers the cases tests make, but it would accept a multi-label
    /// public suffix such as `co.uk`.
    func relyingPartyId(_ requested: String?) throws(VirtualAuthenticatorError) -> String {
        guard !isIPAddress else {
            throw VirtualAuthenticatorError(.securityError, detail: "an IP address has no registrable domain")
        }
        guard let requested else { return host }
        let rpId = requested.lowercased()
        if rpId == host { return rpId }
        let labels = rpId.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }), host.hasSuffix("." + rpId) else {
            throw VirtualAuthenticatorError(
                .securityError, detail: "RP ID is not a registrable domain suffix of the origin's host")
        }
        return rpId
    }
}
