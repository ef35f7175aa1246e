import Foundation
import WebAuthn

/// Byte encodings the client writes and reads. They are written here rather than shared with the relying-party
/// code on purpose: when the library and this client disagree about an encoding, the tests must see it.
enum ClientEncoding {
    /// Unpadded base64url (RFC 4648 §5).
    static func base64url(_ bytes: some Sequence<UInt8>) -> String {
        var s = Data(bytes).base64EncodedString()
        s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while s.hasSuffix("=") { s.removeLast() }
        return s
    }

    /// Base64url as a browser's `parseCreationOptionsFromJSON` reads it: the URL alphabet, padding optional.
    /// - Parameter code: what a malformed value is (`invalidOptions` in options, `invalidStore` in a stored file).
    static func decodeBase64url(
        _ string: String, field: String, code: VirtualAuthenticatorError.Code = .invalidOptions
    ) throws(VirtualAuthenticatorError) -> [UInt8] {
        var s = string
        if s.contains(where: { $0 == "+" || $0 == "/" }) {
            throw VirtualAuthenticatorError(code, detail: "\(field) is not base64url")
        }
        while s.hasSuffix("=") { s.removeLast() }
        s = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = s.utf8.count % 4
        if remainder == 1 { throw VirtualAuthenticatorError(code, detail: "\(field) is not base64url") }
        if remainder > 0 { s += String(repeating: "=", count: 4 - remainder) }
        guard let data = Data(base64Encoded: s) else {
            throw VirtualAuthenticatorError(code, detail: "\(field) is not base64url")
        }
        return Array(data)
    }
}
