import WebAuthn

/// The attestation object is the first thing a relying party parses from a registration.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    _ = try? AttestationObject(bytes: bytes)
    _ = try? COSEKey(bytes: bytes, options: COSEKeyOptions(allowRS1: true))
    return 0
}
