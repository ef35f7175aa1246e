import Foundation
import WebAuthn
import SesameCore
import SesameBytes

/// A keychain device token: what `POST /api/keychain/enrollments` hands a device once, and what the device sends as
/// `Authorization: Bearer <token>` on every sync call.
///
/// ```
/// token  = base64url(id || secret)     64 characters, unpadded
/// id     = 16 random bytes             the enrollment's public ID (base64url, 22 characters)
/// secret = 32 random bytes             stored only as SHA-256(secret)
/// ```
///
/// The server finds the enrollment by its ID and compares SHA-256(secret) with the stored hash in constant time, so
/// neither the database nor the timing of a lookup answers "how much of the secret was right". A session token is
/// 43 characters and never parses as a device token (nor the reverse), so one cannot stand in for the other.
package struct KeychainDeviceToken: Sendable {
    package static let idLength = 16
    package static let secretLength = 32

    package let id: String
    package let secret: [UInt8]

    /// A new token: its text (given out once), the enrollment ID and the hash to store.
    package static func issue() -> (token: String, id: String, hash: [UInt8]) {
        let id = Secrets.random(idLength)
        let secret = Secrets.random(secretLength)
        return (Base64URL.encode(id + secret), Base64URL.encode(id), Secrets.sha256(secret))
    }

    /// Parses a presented token; nil unless it is exactly 64 base64url characters of 48 bytes.
    package init?(_ text: String) {
        guard text.utf8.count == 64, let bytes = try? Base64URL.decode(text),
            bytes.count == Self.idLength + Self.secretLength
        else { return nil }
        id = Base64URL.encode(Array(bytes.prefix(Self.idLength)))
        secret = Array(bytes.suffix(Self.secretLength))
    }

    /// Whether this token's secret is the one whose hash was stored.
    package func matches(storedHash: [UInt8]) -> Bool {
        ConstantTime.equal(Secrets.sha256(secret), storedHash)
    }
}
