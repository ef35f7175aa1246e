import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// Where and how to hand mail over: a relay reached with STARTTLS (`smtp://`, port 587 by default) or TLS from the
/// first byte (`smtps://`, port 465), its certificate checked against the system's roots or a CA file for a private
/// relay, with optional AUTH credentials.
///
/// `smtp://` to a loopback host (`localhost`, `127.0.0.1`, `::1`), a relay on the same machine, uses STARTTLS when the
/// relay offers it and goes on without it when not; to any other host, a relay that does not offer STARTTLS is
/// refused (`startTLSUnavailable`) rather than sent credentials and mail in the clear.
public struct SMTPConfiguration: Sendable {
    public enum Security: String, Sendable {
        case startTLS
        case implicitTLS
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// PEM certificates of the relay's CA, added to the system's roots (a private relay).
    public var caCertificatesPEM: [UInt8]?
    /// The name the client gives in EHLO.
    public var localName: String
    /// Connecting, and each reply, must take at most this long.
    public var timeout: TimeAmount

    public init(
        host: String, port: Int, security: Security, username: String? = nil, password: String? = nil,
        caCertificatesPEM: [UInt8]? = nil, localName: String = "localhost", timeout: TimeAmount = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.caCertificatesPEM = caCertificatesPEM
        self.localName = localName
        self.timeout = timeout
    }

    /// `smtp://[USER[:PASSWORD]@]HOST[:PORT]` or `smtps://…`; user and password percent-decoded. A password given
    /// apart (from a file) takes the place of the URL's.
    public init(url text: String, password: String? = nil, localName: String = "localhost") throws(SMTPError) {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            let host = url.host, !host.isEmpty
        else {
            throw SMTPError(
                .invalidConfiguration, reason: "the SMTP URL must be smtp://HOST[:PORT] or smtps://HOST[:PORT]")
        }
        let security: Security
        switch scheme {
        case "smtp": security = .startTLS
        case "smtps": security = .implicitTLS
        default: throw SMTPError(.invalidConfiguration, reason: "the SMTP URL's scheme must be smtp or smtps")
        }
        guard url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil else {
            throw SMTPError(.invalidConfiguration, reason: "the SMTP URL takes no path, query or fragment")
        }
        let port = url.port ?? (security == .implicitTLS ? 465 : 587)
        guard (1...65535).contains(port) else {
            throw SMTPError(.invalidConfiguration, reason: "the SMTP URL's port must be 1–65535")
        }
        self.init(
            host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port, security: security,
            username: url.user.flatMap { $0.isEmpty ? nil : ($0.removingPercentEncoding ?? $0) },
            password: password ?? url.password?.removingPercentEncoding ?? url.password, localName: localName)
        if self.password != nil, self.username == nil {
            throw SMTPError(.invalidConfiguration, reason: "an SMTP password needs a user name in the URL")
        }
    }

    /// Whether the relay is on this machine.
    public var isLoopback: Bool {
        ["localhost", "127.0.0.1", "::1"].contains(host.lowercased()) || host.hasPrefix("127.")
    }
}

/// A small, strict SMTP client (RFC 5321) on SwiftNIO and NIOSSL: one connection per call, EHLO, STARTTLS or
/// implicit TLS with the certificate checked for the host, AUTH PLAIN (RFC 4616) or LOGIN, MAIL FROM, RCPT TO for
/// each recipient, DATA with dot-stuffing, QUIT. Every reply is parsed by ``SMTPReplyParser`` from lines of at most
/// 512 octets (`SMTPLineDecoder`); every step has the configured timeout. Errors are ``SMTPError`` whose
/// ``SMTPError/isTransient`` tells a sender whether to try again.
public struct SMTPClient: Sendable {
    public let configuration: SMTPConfiguration
    private let group: any EventLoopGroup
    /// The TLS context, made on first use and kept: making one reads the system's trust roots, which took longer
    /// than the rest of a conversation with a relay on the same machine.
    private let tls = TLSContextCache()

    public init(_ configuration: SMTPConfiguration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
    }

    /// Sends `message` to `recipients` (the envelope; the message's own `To` is what people see). Returns the
    /// server's reply to the message text (often carrying its queue id).
    @discardableResult
    public func send(_ message: MailMessage, from sender: MailAddress? = nil, to recipients: [MailAddress]? = nil)
        async throws(SMTPError) -> SMTPReply
    {
        let rendered = try message.rendered()
        let envelopeFrom = sender ?? message.from
        let envelopeTo = recipients ?? message.to
        let tls = try self.tls.context { () throws(SMTPError) in try tlsContext() }
        let configuration = self.configuration
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(configuration.timeout)
                .connect(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if configuration.security == .implicitTLS {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(configuration.host)))
                        }
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPLineDecoder()))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw SMTPError(
                .connectionFailed, reason: "could not connect to \(configuration.host):\(configuration.port)")
        }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                var conversation = Conversation(
                    channel: channel.channel, lines: inbound.makeAsyncIterator(), outbound: outbound,
                    timeout: configuration.timeout)
                return try await conversation.run(
                    configuration: configuration, tls: tls, from: envelopeFrom, to: envelopeTo, data: rendered)
            }
        } catch let error as SMTPError {
            throw error
        } catch {
            throw SMTPError(.connectionFailed, reason: "the connection failed: \(type(of: error))")
        }
    }

    private func tlsContext() throws(SMTPError) -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = .fullVerification
        do {
            if let pem = configuration.caCertificatesPEM {
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(pem))]
            }
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw SMTPError(.invalidConfiguration, reason: "the SMTP CA certificates cannot be read as PEM")
        }
    }

    /// SNI carries names only; for an IP address NIOSSL checks the certificate's IP entries instead.
    fileprivate static func sniName(_ host: String) -> String? {
        host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
    }
}

/// One client's TLS context, made once.
private final class TLSContextCache: Sendable {
    private let made = Mutex<NIOSSLContext?>(nil)

    func context(_ make: () throws(SMTPError) -> NIOSSLContext) throws(SMTPError) -> NIOSSLContext {
        if let context = made.withLock({ $0 }) { return context }
        let context = try make()
        made.withLock { $0 = $0 ?? context }
        return context
    }
}

/// One conversation, command by command.
private struct Conversation {
    let channel: any Channel
    var lines: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let timeout: TimeAmount
    var parser = SMTPReplyParser()

    init(
        channel: any Channel, lines: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, timeout: TimeAmount
    ) {
        self.channel = channel
        self.lines = lines
        self.outbound = outbound
        self.timeout = timeout
    }

    mutating func run(
        configuration: SMTPConfiguration, tls: NIOSSLContext, from: MailAddress, to: [MailAddress], data: [UInt8]
    ) async throws -> SMTPReply {
        try expect(try await reply(), positive: "the greeting")
        var features = try expect(try await command("EHLO \(configuration.localName)"), positive: "EHLO").extensions
        var secured = configuration.security == .implicitTLS
        if configuration.security == .startTLS {
            if features["STARTTLS"] != nil {
                try expect(try await command("STARTTLS"), positive: "STARTTLS")
                let host = SMTPClient.sniName(configuration.host)
                // The handshake is awaited before the next command, so a certificate that does not verify is
                // reported as such (not as the failed write of the EHLO that follows).
                let handshake = channel.eventLoop.makePromise(of: Void.self)
                try await channel.eventLoop.submit { [channel] in
                    let tlsHandler = try NIOSSLClientHandler(context: tls, serverHostname: host)
                    try channel.pipeline.syncOperations.addHandler(tlsHandler, position: .first)
                    try channel.pipeline.syncOperations.addHandler(
                        HandshakeWaiter(handshake), position: .after(tlsHandler))
                }.get()
                let timer = channel.eventLoop.scheduleTask(in: timeout) {
                    handshake.fail(SMTPError(.timedOut, reason: "the TLS handshake did not finish in time"))
                }
                do {
                    try await handshake.futureResult.get()
                    timer.cancel()
                } catch let error as SMTPError {
                    timer.cancel()
                    throw error
                } catch {
                    timer.cancel()
                    throw SMTPError(.tlsFailed, reason: "TLS failed: \(Self.short(error))")
                }
                secured = true
                // RFC 3207 §4.2: forget what was learned before TLS and ask again.
                features = try expect(try await command("EHLO \(configuration.localName)"), positive: "EHLO").extensions
            } else if !configuration.isLoopback {
                throw SMTPError(
                    .startTLSUnavailable,
                    reason:
                        "\(configuration.host) does not offer STARTTLS; mail and credentials are not sent in the clear")
            }
        }
        if let username = configuration.username {
            guard secured || configuration.isLoopback else {
                throw SMTPError(.startTLSUnavailable, reason: "credentials are only sent over TLS")
            }
            try await authenticate(
                username: username, password: configuration.password ?? "", offered: features["AUTH"])
        }
        try expect(try await command("MAIL FROM:<\(from.value)>"), positive: "MAIL FROM")
        for recipient in to {
            try expect(try await command("RCPT TO:<\(recipient.value)>"), positive: "RCPT TO \(recipient.value)")
        }
        let go = try await command("DATA")
        guard go.code == 354 else { throw failure(go, step: "DATA") }
        try await write(MailMessage.dotStuffed(data))
        let accepted = try expect(try await reply(), positive: "the message")
        // The mail is accepted once the reply to its text is; a failed QUIT changes nothing.
        _ = try? await command("QUIT")
        return accepted
    }

    private mutating func authenticate(username: String, password: String, offered: [String]?) async throws {
        let mechanisms = offered ?? []
        if mechanisms.contains("PLAIN") {
            let token = Data(([0] + Array(username.utf8) + [0] + Array(password.utf8))).base64EncodedString()
            let answer = try await command("AUTH PLAIN \(token)", secret: true)
            guard answer.code == 235 else { throw authFailure(answer) }
        } else if mechanisms.contains("LOGIN") {
            var answer = try await command("AUTH LOGIN")
            guard answer.code == 334 else { throw authFailure(answer) }
            answer = try await command(Data(username.utf8).base64EncodedString(), secret: true)
            guard answer.code == 334 else { throw authFailure(answer) }
            answer = try await command(Data(password.utf8).base64EncodedString(), secret: true)
            guard answer.code == 235 else { throw authFailure(answer) }
        } else {
            throw SMTPError(
                .authenticationFailed, reason: "the server offers no authentication this client speaks (PLAIN, LOGIN)")
        }
    }

    private func authFailure(_ reply: SMTPReply) -> SMTPError {
        reply.isTransient
            ? SMTPError(.transientFailure, reason: "authentication failed for now", reply: reply)
            : SMTPError(.authenticationFailed, reason: "the server refused the credentials", reply: reply)
    }

    @discardableResult
    private func expect(_ reply: SMTPReply, positive step: String) throws -> SMTPReply {
        guard reply.isPositive else { throw failure(reply, step: step) }
        return reply
    }

    private func failure(_ reply: SMTPReply, step: String) -> SMTPError {
        if reply.isTransient { return SMTPError(.transientFailure, reason: "\(step): try again later", reply: reply) }
        if reply.isPermanent { return SMTPError(.permanentFailure, reason: "\(step) was refused", reply: reply) }
        return SMTPError(.unexpectedReply, reason: "\(step): an unexpected reply", reply: reply)
    }

    /// Sends one command line (never logged; `secret` only documents that it carries credentials) and reads the
    /// reply.
    private mutating func command(_ line: String, secret: Bool = false) async throws -> SMTPReply {
        guard !line.contains("\r"), !line.contains("\n") else {
            throw SMTPError(.invalidMessage, reason: "a command may not hold a line break")
        }
        try await write(Array((line + "\r\n").utf8))
        return try await reply()
    }

    private func write(_ bytes: [UInt8]) async throws {
        do {
            try await outbound.write(ByteBuffer(bytes: bytes))
        } catch {
            throw SMTPError(.connectionFailed, reason: "the connection closed while writing")
        }
    }

    /// Reads lines until a reply is complete, each within the timeout (the channel is closed when it passes, which
    /// ends the read).
    private mutating func reply() async throws -> SMTPReply {
        while true {
            let timer = channel.eventLoop.scheduleTask(in: timeout) { [channel] in channel.close(promise: nil) }
            let line: ByteBuffer?
            do {
                line = try await lines.next()
                timer.cancel()
            } catch let error as SMTPError {
                timer.cancel()
                throw error
            } catch let error as NIOSSLError {
                timer.cancel()
                throw SMTPError(.tlsFailed, reason: "TLS failed: \(error)")
            } catch let error as BoringSSLError {
                timer.cancel()
                throw SMTPError(.tlsFailed, reason: "TLS failed: \(Self.short(error))")
            } catch let error as NIOSSLExtraError {
                timer.cancel()
                throw SMTPError(.tlsFailed, reason: "TLS failed: \(error)")
            } catch {
                timer.cancel()
                throw SMTPError(.connectionFailed, reason: "the connection failed while reading")
            }
            guard let line else {
                throw SMTPError(
                    channel.isActive ? .connectionFailed : .timedOut,
                    reason: "the server closed the connection or did not answer in time")
            }
            if let reply = try parser.feed(line.readableBytesView) { return reply }
        }
    }

    private static func short(_ error: any Error) -> String {
        let text = "\(error)"
        return text.count > 200 ? String(text.prefix(200)) : text
    }
}

/// Completes a promise when the TLS handshake it sits behind finishes, or fails it when the handshake does (a
/// certificate that does not verify for the host) or the connection closes first.
private final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let promise: EventLoopPromise<Void>

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            promise.succeed(())
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(SMTPError(.tlsFailed, reason: "the connection closed during the TLS handshake"))
        context.fireChannelInactive()
    }
}

/// Splits the server's bytes into lines at CRLF (a bare LF also ends one), refusing a line longer than a reply line
/// may be, so a server cannot make the client buffer without end.
struct SMTPLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > SMTPReplyParser.maximumLineLength + 2 {
                throw SMTPError(.malformedReply, reason: "a reply line is longer than 512 octets")
            }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        guard var line = buffer.readSlice(length: length + 1) else { return .needMoreData }
        var end = line.readableBytes - 1
        if end > 0, line.getInteger(at: line.readerIndex + end - 1, as: UInt8.self) == UInt8(ascii: "\r") { end -= 1 }
        line = line.getSlice(at: line.readerIndex, length: end)!
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
