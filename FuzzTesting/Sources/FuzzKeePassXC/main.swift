@_spi(Fuzzing) import Keychain

/// The KeePassXC CSV export importer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.keePassXC(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
