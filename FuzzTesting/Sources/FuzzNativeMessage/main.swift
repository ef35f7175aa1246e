@_spi(Fuzzing) import Keychain

/// The keychain's native messaging host: frames (4-byte native-endian length + JSON) and the extension's requests.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.nativeMessage(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
