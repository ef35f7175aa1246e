import Foundation
import Testing

@testable @_spi(Fuzzing) import SMTP

@Suite struct ReplyParserTests {
    func parse(_ lines: [String]) throws(SMTPError) -> [SMTPReply] {
        var parser = SMTPReplyParser()
        var replies: [SMTPReply] = []
        for line in lines {
            if let reply = try parser.feed(Array(line.utf8)) { replies.append(reply) }
        }
        return replies
    }

    @Test func aMultiLineEHLOReplyListsTheExtensions() throws {
        let replies = try parse([
            "250-mail.example Hello", "250-PIPELINING", "250-AUTH PLAIN login", "250-STARTTLS", "250 8BITMIME",
        ])
        #expect(replies.count == 1)
        #expect(replies[0].code == 250 && replies[0].isPositive)
        #expect(replies[0].extensions["AUTH"] == ["PLAIN", "LOGIN"])
        #expect(replies[0].extensions["STARTTLS"] == [])
        #expect(replies[0].extensions["MAIL.EXAMPLE"] == nil)
    }

    @Test func repliesEndOnTheirLastLineAndTheParserStartsAgain() throws {
        let replies = try parse(["220 ready", "354", "451 4.3.0 try later", "550-no", "550 such user"])
        #expect(replies.map(\.code) == [220, 354, 451, 550])
        #expect(replies[1].lines == [""])
        #expect(replies[2].isTransient && replies[3].isPermanent)
        #expect(replies[3].lines == ["no", "such user"])
    }

    @Test(arguments: [
        "25", "2500 x", "250x", "650 no", "190 no", "2a0 no", "260 no", "250\u{7}bell", "250 tab\tok\u{1b}",
        "250 caf\u{e9}", String(repeating: "2", count: 3) + " " + String(repeating: "x", count: 507),
    ])
    func aLineThatIsNotAReplyLineIsRefused(_ line: String) {
        #expect(throws: SMTPError(.malformedReply)) { _ = try parse([line]) }
    }

    @Test func theLongestLineIsAccepted() throws {
        let line = "250 " + String(repeating: "x", count: SMTPReplyParser.maximumLineLength - 4)
        #expect(try parse([line]).count == 1)
    }

    @Test func linesOfOneReplyMustShareTheirCode() {
        #expect(throws: SMTPError(.malformedReply)) { _ = try parse(["250-one", "251 two"]) }
    }

    @Test func aReplyOfTooManyLinesIsRefused() {
        let lines = Array(repeating: "250-x", count: SMTPReplyParser.maximumLines) + ["250 end"]
        #expect(throws: SMTPError(.malformedReply)) { _ = try parse(lines) }
    }
}

@Suite struct MailMessageTests {
    let from = try! MailAddress("sesame@example.org")
    let to = try! MailAddress("lin@example.net")

    func message(subject: String = "Your code", html: String? = "<p>Hello</p>") -> MailMessage {
        MailMessage(
            from: from, fromName: "Sesame", to: [to], subject: subject, text: "Hello\n.hidden line\nBye",
            html: html, messageID: "m1@sesame.example", date: Date(timeIntervalSince1970: 1_795_871_109),
            listUnsubscribe: "https://sesame.example/account#mail")
    }

    /// The header block and each part, decoded.
    func sections(_ bytes: [UInt8]) -> (headers: [String], parts: [String]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let blocks = text.components(separatedBy: "\r\n\r\n")
        let headers = blocks[0].components(separatedBy: "\r\n")
        var parts: [String] = []
        for block in blocks.dropFirst() {
            let base64 = block.components(separatedBy: "\r\n").prefix { !$0.hasPrefix("--") }.joined()
            if !base64.isEmpty, let data = Data(base64Encoded: base64) {
                parts.append(String(decoding: data, as: UTF8.self))
            }
        }
        return (headers, parts)
    }

    @Test func aMailHasTheHeadersReceiversCheckAndBothParts() throws {
        let bytes = try message().rendered()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "every line ends in CRLF")
        #expect(bytes.allSatisfy { $0 < 128 }, "7-bit")
        #expect(text.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 998 })
        let (headers, parts) = sections(bytes)
        #expect(headers.contains("From: \"Sesame\" <sesame@example.org>"))
        #expect(headers.contains("To: lin@example.net"))
        #expect(headers.contains("Subject: Your code"))
        #expect(headers.contains("Date: Sat, 28 Nov 2026 13:05:09 +0000"))
        #expect(headers.contains("Message-ID: <m1@sesame.example>"))
        #expect(headers.contains("MIME-Version: 1.0"))
        #expect(headers.contains("Auto-Submitted: auto-generated"))
        #expect(headers.contains("List-Unsubscribe: <https://sesame.example/account#mail>"))
        #expect(headers.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"))
        #expect(headers.contains { $0.hasPrefix("Content-Type: multipart/alternative; boundary=\"sesame-alt-") })
        #expect(parts == ["Hello\n.hidden line\nBye", "<p>Hello</p>"])
        #expect(try message().rendered() == bytes, "the same mail renders to the same bytes on a retry")
    }

    @Test func aSubjectAndNameOutsideASCIIAreEncodedWordsThatDecodeBack() throws {
        let subject = "새 패스키가 추가되었습니다 — Ihr Passkey wurde hinzugefügt, und zwar gerade eben"
        var mail = message(subject: subject, html: nil)
        mail.fromName = "세서미"
        let (headers, _) = sections(try mail.rendered())
        let folded = headers.joined(separator: "\r\n").replacingOccurrences(of: "\r\n ", with: " ")
        let subjectLine = folded.components(separatedBy: "\r\n").first { $0.hasPrefix("Subject: ") }!
        let words = subjectLine.dropFirst("Subject: ".count).split(separator: " ")
        #expect(words.allSatisfy { $0.count <= 75 && $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") })
        let decoded = words.map { word in
            String(decoding: Data(base64Encoded: String(word.dropFirst(10).dropLast(2)))!, as: UTF8.self)
        }.joined()
        #expect(decoded == subject)
        #expect(folded.contains("From: =?UTF-8?B?\(Data("세서미".utf8).base64EncodedString())?= <sesame@example.org>"))
    }

    @Test(arguments: ["Hi\r\nBcc: evil@example.com", "Hi\nthere", "tab\u{0}"])
    func aHeaderWithALineBreakIsRefused(_ subject: String) {
        #expect(throws: SMTPError(.invalidMessage)) { _ = try message(subject: subject).rendered() }
    }

    @Test(arguments: [
        "lin@example.net\r\nRCPT TO:<x@y>", "lin example@x.org", "<lin@x.org>", "lin@", "@x.org", "lin", "a@b@c",
        "lin@x..org", "lin@.x.org", "lin@x.org.", "lïn@x.org", String(repeating: "a", count: 65) + "@x.org",
        "\"lin\"@x.org", "lin,bo@x.org",
    ])
    func anAddressThatCouldBreakACommandOrHeaderIsRefused(_ text: String) {
        #expect(throws: SMTPError(.invalidMessage)) { _ = try MailAddress(text) }
    }

    @Test func dotStuffingDoublesALeadingPeriodAndEndsTheData() {
        let stuffed = MailMessage.dotStuffed(Array("a\r\n.b\r\n..c\r\nd".utf8))
        #expect(String(decoding: stuffed, as: UTF8.self) == "a\r\n..b\r\n...c\r\nd\r\n.\r\n")
    }

    @Test(arguments: [
        ("smtp://relay.example", "relay.example", 587, SMTPConfiguration.Security.startTLS, nil as String?),
        ("smtps://u%40x:p%3Ass@relay.example:2465", "relay.example", 2465, .implicitTLS, "u@x"),
        ("smtp://[::1]:25", "::1", 25, .startTLS, nil),
    ])
    func smtpURLs(_ url: String, host: String, port: Int, security: SMTPConfiguration.Security, user: String?) throws {
        let configuration = try SMTPConfiguration(url: url)
        #expect(configuration.host == host && configuration.port == port && configuration.security == security)
        #expect(configuration.username == user)
        if user != nil {
            #expect(configuration.password == "p:ss")
            #expect(try SMTPConfiguration(url: url, password: "from-file").password == "from-file")
        } else {
            #expect(configuration.password == nil)
            #expect(throws: SMTPError(.invalidConfiguration)) { _ = try SMTPConfiguration(url: url, password: "p") }
        }
    }

    @Test(arguments: [
        "http://relay.example", "smtp://", "smtp://relay.example/path", "smtp://relay.example?x=1",
        "smtp://:pw@relay.example", "smtp://relay.example:0",
    ])
    func unusableSMTPURLsAreRefused(_ url: String) {
        #expect(throws: SMTPError(.invalidConfiguration)) { _ = try SMTPConfiguration(url: url) }
    }
}

/// Replays the fuzzer's regression corpus (FuzzTesting/Corpus/FuzzSMTPReply) through the same decoder and parser:
/// each input gives replies or a typed error, and the seeds say which.
@Suite struct SMTPFuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FuzzTesting/Corpus/FuzzSMTPReply")

    @Test func theCorpusParsesOrFailsWithATypedError() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(names.count >= 10)
        var outcomes: [String: Bool] = [:]
        for name in names {
            let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent(name)))
            switch SMTPFuzzing.replies(bytes) {
            case .success: outcomes[name] = true
            case .failure(let error): #expect(error.code == .malformedReply, "\(name)"); outcomes[name] = false
            }
        }
        #expect(outcomes["ehlo"] == true && outcomes["bare-lf"] == true && outcomes["bare-code"] == true)
        #expect(outcomes["code-mismatch"] == false && outcomes["long-line"] == false && outcomes["non-ascii"] == false)
    }
}
