import Crypto
import CryptoExtras
import Foundation
import WebAuthn
import SesameBytes

/// Random values, hashes and comparisons used for tokens, challenges and codes.
package enum Secrets {
    /// `count` bytes from the system CSPRNG.
    package static func random(_ count: Int) -> [UInt8] {
        SecureRandom.bytes(count)
    }

    /// Inlinable, so callers in feature modules get it specialised for their byte collection.
    @inlinable
    package static func sha256(_ bytes: some DataProtocol) -> [UInt8] {
        SHA256.hash(data: bytes).withUnsafeBytes { Array($0) }
    }

    package static func sha256(_ string: String) -> [UInt8] {
        sha256(Array(string.utf8))
    }

    /// The digest and the code are copied out through their bytes: `Array(_:)` over them as a `Sequence` made four
    /// heap allocations per call in a sign-in's heap profile, the bytes one.
    package static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        hmac(key: SymmetricKey(data: key), message)
    }

    /// HMAC-SHA-256 with a key made once (a caller that signs with one key often keeps the `SymmetricKey`).
    package static func hmac(key: SymmetricKey, _ message: [UInt8]) -> [UInt8] {
        HMAC<SHA256>.authenticationCode(for: message, using: key).withUnsafeBytes { Array($0) }
    }

    /// A new opaque token: 32 random bytes as unpadded base64url (43 characters).
    package static func token() -> (token: String, hash: [UInt8]) {
        let token = Base64URL.encode(random(32))
        return (token, sha256(token))
    }
}
