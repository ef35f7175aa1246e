import CBOR
import Crypto
import CryptoExtras
import Foundation

/// A COSE algorithm identifier (IANA "COSE Algorithms" registry), as used in `pubKeyCredParams`,
/// COSE keys and attestation statements.
public struct COSEAlgorithm: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    /// ECDSA with SHA-256 on P-256.
    public static let es256 = COSEAlgorithm(-7)
    /// ECDSA with SHA-384 on P-384.
    public static let es384 = COSEAlgorithm(-35)
    /// ECDSA with SHA-512 on P-521.
    public static let es512 = COSEAlgorithm(-36)
    /// EdDSA; with WebAuthn keys the curve is Ed25519 (Ed448 is refused).
    public static let edDSA = COSEAlgorithm(-8)
    /// EdDSA on Ed25519, fully specified.
    public static let ed25519 = COSEAlgorithm(-19)
    /// EdDSA on Ed448, fully specified. Recognised so that it can be refused with a clear error.
    public static let ed448 = COSEAlgorithm(-53)
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    public static let rs256 = COSEAlgorithm(-257)
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    public static let rs384 = COSEAlgorithm(-258)
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    public static let rs512 = COSEAlgorithm(-259)
    /// RSASSA-PSS with SHA-256.
    public static let ps256 = COSEAlgorithm(-37)
    /// RSASSA-PSS with SHA-384.
    public static let ps384 = COSEAlgorithm(-38)
    /// RSASSA-PSS with SHA-512.
    public static let ps512 = COSEAlgorithm(-39)
    /// RSASSA-PKCS1-v1_5 with SHA-1. Accepted only with ``COSEKeyOptions/allowRS1``.
    public static let rs1 = COSEAlgorithm(-65535)
    /// ML-DSA-44 (FIPS 204), RFC 9964. Recognised so that it can be refused with a clear error: swift-crypto 4.5.2
    /// has no public ML-DSA-44 type (only `MLDSA65` and `MLDSA87`; BoringSSL's ML-DSA-44 is not exposed).
    public static let mldsa44 = COSEAlgorithm(-48)
    /// ML-DSA-65 (FIPS 204) with an AKP key, RFC 9964.
    public static let mldsa65 = COSEAlgorithm(-49)
    /// ML-DSA-87 (FIPS 204) with an AKP key, RFC 9964.
    public static let mldsa87 = COSEAlgorithm(-50)

    public var name: String {
        switch self {
        case .es256: "ES256"
        case .es384: "ES384"
        case .es512: "ES512"
        case .edDSA: "EdDSA"
        case .ed25519: "Ed25519"
        case .ed448: "Ed448"
        case .rs256: "RS256"
        case .rs384: "RS384"
        case .rs512: "RS512"
        case .ps256: "PS256"
        case .ps384: "PS384"
        case .ps512: "PS512"
        case .rs1: "RS1"
        case .mldsa44: "ML-DSA-44"
        case .mldsa65: "ML-DSA-65"
        case .mldsa87: "ML-DSA-87"
        default: "COSE(\(rawValue))"
        }
    }

    public var description: String { name }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// How strictly COSE keys are accepted.
public struct COSEKeyOptions: Sendable, Hashable {
    /// Accept RS1 (RSASSA-PKCS1-v1_5 with SHA-1). Off by default: SHA-1 signatures are forgeable in principle
    /// and only some TPM attestation statements still use them.
    public var allowRS1: Bool

    public init(allowRS1: Bool = false) {
        self.allowRS1 = allowRS1
    }
}

/// A credential public key in COSE_Key form (RFC 9052 §7, RFC 9053), restricted to what WebAuthn uses.
///
/// ```
/// COSE_Key = { 1 => kty, 3 => alg, * label => values }
/// EC2 (kty 2): -1 => crv (1 P-256, 2 P-384, 3 P-521), -2 => x bstr, -3 => y bstr   (uncompressed only)
/// OKP (kty 1): -1 => crv (6 Ed25519; 7 Ed448 is refused), -2 => x bstr
/// RSA (kty 3): -1 => n bstr, -2 => e bstr
/// AKP (kty 7, RFC 9964 "Algorithm Key Pair"): -1 => pub bstr (the FIPS 204 public key; alg -49 ML-DSA-65: 1952
///              bytes, alg -50 ML-DSA-87: 2592 bytes; alg -48 ML-DSA-44 is refused, see ``COSEAlgorithm/mldsa44``)
/// ```
/// The curve must match the algorithm (ES256 ⇔ P-256, ES384 ⇔ P-384, ES512 ⇔ P-521), EC points must lie on
/// the curve, and RSA moduli must be at least 2048 bits.
public struct COSEKey: Sendable, Hashable {
    public let algorithm: COSEAlgorithm
    /// The canonical COSE_Key encoding of this key.
    public let bytes: [UInt8]
    let key: Key

    enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
        case mldsa65(MLDSA65.PublicKey)
        case mldsa87(MLDSA87.PublicKey)
    }

    public static func == (lhs: COSEKey, rhs: COSEKey) -> Bool { lhs.bytes == rhs.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// Parses a COSE_Key from its CBOR bytes; trailing bytes are refused.
    public init(bytes: some Collection<UInt8>, options: COSEKeyOptions = .init()) throws(WebAuthnError) {
        let item: CBOR
        do {
            item = try CBORDecoder(options: .lenientMapOrder).decode(bytes)
        } catch {
            throw WebAuthnError(.invalidCOSEKey, detail: "COSE key is not valid CBOR (\(error.code))")
        }
        try self.init(cbor: item, options: options)
    }

    /// Builds a key from a decoded COSE_Key map.
    public init(cbor: CBOR, options: COSEKeyOptions = .init()) throws(WebAuthnError) {
        guard case .map = cbor else { throw WebAuthnError(.invalidCOSEKey, detail: "COSE key is not a map") }
        guard let kty = cbor[int: 1]?.int64 else {
            throw WebAuthnError(.invalidCOSEKey, detail: "COSE key has no integer kty (1)")
        }
        guard let algValue = cbor[int: 3]?.int, algValue != 0 else {
            throw WebAuthnError(.invalidCOSEKey, detail: "COSE key has no integer alg (3)")
        }
        let alg = COSEAlgorithm(algValue)
        switch kty {
        case 2:
            let crv = cbor[int: -1]?.int64
            guard let x = cbor[int: -2]?.bytes else {
                throw WebAuthnError(.invalidCOSEKey, detail: "EC2 key has no x coordinate")
            }
            guard let y = cbor[int: -3]?.bytes else {
                throw WebAuthnError(
                    .invalidCOSEKey, detail: "EC2 key has no y coordinate (compressed points are refused)")
            }
            let point = [0x04] + x + y
            do {
                switch (alg, crv) {
                case (.es256, 1) where x.count == 32 && y.count == 32:
                    key = .p256(try P256.Signing.PublicKey(x963Representation: point))
                case (.es384, 2) where x.count == 48 && y.count == 48:
                    key = .p384(try P384.Signing.PublicKey(x963Representation: point))
                case (.es512, 3) where x.count == 66 && y.count == 66:
                    key = .p521(try P521.Signing.PublicKey(x963Representation: point))
                case (.es256, _), (.es384, _), (.es512, _):
                    throw WebAuthnError(.invalidCOSEKey, detail: "EC2 curve or coordinate length does not match \(alg)")
                default:
                    throw WebAuthnError(.unsupportedAlgorithm, detail: "\(alg) with an EC2 key")
                }
            } catch let error as WebAuthnError {
                throw error
            } catch {
                throw WebAuthnError(.invalidCOSEKey, detail: "EC2 point is not on the curve")
            }
            bytes = CBOREncoder.encode(
                .map([
                    CBORMapEntry(1, 2), CBORMapEntry(3, CBOR(alg.rawValue)), CBORMapEntry(-1, CBOR(crv ?? 0)),
                    CBORMapEntry(-2, .byteString(x)), CBORMapEntry(-3, .byteString(y)),
                ]))
        case 1:
            let crv = cbor[int: -1]?.int64
            if crv == 7 || alg == .ed448 {
                throw WebAuthnError(.unsupportedAlgorithm, detail: "Ed448 is not supported")
            }
            guard alg == .edDSA || alg == .ed25519 else {
                throw WebAuthnError(.unsupportedAlgorithm, detail: "\(alg) with an OKP key")
            }
            guard crv == 6 else { throw WebAuthnError(.invalidCOSEKey, detail: "OKP key curve is not Ed25519") }
            guard let x = cbor[int: -2]?.bytes, x.count == 32 else {
                throw WebAuthnError(.invalidCOSEKey, detail: "Ed25519 key must have a 32-byte x")
            }
            do {
                key = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            } catch {
                throw WebAuthnError(.invalidCOSEKey, detail: "Ed25519 key is invalid")
            }
            bytes = CBOREncoder.encode(
                .map([
                    CBORMapEntry(1, 1), CBORMapEntry(3, CBOR(alg.rawValue)), CBORMapEntry(-1, 6),
                    CBORMapEntry(-2, .byteString(x)),
                ]))
        case 3:
            switch alg {
            case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512: break
            case .rs1 where options.allowRS1: break
            case .rs1: throw WebAuthnError(.unsupportedAlgorithm, detail: "RS1 needs an explicit opt-in")
            default: throw WebAuthnError(.unsupportedAlgorithm, detail: "\(alg) with an RSA key")
            }
            guard let n = cbor[int: -1]?.bytes, let e = cbor[int: -2]?.bytes, !n.isEmpty, !e.isEmpty,
                e.count <= 8
            else {
                throw WebAuthnError(.invalidCOSEKey, detail: "RSA key needs n (-1) and e (-2)")
            }
            do {
                key = .rsa(try _RSA.Signing.PublicKey(n: n, e: e))
            } catch {
                throw WebAuthnError(.invalidCOSEKey, detail: "RSA key is invalid or shorter than 2048 bits")
            }
            bytes = CBOREncoder.encode(
                .map([
                    CBORMapEntry(1, 3), CBORMapEntry(3, CBOR(alg.rawValue)), CBORMapEntry(-1, .byteString(n)),
                    CBORMapEntry(-2, .byteString(e)),
                ]))
        case 7:
            let pub = cbor[int: -1]?.bytes
            do {
                switch alg {
                case .mldsa65 where pub?.count == 1952:
                    key = .mldsa65(try MLDSA65.PublicKey(rawRepresentation: pub ?? []))
                case .mldsa87 where pub?.count == 2592:
                    key = .mldsa87(try MLDSA87.PublicKey(rawRepresentation: pub ?? []))
                case .mldsa65, .mldsa87:
                    throw WebAuthnError(.invalidCOSEKey, detail: "AKP key has no pub (-1) of the \(alg) size")
                case .mldsa44:
                    throw WebAuthnError(
                        .unsupportedAlgorithm,
                        detail: "ML-DSA-44 is not supported: swift-crypto 4.5.2 exposes only ML-DSA-65 and ML-DSA-87")
                default:
                    throw WebAuthnError(.unsupportedAlgorithm, detail: "\(alg) with an AKP key")
                }
            } catch let error as WebAuthnError {
                throw error
            } catch {
                throw WebAuthnError(.invalidCOSEKey, detail: "\(alg) public key is invalid")
            }
            bytes = CBOREncoder.encode(
                .map([
                    CBORMapEntry(1, 7), CBORMapEntry(3, CBOR(alg.rawValue)), CBORMapEntry(-1, .byteString(pub ?? [])),
                ]))
        default:
            if alg == .ed448 { throw WebAuthnError(.unsupportedAlgorithm, detail: "Ed448 is not supported") }
            throw WebAuthnError(.unsupportedAlgorithm, detail: "COSE key type \(kty)")
        }
        self.algorithm = alg
    }

    /// Verifies `signature` over `data` with this key and its algorithm. ECDSA signatures are ASN.1 DER
    /// (as WebAuthn authenticators produce them); RSA signatures are the raw octet string.
    public func verify(signature: [UInt8], over data: [UInt8]) throws(WebAuthnError) {
        guard isValidSignature(signature, over: data) else { throw WebAuthnError(.invalidSignature) }
    }

    public func isValidSignature(_ signature: [UInt8], over data: [UInt8]) -> Bool {
        switch key {
        case .p256(let k):
            guard let s = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return k.isValidSignature(s, for: data)
        case .p384(let k):
            guard let s = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return k.isValidSignature(s, for: data)
        case .p521(let k):
            guard let s = try? P521.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return k.isValidSignature(s, for: data)
        case .ed25519(let k):
            return k.isValidSignature(signature, for: data)
        case .rsa(let k):
            let s = _RSA.Signing.RSASignature(rawRepresentation: signature)
            switch algorithm {
            case .rs256: return k.isValidSignature(s, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
            case .rs384: return k.isValidSignature(s, for: SHA384.hash(data: data), padding: .insecurePKCS1v1_5)
            case .rs512: return k.isValidSignature(s, for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
            case .ps256: return k.isValidSignature(s, for: SHA256.hash(data: data), padding: .PSS)
            case .ps384: return k.isValidSignature(s, for: SHA384.hash(data: data), padding: .PSS)
            case .ps512: return k.isValidSignature(s, for: SHA512.hash(data: data), padding: .PSS)
            case .rs1: return k.isValidSignature(s, for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5)
            default: return false
            }
        case .mldsa65(let k):
            // Pure ML-DSA with the empty context, as authenticators sign (FIPS 204 §5.2).
            return k.isValidSignature(signature, for: data)
        case .mldsa87(let k):
            return k.isValidSignature(signature, for: data)
        }
    }

    /// The x and y coordinates of an EC2 key; nil for other key types.
    public var ec2Coordinates: (x: [UInt8], y: [UInt8])? {
        let point: [UInt8]
        switch key {
        case .p256(let k): point = Array(k.x963Representation)
        case .p384(let k): point = Array(k.x963Representation)
        case .p521(let k): point = Array(k.x963Representation)
        default: return nil
        }
        let half = (point.count - 1) / 2
        return (Array(point[1...half]), Array(point[(half + 1)...]))
    }

    /// The modulus and public exponent of an RSA key (big-endian, without leading zero bytes); nil for other key
    /// types.
    public var rsaComponents: (n: [UInt8], e: [UInt8])? {
        guard case .rsa(let k) = key, let primitives = try? k.getKeyPrimitives() else { return nil }
        func trimmed(_ data: Data) -> [UInt8] { Array(Array(data).drop { $0 == 0 }) }
        return (trimmed(primitives.modulus), trimmed(primitives.publicExponent))
    }

    /// The key as DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), to compare with a certificate's key or to
    /// fill `getPublicKey()`.
    public var subjectPublicKeyInfoDER: [UInt8] {
        switch key {
        case .p256(let k): return Array(k.derRepresentation)
        case .p384(let k): return Array(k.derRepresentation)
        case .p521(let k): return Array(k.derRepresentation)
        case .ed25519(let k):
            // SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING (0 unused bits) key } (RFC 8410 §4)
            return [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00] + Array(k.rawRepresentation)
        case .rsa(let k): return Array(k.derRepresentation)
        case .mldsa65(let k): return Self.mldsaSPKI(oidLast: 18, Array(k.rawRepresentation))
        case .mldsa87(let k): return Self.mldsaSPKI(oidLast: 19, Array(k.rawRepresentation))
        }
    }

    /// `SEQUENCE { SEQUENCE { OID 2.16.840.1.101.3.4.3.(18|19) }, BIT STRING (0 unused bits) pub }` (RFC 9881
    /// §4: no parameters), for ML-DSA-65 (…3.18) and ML-DSA-87 (…3.19).
    static func mldsaSPKI(oidLast: UInt8, _ pub: [UInt8]) -> [UInt8] {
        func length(_ count: Int) -> [UInt8] {
            count < 0x80
                ? [UInt8(count)]
                : count < 0x100 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
        }
        let algorithm: [UInt8] = [0x30, 0x0B, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, oidLast]
        let bitString = [0x03] + length(pub.count + 1) + [0x00] + pub
        let body = algorithm + bitString
        return [0x30] + length(body.count) + body
    }
}
