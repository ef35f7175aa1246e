@_spi(Fuzzing) import Keychain

/// The Credential Exchange Format importer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.cxf(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
