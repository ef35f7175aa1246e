/// An SMS message that binds a one-time code to a site, so that browsers and operating systems offer to fill the
/// code only on that site (WICG "Origin-bound one-time codes delivered via SMS").
///
/// Format: optional explanatory text, then a last line holding the top-level host, the code and, optionally,
/// the host of an embedded (iframe) site, each after its sigil and separated by exactly one space:
///
/// ```
/// 747723 is your ExampleCo authentication code.
///
/// @example.com #747723
/// @example.com #747723 @ecommerce.example        ; embedded form
/// ```
///
/// Parsing follows the specification's algorithm: only the last line counts (after CR LF and CR become LF),
/// the top-level host must start it, one U+0020 separates the fields, tokens end at ASCII whitespace, and
/// trailing text after the recognised fields is ignored. On top of the specification, hosts must be valid DNS
/// names (``Host``): the specification turns the token into an origin, which fails for anything else.
public struct OriginBoundMessage: Sendable, Hashable {
    /// The site the code is for (scheme `https`).
    public let topLevelHost: String
    /// The embedded site, when the code is entered in a cross-site iframe of `topLevelHost`.
    public let embeddedHost: String?
    /// The code, as it appears after `#`.
    public let code: String

    public init(topLevelHost: String, code: String, embeddedHost: String? = nil) throws(OneTimeCodeError) {
        guard Host.isValid(topLevelHost) else {
            throw OneTimeCodeError(.invalidHost, reason: "top-level host is not a DNS name")
        }
        if let embeddedHost, !Host.isValid(embeddedHost) {
            throw OneTimeCodeError(.invalidHost, reason: "embedded host is not a DNS name")
        }
        // A code the parser would cut short or misread: empty, or holding whitespace (which ends the token).
        guard !code.isEmpty, code.utf8.count <= 64,
            code.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw OneTimeCodeError(.invalidSMSMessage, reason: "code must be 1 to 64 printable ASCII characters")
        }
        self.topLevelHost = topLevelHost
        self.embeddedHost = embeddedHost
        self.code = code
    }

    /// The binding line: `@host #code` or `@host #code @embedded`.
    public var bindingLine: String {
        var line = "@\(topLevelHost) #\(code)"
        if let embeddedHost { line += " @\(embeddedHost)" }
        return line
    }

    /// The whole message: `text`, a blank line, then the binding line. Line breaks at the end of `text` are
    /// dropped so there is exactly one blank line; empty `text` gives the binding line alone.
    public func message(text: String) -> String {
        var body = Substring(text)
        while let last = body.last, last == "\n" || last == "\r" || last == "\r\n" { body = body.dropLast() }
        return body.isEmpty ? bindingLine : "\(body)\n\n\(bindingLine)"
    }

    /// Parses a received message (see the type's documentation).
    public init(parsing message: String) throws(OneTimeCodeError) {
        // "Last line": normalise CR LF and lone CR to LF, then take what follows the last LF.
        var scalars = Array(message.unicodeScalars)
        if let lastBreak = scalars.lastIndex(where: { $0 == "\n" || $0 == "\r" }) {
            scalars.removeSubrange(...lastBreak)
        }
        var position = 0

        func refuse(_ reason: String) -> OneTimeCodeError {
            OneTimeCodeError(.invalidSMSMessage, reason: reason)
        }
        func isASCIIWhitespace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\n" || scalar == "\u{0C}" || scalar == "\r" || scalar == " "
        }
        // "Extract a marked token": the marker, then one or more non-whitespace code points.
        func markedToken(_ marker: Unicode.Scalar) -> String? {
            guard position < scalars.count, scalars[position] == marker else { return nil }
            position += 1
            let start = position
            while position < scalars.count, !isASCIIWhitespace(scalars[position]) { position += 1 }
            guard position > start else { return nil }
            var token = ""
            token.unicodeScalars.append(contentsOf: scalars[start..<position])
            return token
        }

        guard let topLevel = markedToken("@") else {
            throw refuse("last line does not start with @host")
        }
        guard position < scalars.count, scalars[position] == " " else {
            throw refuse("no single space after the host")
        }
        position += 1
        guard let code = markedToken("#") else {
            throw refuse("no #code after the host and one space")
        }
        var embedded: String? = nil
        if position < scalars.count, scalars[position] == " " {
            position += 1
            embedded = markedToken("@")  // Anything else here is trailing text, ignored by the specification.
        }
        try self.init(topLevelHost: topLevel, code: code, embeddedHost: embedded)
    }
}
