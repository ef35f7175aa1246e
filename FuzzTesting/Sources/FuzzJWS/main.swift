import WebAuthn

/// The compact JWS reader used for `android-safetynet` responses and FIDO metadata BLOBs: header, x5c, signature
/// check with x5c[0], and the chain's certificates. Whatever parses must also answer the signature check and the
/// chain without crashing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    if let jws = try? CompactJWS(text, maximumLength: 1 << 16) {
        _ = jws.signatureIsValid
        _ = try? jws.chain()
    }
    return 0
}
