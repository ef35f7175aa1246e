/// A server's reply (RFC 5321 §4.2): a three-digit code and one or more lines of text.
///
/// ```
/// Reply-line     = *( Reply-code "-" [ textstring ] CRLF )
///                  Reply-code [ SP textstring ] CRLF
/// Reply-code     = %x32-35 %x30-35 %x30-39
/// textstring     = 1*(%d09 / %d32-126) ; HT, SP, Printable US-ASCII
/// ```
public struct SMTPReply: Hashable, Sendable, CustomStringConvertible {
    public let code: Int
    /// The text of each line, without the code and separator.
    public let lines: [String]

    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// 2yz: the command was accepted.
    public var isPositive: Bool { (200..<300).contains(code) }
    /// 3yz: go on (the message text after DATA, or the next step of AUTH).
    public var isIntermediate: Bool { (300..<400).contains(code) }
    /// 4yz: not now; the same command may succeed later.
    public var isTransient: Bool { (400..<500).contains(code) }
    /// 5yz: not as it is.
    public var isPermanent: Bool { (500..<600).contains(code) }

    /// The first line's first word of each line after the greeting line of an EHLO reply: the extensions offered,
    /// upper-cased, with their parameters (`AUTH` → `["PLAIN", "LOGIN"]`).
    public var extensions: [String: [String]] {
        var found: [String: [String]] = [:]
        for line in lines.dropFirst() {
            let words = line.split(separator: " ").map(String.init)
            guard let keyword = words.first else { continue }
            found[keyword.uppercased()] = words.dropFirst().map { $0.uppercased() }
        }
        return found
    }

    /// The reply as one line for logs and errors (lines joined by " / ", at most 300 characters).
    public var description: String {
        let text = "\(code) " + lines.joined(separator: " / ")
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }
}

/// Reads reply lines (without their CRLF) into replies, strictly: a line that is not a reply line, a multi-line reply
/// whose lines change code, a line over 512 octets with its CRLF (RFC 5321 §4.5.3.1.5) or a reply of more than 100
/// lines is a `malformedReply`.
public struct SMTPReplyParser: Sendable {
    public static let maximumLineLength = 510
    public static let maximumLines = 100

    private var code: Int?
    private var lines: [String] = []

    public init() {}

    /// Feeds one line; returns the reply when the line ends one.
    public mutating func feed(_ line: some Collection<UInt8>) throws(SMTPError) -> SMTPReply? {
        let bytes = Array(line)
        guard bytes.count <= Self.maximumLineLength else {
            throw SMTPError(.malformedReply, reason: "a reply line is longer than \(Self.maximumLineLength) octets")
        }
        guard bytes.count >= 3,
            (UInt8(ascii: "2")...UInt8(ascii: "5")).contains(bytes[0]),
            (UInt8(ascii: "0")...UInt8(ascii: "5")).contains(bytes[1]),
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[2])
        else {
            throw SMTPError(.malformedReply, reason: "a reply line does not start with a reply code")
        }
        let lineCode = Int(bytes[0] - 48) * 100 + Int(bytes[1] - 48) * 10 + Int(bytes[2] - 48)
        if let code, code != lineCode {
            throw SMTPError(.malformedReply, reason: "the lines of one reply carry different codes")
        }
        let last: Bool
        let text: ArraySlice<UInt8>
        if bytes.count == 3 {
            last = true
            text = []
        } else {
            switch bytes[3] {
            case UInt8(ascii: " "): last = true
            case UInt8(ascii: "-"): last = false
            default:
                throw SMTPError(.malformedReply, reason: "a reply code is followed by neither a space nor a hyphen")
            }
            text = bytes[4...]
        }
        guard text.allSatisfy({ $0 == 9 || (32...126).contains($0) }) else {
            throw SMTPError(.malformedReply, reason: "a reply line holds a byte that is not printable US-ASCII")
        }
        guard lines.count < Self.maximumLines else {
            throw SMTPError(.malformedReply, reason: "a reply has more than \(Self.maximumLines) lines")
        }
        code = lineCode
        lines.append(String(decoding: text, as: UTF8.self))
        guard last else { return nil }
        defer {
            code = nil
            lines = []
        }
        return SMTPReply(code: lineCode, lines: lines)
    }
}
