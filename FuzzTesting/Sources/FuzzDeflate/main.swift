@_spi(Fuzzing) import Keychain

/// The DEFLATE inflater of CXF's `largeBlob`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.deflate(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
