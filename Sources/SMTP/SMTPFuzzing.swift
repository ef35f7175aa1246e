import NIOCore
import NIOEmbedded

/// The path a server's bytes take through the client (the line decoder, then the reply parser), for the fuzzer
/// (FuzzTesting/Sources/FuzzSMTPReply) and the corpus replay in SMTPTests.
@_spi(Fuzzing) public enum SMTPFuzzing {
    /// Every reply in `bytes`, or the first error; an EHLO reply's extensions are read too.
    public static func replies(_ bytes: [UInt8]) -> Result<[SMTPReply], SMTPError> {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(SMTPLineDecoder()))
        defer { _ = try? channel.finish() }
        var parser = SMTPReplyParser()
        var replies: [SMTPReply] = []
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            while let line = try channel.readInbound(as: ByteBuffer.self) {
                if let reply = try parser.feed(line.readableBytesView) {
                    _ = reply.extensions
                    _ = reply.description
                    replies.append(reply)
                }
            }
        } catch let error as SMTPError {
            return .failure(error)
        } catch {
            return .failure(SMTPError(.malformedReply, reason: "\(type(of: error))"))
        }
        return .success(replies)
    }
}
