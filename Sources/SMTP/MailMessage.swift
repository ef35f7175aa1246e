import Foundation

/// An address as the envelope and the `From`/`To` headers carry it: `local@domain` in printable US-ASCII, without
/// the characters that would end a header or an SMTP command (spaces, angle brackets, quotes, commas, semicolons,
/// backslashes, parentheses, square brackets, colons), one `@`, at most 64 octets before it and 254 in all
/// (RFC 5321 §4.5.3.1). Addresses with non-ASCII characters (SMTPUTF8) are refused rather than sent half-encoded.
public struct MailAddress: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public init(_ text: String) throws(SMTPError) {
        let bytes = Array(text.utf8)
        let forbidden = Set(#" <>()[]\,;:"@"#.utf8)
        guard bytes.count <= 254, let at = bytes.firstIndex(of: UInt8(ascii: "@")) else {
            throw SMTPError(.invalidMessage, reason: "an address must be local@domain, at most 254 characters")
        }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard !local.isEmpty, local.count <= 64, !domain.isEmpty,
            (local + domain).allSatisfy({ (33...126).contains($0) && !forbidden.contains($0) }),
            !text.contains("@."), !text.contains(".."), domain.last != UInt8(ascii: "."), !text.hasPrefix("."),
            local.last != UInt8(ascii: ".")
        else {
            throw SMTPError(
                .invalidMessage,
                reason: "an address must be local@domain in printable ASCII without spaces, quotes, brackets or commas")
        }
        value = text
    }

    public var domain: String { String(value[value.index(after: value.firstIndex(of: "@")!)...]) }
    public var description: String { value }
}

/// A mail as Sesame sends it: from one address to others, a subject, a plain-text part and optionally an HTML part
/// (multipart/alternative, RFC 2046 §5.1.4), with the headers a receiving system uses to tell it from spam and to
/// thread it: `Date`, `Message-ID` (given by the caller, so a retried mail keeps its ID), `MIME-Version`,
/// `Auto-Submitted: auto-generated` (RFC 3834), and, for mail a person may turn off, `List-Unsubscribe` with
/// `List-Unsubscribe-Post` (RFC 8058 one-click).
///
/// The rendering is 7-bit: bodies are base64 (UTF-8 inside), non-ASCII display names and subjects are RFC 2047
/// encoded-words, so any relay carries it unchanged whether or not it offers 8BITMIME.
public struct MailMessage: Sendable {
    public var from: MailAddress
    public var fromName: String?
    public var to: [MailAddress]
    public var subject: String
    public var text: String
    public var html: String?
    /// Without angle brackets, e.g. `0f3c…@sesame.example`.
    public var messageID: String
    public var date: Date
    /// An `https:` or `mailto:` URL that turns this kind of mail off.
    public var listUnsubscribe: String?

    public init(
        from: MailAddress, fromName: String? = nil, to: [MailAddress], subject: String, text: String,
        html: String? = nil, messageID: String, date: Date, listUnsubscribe: String? = nil
    ) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.messageID = messageID
        self.date = date
        self.listUnsubscribe = listUnsubscribe
    }

    /// The message as it goes after DATA (before dot-stuffing): CRLF line ends, no line over 998 octets.
    public func rendered() throws(SMTPError) -> [UInt8] {
        guard !to.isEmpty else { throw SMTPError(.invalidMessage, reason: "a mail needs at least one recipient") }
        guard Self.isHeaderSafe(messageID), messageID.utf8.count <= 200, messageID.contains("@"),
            !messageID.contains(where: { "<> ".contains($0) })
        else {
            throw SMTPError(.invalidMessage, reason: "a Message-ID must be id@domain without spaces or angle brackets")
        }
        if let listUnsubscribe {
            guard Self.isHeaderSafe(listUnsubscribe), listUnsubscribe.utf8.count <= 500,
                listUnsubscribe.hasPrefix("https://") || listUnsubscribe.hasPrefix("mailto:"),
                !listUnsubscribe.contains(where: { "<> ".contains($0) })
            else {
                throw SMTPError(.invalidMessage, reason: "List-Unsubscribe must be one https: or mailto: URL")
            }
        }
        for (name, value) in [("subject", subject)] + (fromName.map { [("sender name", $0)] } ?? []) {
            guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw SMTPError(.invalidMessage, reason: "the \(name) holds a line break or another control character")
            }
            guard value.utf8.count <= 900 else { throw SMTPError(.invalidMessage, reason: "the \(name) is too long") }
        }
        var headers: [String] = []
        let from = fromName.map { "\(Self.phrase($0)) <\(self.from.value)>" } ?? self.from.value
        headers.append("From: \(from)")
        headers.append("To: " + to.map(\.value).joined(separator: ",\r\n "))
        headers.append("Subject: \(Self.unstructured(subject))")
        headers.append("Date: \(Self.rfc5322(date))")
        headers.append("Message-ID: <\(messageID)>")
        headers.append("MIME-Version: 1.0")
        headers.append("Auto-Submitted: auto-generated")
        if let listUnsubscribe {
            headers.append("List-Unsubscribe: <\(listUnsubscribe)>")
            if listUnsubscribe.hasPrefix("https://") {
                headers.append("List-Unsubscribe-Post: List-Unsubscribe=One-Click")
            }
        }
        var lines = headers
        if let html {
            // Base64 never holds a hyphen, so a boundary with hyphens cannot occur in a part.
            // FNV-1a of the Message-ID: the same mail renders to the same bytes on every try.
            let hash = messageID.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            let boundary = "sesame-alt-" + String(hash, radix: 16)
            lines.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            lines.append("")
            lines.append("--\(boundary)")
            lines += Self.part(type: "text/plain", text)
            lines.append("--\(boundary)")
            lines += Self.part(type: "text/html", html)
            lines.append("--\(boundary)--")
        } else {
            lines += Self.part(type: "text/plain", text)
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    private static func part(type: String, _ body: String) -> [String] {
        ["Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", ""]
            + base64Lines(Array(body.utf8))
    }

    /// Base64 in lines of 76 characters (RFC 2045 §6.8).
    static func base64Lines(_ bytes: [UInt8]) -> [String] {
        let encoded = Data(bytes).base64EncodedString()
        var lines: [String] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[index..<end]))
            index = end
        }
        return lines.isEmpty ? [""] : lines
    }

    private static func isHeaderSafe(_ value: String) -> Bool {
        value.utf8.allSatisfy { (32...126).contains($0) }
    }

    /// Printable ASCII as it is (folded where a line would pass 78 characters); anything else as RFC 2047 `B`
    /// encoded-words of UTF-8, each at most 75 characters, never splitting a character.
    static func unstructured(_ value: String) -> String {
        if value.utf8.allSatisfy({ (32...126).contains($0) }), !value.contains("=?") {
            return value
        }
        return encodedWords(value)
    }

    /// A display name: a quoted string when it is printable ASCII, encoded-words otherwise.
    static func phrase(_ value: String) -> String {
        if value.utf8.allSatisfy({ (32...126).contains($0) }), !value.contains("=?") {
            return "\""
                + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
        return encodedWords(value)
    }

    private static func encodedWords(_ value: String) -> String {
        // "=?UTF-8?B?" + base64 + "?=" ≤ 75: at most 45 bytes of UTF-8 per word (60 base64 characters).
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in value {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    /// `Sat, 28 Nov 2026 13:05:09 +0000` (RFC 5322 §3.3), in UTC.
    static func rfc5322(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { n.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        return "\(days[(c.weekday ?? 1) - 1]), \(two(c.day)) \(months[(c.month ?? 1) - 1]) \(c.year ?? 1970) "
            + "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) +0000"
    }

    /// The text after DATA: every line that starts with a period gets another (RFC 5321 §4.5.2), then `.` alone.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + 8)
        var atLineStart = true
        for byte in message {
            if atLineStart, byte == UInt8(ascii: ".") { out.append(UInt8(ascii: ".")) }
            out.append(byte)
            atLineStart = byte == UInt8(ascii: "\n")
        }
        if !(out.suffix(2) == [13, 10]) { out += [13, 10] }
        return out + Array(".\r\n".utf8)
    }
}
