import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request has not arrived in full (head to end of body) within a deadline.
///
/// Hummingbird's idle timeout (`idleTimeout`) closes a connection that sends no complete request part for that long,
/// which ends a head sent a byte at a time; but every body chunk counts as activity, so a body trickled a byte at a
/// time stays open for as long as its sender likes. This handler, placed after the HTTP decoder, starts a timer at
/// each request head and cancels it at the request's end; when it fires the connection is closed (the request's
/// handler sees its body end in an error and nothing is written). Answers that take long to compute are not
/// affected: the timer stops when the last body part arrives.
package final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    package init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: timeout) {
                loopBound.value.close(promise: nil)
            }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension RequestDeadlineHandler: Sendable {}
