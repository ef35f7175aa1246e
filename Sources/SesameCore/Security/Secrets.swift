import Crypto
import CryptoExtras
import Foundation
import WebAuthn
import SesameBytes

/// Random values, hashes and comparisons used for tokens, challenges and codes.
package enum Secrets {
    /// `count` bytes from the system CSPRNG.
    package static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    package static func sha256(_ bytes: some DataProtocol) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    package static func sha256(_ string: String) -> [UInt8] {
        sha256(Array(string.utf8))
    }

    package static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// A new opaque token: 32 random bytes as unpadded base64url (43 characters).
    package static func token() -> (token: String, hash: [UInt8]) {
        let token = Base64URL.encode(random(32))
        return (token, sha256(token))
    }
}
