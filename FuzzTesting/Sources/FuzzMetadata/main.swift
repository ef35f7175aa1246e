import WebAuthn

/// FIDO metadata read from outside: a BLOB payload (JSON, indexed by AAGUID and key identifier as registration
/// does) and a certificate revocation list given with the BLOB (DER). The payload is only read after the BLOB's
/// signature verifies, but an operator imports the BLOB and CRLs from a download.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    if let payload = try? MetadataBLOBPayload(json: bytes), let index = try? MetadataIndex(entries: payload.entries) {
        for entry in index.entries {
            _ = entry.certificationLevel
            if let text = entry.aaguid, let aaguid = AAGUID(uuidString: text) { _ = index.entry(aaguid: aaguid) }
        }
    }
    _ = try? CertificateRevocationList(derEncoded: bytes)
    return 0
}
