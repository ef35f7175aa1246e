import CBOR
import Crypto
import CryptoExtras
import Foundation

/// A credential private key and what an authenticator does with it: make it, store it, sign with it, and give its
/// public key as a COSE_Key and as SubjectPublicKeyInfo. Written once for the two authenticators of the package,
/// the keychain's (`Keychain`) and the test one (`VirtualAuthenticator`); each maps its own algorithm type and
/// errors onto this.
///
/// It does not use the `WebAuthn` library: what an authenticator writes is checked by the relying party's reader,
/// so the two are written apart and a bug in one is not mirrored by the other.
package enum CredentialKey: Sendable {
    case es256(P256.Signing.PrivateKey)
    case edDSA(Curve25519.Signing.PrivateKey)
    case rs256(_RSA.Signing.PrivateKey)
    case mldsa65(MLDSA65.PrivateKey)
    case mldsa87(MLDSA87.PrivateKey)

    /// The signature algorithms a key can be made for, by COSE identifier (IANA "COSE Algorithms" registry).
    package enum Algorithm: Int, Sendable, Hashable, CaseIterable {
        /// ECDSA over P-256 with SHA-256; signatures DER-encoded as WebAuthn requires.
        case es256 = -7
        /// EdDSA with Ed25519.
        case edDSA = -8
        /// RSASSA-PKCS1-v1_5 with SHA-256, 2048-bit keys.
        case rs256 = -257
        /// ML-DSA-65 (FIPS 204), pure, empty context; AKP COSE key (RFC 9964).
        case mldsa65 = -49
        /// ML-DSA-87 (FIPS 204), pure, empty context; AKP COSE key (RFC 9964).
        case mldsa87 = -50
    }

    /// A new key for `algorithm`, from the system's random source.
    package init(generating algorithm: Algorithm) throws(CredentialKeyError) {
        switch algorithm {
        case .es256: self = .es256(P256.Signing.PrivateKey())
        case .edDSA: self = .edDSA(Curve25519.Signing.PrivateKey())
        case .rs256:
            do {
                self = .rs256(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            } catch {
                throw CredentialKeyError(.generationFailed)
            }
        case .mldsa65, .mldsa87:
            do {
                self = algorithm == .mldsa65 ? .mldsa65(try MLDSA65.PrivateKey()) : .mldsa87(try MLDSA87.PrivateKey())
            } catch {
                throw CredentialKeyError(.generationFailed)
            }
        }
    }

    /// Rebuilds a key from ``privateKeyBytes`` (the stored form).
    package init(algorithm: Algorithm, privateKeyBytes: [UInt8]) throws(CredentialKeyError) {
        do {
            switch algorithm {
            case .es256: self = .es256(try P256.Signing.PrivateKey(rawRepresentation: privateKeyBytes))
            case .edDSA: self = .edDSA(try Curve25519.Signing.PrivateKey(rawRepresentation: privateKeyBytes))
            case .rs256: self = .rs256(try _RSA.Signing.PrivateKey(derRepresentation: privateKeyBytes))
            case .mldsa65: self = .mldsa65(try MLDSA65.PrivateKey(seedRepresentation: privateKeyBytes, publicKey: nil))
            case .mldsa87: self = .mldsa87(try MLDSA87.PrivateKey(seedRepresentation: privateKeyBytes, publicKey: nil))
            }
        } catch {
            throw CredentialKeyError(.malformedPrivateKey)
        }
    }

    package var algorithm: Algorithm {
        switch self {
        case .es256: .es256
        case .edDSA: .edDSA
        case .rs256: .rs256
        case .mldsa65: .mldsa65
        case .mldsa87: .mldsa87
        }
    }

    /// P-256 and Ed25519: the raw 32-byte scalar or seed; RSA: PKCS #1 DER; ML-DSA: the 32-byte seed (FIPS 204 ξ).
    package var privateKeyBytes: [UInt8] {
        switch self {
        case .es256(let k): Array(k.rawRepresentation)
        case .edDSA(let k): Array(k.rawRepresentation)
        case .rs256(let k): Array(k.derRepresentation)
        case .mldsa65(let k): Array(k.seedRepresentation)
        case .mldsa87(let k): Array(k.seedRepresentation)
        }
    }

    /// Signs `data` as the credential's algorithm prescribes (ECDSA signatures in ASN.1 DER, as WebAuthn §6.5.5
    /// requires; Ed25519, RSA and ML-DSA signatures raw).
    package func signature(for data: [UInt8]) throws(CredentialKeyError) -> [UInt8] {
        do {
            switch self {
            case .es256(let k): return Array(try k.signature(for: data).derRepresentation)
            case .edDSA(let k): return Array(try k.signature(for: data))
            case .rs256(let k): return Array(try k.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation)
            case .mldsa65(let k): return Array(try k.signature(for: data))
            case .mldsa87(let k): return Array(try k.signature(for: data))
            }
        } catch {
            throw CredentialKeyError(.signingFailed)
        }
    }

    /// The signature of an assertion, and of a packed self attestation: over
    /// `authenticatorData || SHA-256(clientDataJSON)` (§6.3.3 step 11, §8.2).
    package func signature(authenticatorData: [UInt8], clientDataJSON: [UInt8]) throws(CredentialKeyError) -> [UInt8] {
        try signature(for: authenticatorData + Array(SHA256.hash(data: clientDataJSON)))
    }

    /// The public key as a COSE_Key (RFC 9052 §7, RFC 9053), encoded in CTAP2 canonical CBOR.
    ///
    /// ```
    /// EC2:  {1: 2 (kty EC2), 3: -7, -1: 1 (crv P-256), -2: x (32 bytes), -3: y (32 bytes)}
    /// OKP:  {1: 1 (kty OKP), 3: -8, -1: 6 (crv Ed25519), -2: x (32 bytes)}
    /// RSA:  {1: 3 (kty RSA), 3: -257, -1: n (modulus, big-endian), -2: e (exponent, big-endian)}   (RFC 8230)
    /// AKP:  {1: 7 (kty AKP), 3: -49 | -50, -1: pub (the FIPS 204 public key)}                        (RFC 9964)
    /// ```
    package var coseKey: [UInt8] {
        let entries: [CBORMapEntry]
        switch self {
        case .es256(let k):
            let point = Array(k.publicKey.x963Representation)  // 0x04 || x || y
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
        case .rs256(let k):
            // getKeyPrimitives cannot fail for a key this type holds; fall back to empty fields defensively.
            let primitives = try? k.publicKey.getKeyPrimitives()
            entries = [
                CBORMapEntry(1, 3), CBORMapEntry(3, CBOR(Int64(-257))),
                CBORMapEntry(CBOR(Int64(-1)), .byteString(Self.unsignedBigEndian(primitives?.modulus ?? Data()))),
                CBORMapEntry(
                    CBOR(Int64(-2)), .byteString(Self.unsignedBigEndian(primitives?.publicExponent ?? Data()))),
            ]
        case .mldsa65(let k):
            entries = [
                CBORMapEntry(1, 7), CBORMapEntry(3, CBOR(Int64(-49))),
                CBORMapEntry(CBOR(Int64(-1)), .byteString(Array(k.publicKey.rawRepresentation))),
            ]
        case .mldsa87(let k):
            entries = [
                CBORMapEntry(1, 7), CBORMapEntry(3, CBOR(Int64(-50))),
                CBORMapEntry(CBOR(Int64(-1)), .byteString(Array(k.publicKey.rawRepresentation))),
            ]
        }
        return CBOREncoder.encode(.map(entries))
    }

    /// The public key as X.509 SubjectPublicKeyInfo DER, which browsers return as `getPublicKey()`.
    package var subjectPublicKeyInfo: [UInt8] {
        switch self {
        case .es256(let k): Array(k.publicKey.derRepresentation)
        case .edDSA(let k): Self.ed25519SPKIPrefix + Array(k.publicKey.rawRepresentation)
        case .rs256(let k): Array(k.publicKey.derRepresentation)
        case .mldsa65(let k): Self.mldsaSPKI(oidLast: 18, Array(k.publicKey.rawRepresentation))
        case .mldsa87(let k): Self.mldsaSPKI(oidLast: 19, Array(k.publicKey.rawRepresentation))
        }
    }

    /// RFC 8410 §4: SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING }, before the 32-byte Ed25519 key.
    package static let ed25519SPKIPrefix: [UInt8] = [
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
    ]

    /// RFC 9881 §4: `SEQUENCE { SEQUENCE { OID id-ml-dsa-65 (2.16.840.1.101.3.4.3.18) | id-ml-dsa-87 (….19) },
    /// BIT STRING pub }`. Written here, not taken from the WebAuthn library, so that the two are checked against
    /// each other. Both keys are longer than 255 bytes, so every length is the two-byte long form.
    private static func mldsaSPKI(oidLast: UInt8, _ pub: [UInt8]) -> [UInt8] {
        func long(_ count: Int) -> [UInt8] { [0x82, UInt8(count >> 8), UInt8(count & 0xFF)] }
        let algorithm: [UInt8] = [0x30, 0x0B, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, oidLast]
        let bitString: [UInt8] = [0x03] + long(pub.count + 1) + [0x00] + pub
        return [0x30] + long(algorithm.count + bitString.count) + algorithm + bitString
    }

    /// Big-endian integer bytes without leading zeros (COSE RSA parameters are unsigned).
    private static func unsignedBigEndian(_ data: Data) -> [UInt8] {
        let bytes = Array(data)
        guard let first = bytes.firstIndex(where: { $0 != 0 }) else { return bytes.isEmpty ? [] : [0] }
        return Array(bytes[first...])
    }
}

/// Why a ``CredentialKey`` operation failed. Never shown as it is: each authenticator turns it into its own
/// library's error (`KeychainError`, `VirtualAuthenticatorError`).
package struct CredentialKeyError: Error, Sendable, Hashable {
    package enum Reason: Sendable, Hashable {
        case generationFailed
        case malformedPrivateKey
        case signingFailed
    }

    package let reason: Reason

    package init(_ reason: Reason) { self.reason = reason }
}
