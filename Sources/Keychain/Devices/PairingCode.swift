import Crypto
import SesameBytes

/// The code a joining device shows, for the person to type into (or scan with) an enrolled device.
///
/// 20 Crockford Base32 characters in four groups of five (100 bits): 60 bits of the joining device's public key
/// fingerprint, then a 40-bit secret the joining device made and never sent anywhere.
/// - The fingerprint part lets the enrolled device pick the right join request and check that the server did not
///   swap the new device's key for its own (that would take a 2^60 search for a colliding key, while the request
///   waits).
/// - The secret part keys the approval (HPKE psk mode): only a device that saw the code can make an approval the
///   joining device accepts, so the server cannot hand the new device a vault of its own making. A forged approval
///   is a one-shot online guess: the joining device abandons the join after one bad approval.
///
/// The QR code holds `SESAME-KEYCHAIN-JOIN:` and the same 20 characters.
public struct PairingCode: Sendable, Hashable, CustomStringConvertible {
    static let fingerprintBits = 60
    static let secretBits = 40
    public static let qrPrefix = "SESAME-KEYCHAIN-JOIN:"

    let fingerprint: [UInt8]
    let secret: [UInt8]

    /// The code for a device's public key and secret.
    init(publicKey: [UInt8], secret: [UInt8]) {
        self.fingerprint = Self.fingerprint(publicKey)
        self.secret = secret
    }

    static func newSecret() -> [UInt8] { SecureRandom.bytes(5) }

    /// Reads a typed code or a scanned QR payload.
    public init(text: String) throws(KeychainError) {
        var body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if body.uppercased().hasPrefix(Self.qrPrefix) { body = String(body.dropFirst(Self.qrPrefix.count)) }
        guard let values = Crockford32.values(body), values.count == 20,
            let bits = Crockford32.bits(values, count: Self.fingerprintBits + Self.secretBits)
        else {
            throw KeychainError(.pairingCodeMalformed, reason: "a pairing code has 20 letters and digits")
        }
        // bits: 60 fingerprint bits then 40 secret bits, packed.
        fingerprint = Self.extract(bits, from: 0, count: Self.fingerprintBits)
        secret = Self.extract(bits, from: Self.fingerprintBits, count: Self.secretBits)
    }

    public var text: String {
        var packed = [UInt8](repeating: 0, count: 13)
        Self.insert(fingerprint, into: &packed, at: 0, count: Self.fingerprintBits)
        Self.insert(secret, into: &packed, at: Self.fingerprintBits, count: Self.secretBits)
        return Crockford32.grouped(Crockford32.encode(bits: packed, count: 100), size: 5)
    }

    public var description: String { text }

    public var qrPayload: String { Self.qrPrefix + text.replacingOccurrences(of: "-", with: "") }

    /// The first 12 characters of the code for `publicKey`'s device (`XXXXX-XXXXX-XX`): the 60 fingerprint bits,
    /// which an enrolled device can show from the join request alone.
    static func keyPart(_ publicKey: [UInt8]) -> String {
        let text = PairingCode(publicKey: publicKey, secret: [0, 0, 0, 0, 0]).text
        return String(text.prefix(14))
    }

    /// Whether `publicKey` is the key this code was made for (compared in constant time).
    func matches(publicKey: [UInt8]) -> Bool {
        ConstantTime.equal(Self.fingerprint(publicKey), fingerprint)
    }

    /// The HPKE pre-shared key for the approval of `request` from the device with `publicKey`.
    func psk(request: [UInt8], publicKey: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: Domain.bytes(Domain.joinPSK), info: request + publicKey,
            outputByteCount: 32)
    }

    /// The first 60 bits of SHA-256 over the pairing label and the key, in 8 bytes (low 4 bits zero).
    static func fingerprint(_ publicKey: [UInt8]) -> [UInt8] {
        let hash = Array(SHA256.hash(data: Domain.bytes(Domain.pairing) + publicKey))
        return extract(hash, from: 0, count: fingerprintBits)
    }

    private static func extract(_ bits: [UInt8], from start: Int, count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: (count + 7) / 8)
        for i in 0..<count where bits[(start + i) / 8] & (0x80 >> ((start + i) % 8)) != 0 {
            out[i / 8] |= 0x80 >> (i % 8)
        }
        return out
    }

    private static func insert(_ value: [UInt8], into bits: inout [UInt8], at start: Int, count: Int) {
        for i in 0..<count where value[i / 8] & (0x80 >> (i % 8)) != 0 {
            bits[(start + i) / 8] |= 0x80 >> ((start + i) % 8)
        }
    }
}

import Foundation
