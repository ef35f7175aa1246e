import WebAuthn

/// Authenticator data is the first thing a relying party parses from an assertion.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    if let data = try? AuthenticatorData(bytes: bytes, options: COSEKeyOptions(allowRS1: true)) {
        precondition(data.bytes == bytes)
        if let attested = data.attestedCredentialData {
            precondition(attested.credentialId.count <= 1023)
            // A parsed key must survive its own canonical encoding.
            precondition(
                (try? COSEKey(bytes: attested.publicKey.bytes, options: COSEKeyOptions(allowRS1: true))) != nil)
            _ = attested.publicKey.isValidSignature(Array(bytes.prefix(72)), over: bytes)
        }
    }
    return 0
}
