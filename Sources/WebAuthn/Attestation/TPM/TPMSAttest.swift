/// `TPMS_ATTEST` (TPM 2.0 Library Part 2 §10.12.12), the structure a TPM signs in `TPM2_Certify`: WebAuthn's
/// `certInfo`. Only the certify form is accepted (`type` = `TPM_ST_ATTEST_CERTIFY`), as W3C WebAuthn §8.3 requires.
///
/// ```
/// TPMS_ATTEST {
///   TPM_GENERATED        magic;            // UINT32, 0xFF544347 ("\xFFTCG")
///   TPMI_ST_ATTEST       type;             // UINT16, 0x8017 TPM_ST_ATTEST_CERTIFY
///   TPM2B_NAME           qualifiedSigner;  // UINT16 size ‖ name
///   TPM2B_DATA           extraData;        // UINT16 size ‖ data (the caller's nonce)
///   TPMS_CLOCK_INFO      clockInfo;        // UINT64 clock ‖ UINT32 resetCount ‖ UINT32 restartCount ‖ BYTE safe
///   UINT64               firmwareVersion;
///   TPMU_ATTEST          attested;         // for CERTIFY: TPMS_CERTIFY_INFO
/// }
/// TPMS_CERTIFY_INFO { TPM2B_NAME name; TPM2B_NAME qualifiedName; }
/// ```
/// Every byte must be accounted for; a `TPM2B_NAME` holds at most a 2-byte hash algorithm and a 64-byte digest
/// (`sizeof(TPMU_NAME)`), a `TPM2B_DATA` at most `sizeof(TPMT_HA)`, the same 66 bytes.
public struct TPMSAttest: Sendable, Hashable {
    /// `TPM_GENERATED_VALUE`: the TPM made this structure itself.
    public static let generatedValue: UInt32 = 0xFF54_4347
    /// `TPM_ST_ATTEST_CERTIFY`.
    public static let attestCertify: UInt16 = 0x8017
    /// `sizeof(TPMU_NAME)` and `sizeof(TPMT_HA)`: a 2-byte algorithm and the largest digest (SHA-512).
    static let maximumNameSize = 66

    public let magic: UInt32
    public let type: UInt16
    public let qualifiedSigner: [UInt8]
    public let extraData: [UInt8]
    public let clock: UInt64
    public let resetCount: UInt32
    public let restartCount: UInt32
    public let safe: UInt8
    public let firmwareVersion: UInt64
    /// `attested.name`: the Name of the certified object, `nameAlg ‖ H(pubArea)`.
    public let attestedName: [UInt8]
    /// `attested.qualifiedName`.
    public let attestedQualifiedName: [UInt8]

    /// Parses `certInfo`. Only the structure is checked here (lengths, the certify form); `magic` and the values
    /// are checked by the `tpm` verifier, so that each failure has its own step.
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        var reader = TPMReader(bytes, structure: "certInfo")
        magic = try reader.uint32("magic")
        type = try reader.uint16("type")
        qualifiedSigner = try reader.sized("qualifiedSigner", maximum: Self.maximumNameSize)
        extraData = try reader.sized("extraData", maximum: Self.maximumNameSize)
        clock = try reader.uint64("clockInfo.clock")
        resetCount = try reader.uint32("clockInfo.resetCount")
        restartCount = try reader.uint32("clockInfo.restartCount")
        // Not interpreted (W3C WebAuthn §8.3 ignores clockInfo; the §16 test vector fills it with random bytes).
        safe = try reader.uint8("clockInfo.safe")
        firmwareVersion = try reader.uint64("firmwareVersion")
        // TPMU_ATTEST is selected by `type`; only TPMS_CERTIFY_INFO is defined for WebAuthn.
        guard type == Self.attestCertify else {
            throw WebAuthnError(
                .tpmStructureInvalid, detail: "certInfo: type 0x\(String(type, radix: 16)) is not TPM_ST_ATTEST_CERTIFY"
            )
        }
        attestedName = try reader.sized("attested.name", maximum: Self.maximumNameSize)
        attestedQualifiedName = try reader.sized("attested.qualifiedName", maximum: Self.maximumNameSize)
        try reader.finish()
    }
}
