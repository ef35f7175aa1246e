import AuthenticatorSigning
import Crypto

/// A passkey's private key: the package's one credential key type (`AuthenticatorSigning`, shared with the
/// virtual authenticator). The extension below gives the keychain's terms for it: its two algorithms, its errors,
/// and PKCS #8 for CXF.
typealias CredentialKey = AuthenticatorSigning.CredentialKey

extension CredentialKey {
    static func generate(_ algorithm: PasskeyAlgorithm) -> CredentialKey {
        switch algorithm {
        case .es256: .es256(P256.Signing.PrivateKey())
        case .edDSA: .edDSA(Curve25519.Signing.PrivateKey())
        }
    }

    init(algorithm: PasskeyAlgorithm, privateKey: [UInt8]) throws(KeychainError) {
        do {
            try self.init(algorithm: Algorithm(algorithm), privateKeyBytes: privateKey)
        } catch {
            throw KeychainError(.invalidItem, reason: "the \(algorithm) private key is malformed")
        }
    }

    /// The keychain's algorithm for this key; nil for algorithms the keychain never makes keys with.
    var passkeyAlgorithm: PasskeyAlgorithm? { PasskeyAlgorithm(rawValue: algorithm.rawValue) }

    /// The 32-byte scalar (P-256) or seed (Ed25519).
    var rawPrivateKey: [UInt8] { privateKeyBytes }

    /// The assertion signature over `authenticatorData || SHA-256(clientDataJSON)` (§6.3.3 step 11): ECDSA
    /// signatures DER-encoded, Ed25519 signatures raw (§6.5.5).
    func assertionSignature(authenticatorData: [UInt8], clientDataJSON: [UInt8]) throws(KeychainError) -> [UInt8] {
        do {
            return try signature(authenticatorData: authenticatorData, clientDataJSON: clientDataJSON)
        } catch {
            throw KeychainError(.cryptoFailure, reason: "signing failed")
        }
    }

    /// PKCS #8 `PrivateKeyInfo` DER, the form CXF carries passkey keys in (P-256 and Ed25519 only).
    var pkcs8: [UInt8]? {
        switch self {
        case .es256(let k): Array(k.derRepresentation)
        case .edDSA(let k): Self.ed25519PKCS8Prefix + Array(k.rawRepresentation)
        case .rs256, .mldsa65, .mldsa87: nil
        }
    }

    /// Reads a PKCS #8 key: P-256 ECDSA (any form swift-crypto reads, with or without the public key) or
    /// Ed25519 (RFC 8410 §7, exactly the 48-byte form). Anything else is nil.
    init?(pkcs8 der: [UInt8]) {
        if der.count == 48, der.starts(with: Self.ed25519PKCS8Prefix),
            let k = try? Curve25519.Signing.PrivateKey(rawRepresentation: der[16...])
        {
            self = .edDSA(k)
        } else if let k = try? P256.Signing.PrivateKey(derRepresentation: der) {
            self = .es256(k)
        } else {
            return nil
        }
    }

    /// RFC 8410 §7: SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32) } }.
    static let ed25519PKCS8Prefix: [UInt8] = [
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
    ]
}

extension CredentialKey.Algorithm {
    init(_ algorithm: PasskeyAlgorithm) {
        switch algorithm {
        case .es256: self = .es256
        case .edDSA: self = .edDSA
        }
    }
}
