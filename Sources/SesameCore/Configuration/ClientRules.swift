import Foundation

/// The rules a client registration must meet, wherever it comes from (`sesame clients add`, dynamic
/// registration, or `clients` in the configuration file, which is checked when it is read).
package enum ClientRules {
    /// Checks a redirect URI a client registers: absolute, no fragment; `https`, or `http` on a loopback host
    /// (RFC 8252 §7.3), or a private-use scheme with a dot (RFC 8252 §7.1, reverse domain name).
    package static func registrable(_ uri: String) -> Bool {
        guard uri.count <= 2048, !uri.contains("#"), let url = URLComponents(string: uri),
            let scheme = url.scheme?.lowercased()
        else { return false }
        switch scheme {
        case "https": return !(url.host ?? "").isEmpty
        case "http": return isLoopback(url.host)
        default: return scheme.contains(".") && url.host == nil
        }
    }

    package static func isLoopback(_ host: String?) -> Bool {
        guard let host = host?.lowercased() else { return false }
        return host == "127.0.0.1" || host == "[::1]" || host == "::1" || host == "localhost"
    }

    /// The one sector all the URIs share, or nil when they name more than one.
    package static func sector(_ uris: [String]) -> String? {
        let sectors = Set(
            uris.compactMap { uri -> String? in
                guard let url = URLComponents(string: uri), let scheme = url.scheme?.lowercased() else { return nil }
                return url.host.map { $0.lowercased() } ?? scheme
            })
        return sectors.count == 1 ? sectors.first : nil
    }

    /// A byte of the base64url alphabet (RFC 4648 §5), without padding.
    package static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F
    }
}

/// The algorithms the identity provider signs ID tokens with.
package enum IDTokenAlgorithm: String, Sendable, CaseIterable, Codable {
    case es256 = "ES256"
    case rs256 = "RS256"
}
