import Crypto

/// A device's own key pair, made on the device and never leaving it: X25519, used with HPKE to receive the vault
/// key (from the device that approved it, or when another device rotates the key) and to authenticate the vault
/// keys this device wraps for others.
struct DeviceKey: Sendable {
    let privateKey: Curve25519.KeyAgreement.PrivateKey

    static func generate() -> DeviceKey { DeviceKey(privateKey: Curve25519.KeyAgreement.PrivateKey()) }

    init(privateKey: Curve25519.KeyAgreement.PrivateKey) { self.privateKey = privateKey }

    init(rawPrivateKey: [UInt8]) throws(KeychainError) {
        do {
            privateKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: rawPrivateKey)
        } catch {
            throw KeychainError(.corruptFile, reason: "device private key is malformed")
        }
    }

    var rawPrivateKey: [UInt8] { Array(privateKey.rawRepresentation) }
    var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }
    var fingerprint: KeyFingerprint { KeyFingerprint(publicKey: publicKey) }

    static func publicKey(_ raw: [UInt8]) throws(KeychainError) -> Curve25519.KeyAgreement.PublicKey {
        guard raw.count == 32, let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw) else {
            throw KeychainError(.malformedRecord, reason: "an X25519 public key is 32 bytes")
        }
        return key
    }
}
