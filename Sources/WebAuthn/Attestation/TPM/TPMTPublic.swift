/// `TPMT_PUBLIC` (TPM 2.0 Library Part 2 §12.2.4), the public area of a TPM object: WebAuthn's `pubArea`, which
/// describes the credential public key. RSA and ECC objects are accepted.
///
/// ```
/// TPMT_PUBLIC {
///   TPMI_ALG_PUBLIC   type;              // UINT16: TPM_ALG_RSA 0x0001 | TPM_ALG_ECC 0x0023
///   TPMI_ALG_HASH     nameAlg;           // UINT16: SHA1 0x0004 | SHA256 0x000B | SHA384 0x000C | SHA512 0x000D
///   TPMA_OBJECT       objectAttributes;  // UINT32
///   TPM2B_DIGEST      authPolicy;        // UINT16 size ‖ digest (at most 64 bytes)
///   TPMU_PUBLIC_PARMS parameters;        // by type, below
///   TPMU_PUBLIC_ID    unique;            // by type, below
/// }
/// RSA: TPMS_RSA_PARMS { TPMT_SYM_DEF_OBJECT symmetric; TPMT_RSA_SCHEME scheme; UINT16 keyBits; UINT32 exponent }
///      unique = TPM2B_PUBLIC_KEY_RSA (UINT16 size ‖ modulus, at most 512 bytes)
/// ECC: TPMS_ECC_PARMS { TPMT_SYM_DEF_OBJECT symmetric; TPMT_ECC_SCHEME scheme; UINT16 curveID; TPMT_KDF_SCHEME kdf }
///      unique = TPMS_ECC_POINT { TPM2B x; TPM2B y }   (each at most 66 bytes, P-521)
/// TPMT_SYM_DEF_OBJECT = UINT16 algorithm ‖ (unless TPM_ALG_NULL) UINT16 keyBits ‖ UINT16 mode
/// TPMT_*_SCHEME / TPMT_KDF_SCHEME = UINT16 scheme ‖ (unless TPM_ALG_NULL) UINT16 hashAlg
/// ```
/// An exponent of 0 means the default, 65537 (Part 2 §12.2.3.5). Every byte must be accounted for.
public struct TPMTPublic: Sendable, Hashable {
    public enum Parameters: Sendable, Hashable {
        /// `keyBits`, the exponent (0 already replaced by 65537) and the modulus from `unique`.
        case rsa(keyBits: UInt16, exponent: UInt32, modulus: [UInt8])
        /// `curveID` (TPM_ECC_NIST_P256 0x0003, P384 0x0004, P521 0x0005) and the point from `unique`.
        case ecc(curveID: UInt16, x: [UInt8], y: [UInt8])
    }

    /// The bytes as received: the Name is computed over them.
    public let bytes: [UInt8]
    public let type: TPMAlgorithm
    public let nameAlg: TPMAlgorithm
    public let objectAttributes: UInt32
    public let authPolicy: [UInt8]
    /// `parameters.symmetric.algorithm` (TPM_ALG_NULL for a signing key).
    public let symmetric: TPMAlgorithm
    /// `parameters.scheme.scheme`.
    public let scheme: TPMAlgorithm
    public let parameters: Parameters

    public static let curveP256: UInt16 = 0x0003
    public static let curveP384: UInt16 = 0x0004
    public static let curveP521: UInt16 = 0x0005

    public init(bytes: [UInt8]) throws(WebAuthnError) {
        self.bytes = bytes
        var reader = TPMReader(bytes, structure: "pubArea")
        type = TPMAlgorithm(rawValue: try reader.uint16("type"))
        nameAlg = TPMAlgorithm(rawValue: try reader.uint16("nameAlg"))
        guard nameAlg.digestSize != nil else {
            throw TPMReader.error("pubArea", "nameAlg \(nameAlg) is not a supported hash")
        }
        objectAttributes = try reader.uint32("objectAttributes")
        authPolicy = try reader.sized("authPolicy", maximum: 64)

        symmetric = TPMAlgorithm(rawValue: try reader.uint16("parameters.symmetric.algorithm"))
        if symmetric != .null {
            _ = try reader.uint16("parameters.symmetric.keyBits")
            _ = try reader.uint16("parameters.symmetric.mode")
        }
        scheme = TPMAlgorithm(rawValue: try reader.uint16("parameters.scheme.scheme"))
        if scheme != .null {
            _ = try reader.uint16("parameters.scheme.details.hashAlg")
        }

        switch type {
        case .rsa:
            let keyBits = try reader.uint16("parameters.keyBits")
            let exponent = try reader.uint32("parameters.exponent")
            let modulus = try reader.sized("unique.rsa", maximum: 512)
            parameters = .rsa(keyBits: keyBits, exponent: exponent == 0 ? 65537 : exponent, modulus: modulus)
        case .ecc:
            let curveID = try reader.uint16("parameters.curveID")
            let kdf = TPMAlgorithm(rawValue: try reader.uint16("parameters.kdf.scheme"))
            if kdf != .null {
                _ = try reader.uint16("parameters.kdf.details.hashAlg")
            }
            let x = try reader.sized("unique.ecc.x", maximum: 66)
            let y = try reader.sized("unique.ecc.y", maximum: 66)
            parameters = .ecc(curveID: curveID, x: x, y: y)
        default:
            throw TPMReader.error("pubArea", "type \(type) is neither TPM_ALG_RSA nor TPM_ALG_ECC")
        }
        try reader.finish()
    }
}
