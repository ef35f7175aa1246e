import WebAuthn

/// A keychain's sharing identity as others see it: an X25519 public key, the same on all devices of one vault.
/// People exchange it as text (`sesame-share:` and the key in base64url) and compare its fingerprint before
/// sharing anything to it, because the server could otherwise hand over a key of its own.
public struct SharingKey: Sendable, Hashable, CustomStringConvertible {
    public static let prefix = "sesame-share:"
    public let publicKey: [UInt8]

    public init(publicKey: [UInt8]) throws(KeychainError) {
        _ = try DeviceKey.publicKey(publicKey)
        self.publicKey = publicKey
    }

    public init(text: String) throws(KeychainError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix),
            let bytes = try? Base64URL.decode(String(trimmed.dropFirst(Self.prefix.count))),
            bytes.count == 32
        else {
            throw KeychainError(
                .invalidSharingKey, reason: "a sharing key is sesame-share: and 43 base64url characters")
        }
        try self.init(publicKey: bytes)
    }

    public var text: String { Self.prefix + Base64URL.encode(publicKey) }
    public var description: String { text }
    public var fingerprint: KeyFingerprint { KeyFingerprint(publicKey: publicKey) }
}

import Foundation
