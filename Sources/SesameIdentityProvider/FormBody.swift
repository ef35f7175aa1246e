import Foundation
import Hummingbird
import SesameCore

/// `application/x-www-form-urlencoded` parameters (the OAuth endpoints' request format, RFC 6749 Appendix B) from
/// a query string or a request body. A parameter given twice is an error (RFC 6749 §3.1: "MUST NOT be included
/// more than once"), recorded in `repeated` for the endpoint to refuse.
package struct FormParameters: Sendable {
    package private(set) var values: [String: String] = [:]
    package private(set) var repeated: Set<String> = []

    package static let maxBytes = 16 * 1024

    package init(_ encoded: Substring) {
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), !name.isEmpty else { continue }
            let value = parts.count == 2 ? Self.decode(parts[1]) ?? "" : ""
            if values[name] != nil { repeated.insert(name) }
            values[name] = value
        }
    }

    /// `+` is a space; `%XX` a byte; invalid UTF-8 or escapes make the parameter unreadable (nil).
    package static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    package subscript(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    /// The query of a request.
    package static func query(_ request: Request) -> FormParameters {
        FormParameters(Substring(request.uri.query ?? ""))
    }

    /// The body of a form POST (refused unless it is one and fits the limit).
    package static func body(_ request: Request) async throws -> FormParameters {
        guard let type = request.headers[.contentType]?.lowercased(),
            type.hasPrefix("application/x-www-form-urlencoded")
        else {
            throw OAuthError(.invalidRequest, "Send the parameters as application/x-www-form-urlencoded.")
        }
        var request = request
        let buffer = try await request.collectBody(upTo: maxBytes)
        return FormParameters(Substring(String(buffer: buffer)))
    }

    /// Encodes parameters for a query string (RFC 3986 unreserved characters kept).
    package static func encode(_ pairs: [(String, String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return pairs.map { name, value in
            "\(name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}
