import CBOR
import Crypto
import Foundation

/// A passkey's private key and what the authenticator does with it.
enum CredentialKey: Sendable {
    case es256(P256.Signing.PrivateKey)
    case edDSA(Curve25519.Signing.PrivateKey)

    static func generate(_ algorithm: PasskeyAlgorithm) -> CredentialKey {
        switch algorithm {
        case .es256: .es256(P256.Signing.PrivateKey())
        case .edDSA: .edDSA(Curve25519.Signing.PrivateKey())
        }
    }

    init(algorithm: PasskeyAlgorithm, privateKey: [UInt8]) throws(KeychainError) {
        do {
            switch algorithm {
            case .es256: self = .es256(try P256.Signing.PrivateKey(rawRepresentation: privateKey))
            case .edDSA: self = .edDSA(try Curve25519.Signing.PrivateKey(rawRepresentation: privateKey))
            }
        } catch {
            throw KeychainError(.invalidItem, reason: "the \(algorithm) private key is malformed")
        }
    }

    var algorithm: PasskeyAlgorithm {
        switch self {
        case .es256: .es256
        case .edDSA: .edDSA
        }
    }

    /// The 32-byte scalar (P-256) or seed (Ed25519).
    var rawPrivateKey: [UInt8] {
        switch self {
        case .es256(let k): Array(k.rawRepresentation)
        case .edDSA(let k): Array(k.rawRepresentation)
        }
    }

    /// Signs as WebAuthn §6.5.5 requires: ECDSA signatures DER-encoded, Ed25519 signatures raw.
    func sign(_ data: [UInt8]) throws(KeychainError) -> [UInt8] {
        do {
            switch self {
            case .es256(let k): return Array(try k.signature(for: data).derRepresentation)
            case .edDSA(let k): return Array(try k.signature(for: data))
            }
        } catch {
            throw KeychainError(.cryptoFailure, reason: "signing failed")
        }
    }

    /// The public key as a COSE_Key (RFC 9052 §7, RFC 9053) in CTAP2 canonical CBOR:
    /// ```
    /// EC2:  {1: 2, 3: -7, -1: 1 (P-256), -2: x (32 bytes), -3: y (32 bytes)}
    /// OKP:  {1: 1, 3: -8, -1: 6 (Ed25519), -2: x (32 bytes)}
    /// ```
    var coseKey: [UInt8] {
        let entries: [CBORMapEntry]
        switch self {
        case .es256(let k):
            let point = Array(k.publicKey.x963Representation)
            entries = [
                CBORMapEntry(1, 2), CBORMapEntry(3, CBOR(Int64(-7))), CBORMapEntry(CBOR(Int64(-1)), 1),
                CBORMapEntry(CBOR(Int64(-2)), .byteString(Array(point[1..<33]))),
                CBORMapEntry(CBOR(Int64(-3)), .byteString(Array(point[33..<65]))),
            ]
        case .edDSA(let k):
            entries = [
                CBORMapEntry(1, 1), CBORMapEntry(3, CBOR(Int64(-8))), CBORMapEntry(CBOR(Int64(-1)), 6),
                CBORMapEntry(CBOR(Int64(-2)), .byteString(Array(k.publicKey.rawRepresentation))),
            ]
        }
        return CBOREncoder.encode(.map(entries))
    }

    /// SubjectPublicKeyInfo DER (`getPublicKey()` in a browser).
    var subjectPublicKeyInfo: [UInt8] {
        switch self {
        case .es256(let k): Array(k.publicKey.derRepresentation)
        case .edDSA(let k): Self.ed25519SPKIPrefix + Array(k.publicKey.rawRepresentation)
        }
    }

    /// PKCS #8 `PrivateKeyInfo` DER, the form CXF carries passkey keys in.
    var pkcs8: [UInt8] {
        switch self {
        case .es256(let k): Array(k.derRepresentation)
        case .edDSA(let k): Self.ed25519PKCS8Prefix + Array(k.rawRepresentation)
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

    /// RFC 8410 §4: SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING }.
    static let ed25519SPKIPrefix: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]
    /// RFC 8410 §7: SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32) } }.
    static let ed25519PKCS8Prefix: [UInt8] = [
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
    ]
}
