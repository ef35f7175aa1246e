@_spi(Fuzzing) import SMTP

/// A server's bytes through the SMTP client's line decoder and reply parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = SMTPFuzzing.replies(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
