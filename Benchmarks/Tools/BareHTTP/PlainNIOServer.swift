// SwiftNIO's HTTP/1 pipeline with one handler and nothing else: no Hummingbird, no async sequences, no router. Every
// request, whatever its path, is answered 200 "ok" with a content length on the connection it came on, kept alive.
// The floor under Hummingbird's own floor (`GET /plain` in main.swift): what parsing a request and writing an answer
// cost in NIO alone, on the same event loops.
import NIOCore
import NIOHTTP1
import NIOPosix

final class PlainAnswer: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let body = ByteBuffer(string: "ok")
    private static let head: HTTPHeaders = ["content-type": "text/plain", "content-length": "2"]

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The head and any body parts need nothing; the end of a request is where it is answered.
        guard case .end = unwrapInboundIn(data) else { return }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: Self.head))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(Self.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// Binds the plain NIO server to 127.0.0.1:`port` on NIO's shared event loops; it serves until the process exits.
func startPlainNIOServer(port: Int) async throws {
    _ = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(PlainAnswer())
            }
        }
        .bind(host: "127.0.0.1", port: port)
        .get()
}
