@_spi(Fuzzing) import Keychain

/// The public suffix list parser, Punycode, web origins and the RP ID check against them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    KeychainFuzzing.publicSuffixList(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
