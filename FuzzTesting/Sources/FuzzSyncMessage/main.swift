@_spi(Fuzzing) import Keychain

/// The sync protocol's JSON messages (pull answers, pushes, joins, shares) and the file-backed server state.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.syncMessage(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
