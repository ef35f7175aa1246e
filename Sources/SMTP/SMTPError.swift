/// The one error type of the `SMTP` library.
///
/// Callers branch on ``code``, an opaque, extensible value; two errors are equal when their codes are equal, and the
/// reason, file and line are diagnostics only. ``reply`` is the server's answer when the error is one (its text is the
/// server's words, never a password: the client writes credentials, the server never echoes them back in a reply this
/// library keeps).
///
/// ``isTransient`` says whether trying again later may succeed (RFC 5321 §4.2.1: a 4yz reply, or the server could not
/// be reached or answered too slowly), which is how a sender decides between retrying and giving up.
public struct SMTPError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A reply line that is not `ddd`, `ddd text` or `ddd-text`, a reply whose lines disagree on the code, or a
        /// reply longer than the limits (RFC 5321 §4.2, §4.5.3.1.5).
        public static let malformedReply = Code("malformedReply")
        /// The server answered 4yz: try again later.
        public static let transientFailure = Code("transientFailure")
        /// The server answered 5yz: this message will not be accepted as it is.
        public static let permanentFailure = Code("permanentFailure")
        /// A reply this state of the conversation does not expect (e.g. 3yz to MAIL FROM).
        public static let unexpectedReply = Code("unexpectedReply")
        /// Could not connect, or the connection closed or failed mid-conversation.
        public static let connectionFailed = Code("connectionFailed")
        /// The server did not answer within the timeout.
        public static let timedOut = Code("timedOut")
        /// TLS could not be set up: the handshake failed or the certificate did not verify for the host.
        public static let tlsFailed = Code("tlsFailed")
        /// The server does not offer STARTTLS and the configuration requires it.
        public static let startTLSUnavailable = Code("startTLSUnavailable")
        /// The server refused the credentials, or offers no mechanism this client speaks (PLAIN, LOGIN).
        public static let authenticationFailed = Code("authenticationFailed")
        /// An address, header or configuration value this client refuses to send (e.g. a line break in a subject).
        public static let invalidMessage = Code("invalidMessage")
        /// An SMTP URL or configuration this client cannot use.
        public static let invalidConfiguration = Code("invalidConfiguration")
    }

    public let code: Code
    public let reason: String
    /// The server's reply, when the error is one.
    public let reply: SMTPReply?
    public let file: String
    public let line: UInt

    public init(_ code: Code, reason: String, reply: SMTPReply? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.reply = reply
        self.file = file
        self.line = line
    }

    /// Equality by code alone, for `#expect(throws:)`-style checks.
    public init(_ code: Code) { self.init(code, reason: "", file: "", line: 0) }

    /// Whether sending again later may succeed.
    public var isTransient: Bool {
        [.transientFailure, .connectionFailed, .timedOut].contains(code)
    }

    public var description: String { "SMTPError.\(code): \(reason) (\(file):\(line))" }

    public static func == (lhs: SMTPError, rhs: SMTPError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
