@_spi(Fuzzing) import Keychain

/// The local vault file and everything read from it or from the sync server as bytes: the file header and body,
/// session files, sealed records and manifests, HPKE messages, item plaintexts.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.vaultFile(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
