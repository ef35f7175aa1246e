@_spi(Fuzzing) import Keychain

/// The Bitwarden JSON export importer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.bitwarden(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
