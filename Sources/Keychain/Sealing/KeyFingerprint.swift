import Crypto
import SesameBytes

/// The fingerprint of an X25519 public key (a device's or a keychain's sharing key): SHA-256 over a label and
/// the key, shown as 16 Crockford Base32 characters in four groups (80 bits), e.g. `7QMX-P3K9-FHT2-RZC8`.
/// People compare it before trusting a key the server handed over.
public struct KeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(publicKey: [UInt8]) {
        bytes = Array(SHA256.hash(data: Domain.bytes(Domain.fingerprint) + publicKey))
    }

    /// The 80-bit text form.
    public var description: String {
        Crockford32.grouped(Crockford32.encode(bits: bytes, count: 80), size: 4)
    }

    /// Whether `text` (any case, separators optional) is this fingerprint's text form.
    public func matches(_ text: String) -> Bool {
        guard let values = Crockford32.values(text), values.count == 16,
            let typed = Crockford32.bits(values, count: 80)
        else { return false }
        return ConstantTime.equal(typed, Array(bytes.prefix(10)))
    }
}
