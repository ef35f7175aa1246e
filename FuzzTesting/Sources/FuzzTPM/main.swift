import WebAuthn

/// The two TPM 2.0 structures of a `tpm` attestation statement, parsed with exact length accounting: `certInfo`
/// (TPMS_ATTEST) and `pubArea` (TPMT_PUBLIC). Both come from the authenticator before any signature is checked.
/// A public area that parses keeps exactly the bytes it was read from (its Name is hashed over them).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    _ = try? TPMSAttest(bytes: bytes)
    if let pubArea = try? TPMTPublic(bytes: bytes), pubArea.bytes != bytes {
        fatalError("TPMTPublic kept other bytes than it parsed")
    }
    return 0
}
