import Crypto
import Foundation
import WebAuthn
import SesameCore

/// The value of the host-only cookie Sesame sets on an app's own host (`sesame_forward`, see `Cookies`) after a
/// one-time code exchange: the session's token hash sealed with AES-256-GCM under a key derived from the server
/// secret (HKDF-SHA256, info `sesame forward-auth cookie v1`), the app's origin as associated data.
///
/// Layout (base64url, unpadded): `nonce (12) | ciphertext (32) | tag (16)`, 80 characters.
///
/// So the value names no session (the app behind the proxy sees its cookies, and learns nothing it could use at
/// Sesame), works only for the origin it was made for (a copy taken to another app fails the tag check), and lives
/// exactly as long as the session it stands for: forward auth looks the session up on every check, so signing out
/// of Sesame or revoking the session ends it.
package struct ForwardAuthCookie: Sendable {
    private let key: SymmetricKey

    package static let encodedLength = 80

    package init(serverSecret: [UInt8]) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: serverSecret), info: Array("sesame forward-auth cookie v1".utf8),
            outputByteCount: 32)
    }

    private static func associatedData(_ origin: String) -> [UInt8] {
        Array("sesame-forward-auth\u{0}".utf8) + Array(origin.utf8)
    }

    package func seal(tokenHash: [UInt8], origin: String) throws -> String {
        let box = try AES.GCM.seal(tokenHash, using: key, authenticating: Self.associatedData(origin))
        guard let combined = box.combined else { throw APIError.internalError }
        return Base64URL.encode(Array(combined))
    }

    /// The token hash, if `value` is a cookie this server sealed for `origin`; nil for anything else.
    package func open(_ value: String, origin: String) -> [UInt8]? {
        guard value.utf8.count == Self.encodedLength, let bytes = try? Base64URL.decode(value),
            let box = try? AES.GCM.SealedBox(combined: bytes),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Self.associatedData(origin)),
            plain.count == 32
        else { return nil }
        return Array(plain)
    }
}
