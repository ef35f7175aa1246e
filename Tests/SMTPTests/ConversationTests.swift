import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import SMTP

/// A relay on loopback that answers each line the client sends from a script, and records what it was sent.
final class ScriptedRelay: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Given the line the client sent (without CRLF), the reply to write, or nil to stay silent.
    let answer: @Sendable (String) -> String?
    let received = Mutex<[String]>([])
    private var buffer = ""
    private var inData = false

    init(answer: @escaping @Sendable (String) -> String?) { self.answer = answer }

    func channelActive(context: ChannelHandlerContext) {
        if let greeting = answer("<connect>") { write(greeting, context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffer += bytes.readString(length: bytes.readableBytes) ?? ""
        while let range = buffer.range(of: "\r\n") {
            let line = String(buffer[..<range.lowerBound])
            buffer.removeSubrange(..<range.upperBound)
            received.withLock { $0.append(line) }
            if inData {
                if line == "." {
                    inData = false
                    if let reply = answer("<end of data>") { write(reply, context) }
                }
                continue
            }
            if line == "DATA" { inData = true }
            if let reply = answer(line) { write(reply, context) }
        }
    }

    private func write(_ reply: String, _ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: reply + "\r\n")), promise: nil)
    }

    /// Serves one relay per connection on a free loopback port; `body` gets the port and the relays made so far.
    @discardableResult
    static func serve<T>(
        _ answer: @escaping @Sendable (String) -> String?,
        _ body: (Int, @Sendable () -> [ScriptedRelay]) async throws -> T
    ) async throws -> T {
        let relays = Mutex<[ScriptedRelay]>([])
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                let relay = ScriptedRelay(answer: answer)
                relays.withLock { $0.append(relay) }
                return channel.pipeline.addHandler(relay)
            }
            .bind(host: "127.0.0.1", port: 0).get()
        do {
            let result = try await body(server.localAddress!.port!) { relays.withLock { $0 } }
            try await server.close()
            return result
        } catch {
            try? await server.close()
            throw error
        }
    }
}

@Suite struct ConversationTests {
    let mail = MailMessage(
        from: try! MailAddress("sesame@example.org"), to: [try! MailAddress("lin@example.net")], subject: "Hi",
        text: ".starts with a period", messageID: "c1@sesame.example", date: Date(timeIntervalSince1970: 0))

    /// A relay that accepts everything; `AUTH` only with the right PLAIN token.
    static let accepting: @Sendable (String) -> String? = { line in
        switch line {
        case "<connect>": "220 relay.test ESMTP"
        case let l where l.hasPrefix("EHLO"): "250-relay.test\r\n250-AUTH LOGIN PLAIN\r\n250 8BITMIME"
        case let l where l.hasPrefix("AUTH PLAIN"):
            l == "AUTH PLAIN " + Data("\0sesame\0correct horse".utf8).base64EncodedString()
                ? "235 2.7.0 ok" : "535 5.7.8 no"
        case let l where l.hasPrefix("MAIL FROM:"), let l where l.hasPrefix("RCPT TO:"): "250 2.1.0 ok"
        case "DATA": "354 go ahead"
        case "<end of data>": "250 2.0.0 queued as ABC123"
        case "QUIT": "221 bye"
        default: "500 what"
        }
    }

    @Test func aMailGoesThroughTheWholeConversationToALoopbackRelay() async throws {
        try await ScriptedRelay.serve(Self.accepting) { port, relays in
            var configuration = SMTPConfiguration(host: "127.0.0.1", port: port, security: .startTLS)
            configuration.username = "sesame"
            configuration.password = "correct horse"
            let reply = try await SMTPClient(configuration).send(mail)
            #expect(reply.code == 250 && reply.lines == ["2.0.0 queued as ABC123"])
            let sent = relays()[0].received.withLock { $0 }
            #expect(sent.first == "EHLO localhost")
            #expect(sent.contains("MAIL FROM:<sesame@example.org>") && sent.contains("RCPT TO:<lin@example.net>"))
            #expect(sent.contains("Message-ID: <c1@sesame.example>"))
            #expect(sent.last == "QUIT")
            // The text's leading period went doubled: base64 never starts with one, so check the end marker alone.
            #expect(sent.filter { $0 == "." }.count == 1)
        }
    }

    @Test func wrongCredentialsAreAnAuthenticationFailure() async throws {
        try await ScriptedRelay.serve(Self.accepting) { port, _ in
            var configuration = SMTPConfiguration(host: "127.0.0.1", port: port, security: .startTLS)
            configuration.username = "sesame"
            configuration.password = "wrong"
            let error = await #expect(throws: SMTPError(.authenticationFailed)) {
                try await SMTPClient(configuration).send(mail)
            }
            #expect(error?.isTransient == false)
            #expect(error.map { !"\($0)".contains("wrong") } == true, "the password is not in the error")
        }
    }

    @Test(arguments: [
        ("451 4.3.0 busy", SMTPError.Code.transientFailure, true),
        ("550 5.1.1 no such user", SMTPError.Code.permanentFailure, false),
    ])
    func aRefusedRecipientSaysWhetherToTryAgain(_ answer: String, _ code: SMTPError.Code, _ transient: Bool)
        async throws
    {
        try await ScriptedRelay.serve({ line in line.hasPrefix("RCPT") ? answer : Self.accepting(line) }) { port, _ in
            let error = await #expect(throws: SMTPError(code)) {
                try await SMTPClient(SMTPConfiguration(host: "127.0.0.1", port: port, security: .startTLS)).send(mail)
            }
            #expect(error?.isTransient == transient)
            #expect(error?.reply?.description == answer)
        }
    }

    @Test func aSilentRelayTimesOut() async throws {
        try await ScriptedRelay.serve({ line in line == "<connect>" ? "220 hi" : nil }) { port, _ in
            var configuration = SMTPConfiguration(host: "127.0.0.1", port: port, security: .startTLS)
            configuration.timeout = .milliseconds(300)
            let error = await #expect(throws: SMTPError(.timedOut)) { try await SMTPClient(configuration).send(mail) }
            #expect(error?.isTransient == true)
        }
    }

    @Test func aGarbledReplyIsMalformed() async throws {
        try await ScriptedRelay.serve({ line in line == "<connect>" ? "hello there" : nil }) { port, _ in
            await #expect(throws: SMTPError(.malformedReply)) {
                try await SMTPClient(SMTPConfiguration(host: "127.0.0.1", port: port, security: .startTLS)).send(mail)
            }
        }
    }

    @Test func nobodyListeningIsAConnectionFailureToRetry() async throws {
        let port = try await ScriptedRelay.serve(Self.accepting) { port, _ in port }
        let error = await #expect(throws: SMTPError(.connectionFailed)) {
            try await SMTPClient(SMTPConfiguration(host: "127.0.0.1", port: port, security: .startTLS)).send(mail)
        }
        #expect(error?.isTransient == true)
    }
}
