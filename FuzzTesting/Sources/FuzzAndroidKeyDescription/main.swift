import WebAuthn

/// The Android key description extension (KeyDescription, Android Keystore attestation schema) of an `android-key`
/// attestation certificate: DER from the device, read before the chain is trusted.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    _ = try? AndroidKeyDescription(derEncoded: bytes)
    return 0
}
