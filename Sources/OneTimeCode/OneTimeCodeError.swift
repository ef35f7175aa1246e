/// The one error type of the `OneTimeCode` library.
///
/// Callers branch on ``code``, which is an opaque, extensible value: new codes can be added without breaking
/// `switch` statements, because there are none to break. Two errors are equal when their codes are equal; the
/// reason text, file and line are diagnostics only.
///
/// The ``description`` never contains a secret, a one-time code or a recovery code: the library builds every
/// reason from fixed text and non-secret numbers (lengths, positions, parameter names). Keep it that way when
/// adding a throw site.
public struct OneTimeCodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) { self.name = name }

        public var description: String { name }

        /// Base32 text holds a character outside the RFC 4648 alphabet, or its length cannot be a whole
        /// number of bytes.
        public static let invalidBase32 = Code("invalidBase32")
        /// A shared secret is shorter than the 128 bits RFC 4226 §4 requires.
        public static let secretTooShort = Code("secretTooShort")
        /// A shared secret longer than ``OTPSecret/maximumByteCount``.
        public static let secretTooLong = Code("secretTooLong")
        /// A code length outside 6...8 digits.
        public static let unsupportedDigits = Code("unsupportedDigits")
        /// A TOTP period that is not a positive number of seconds.
        public static let invalidPeriod = Code("invalidPeriod")
        /// A hash algorithm other than SHA-1, SHA-256 or SHA-512.
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm")
        /// A time before the Unix epoch or too far in the future to count in steps.
        public static let timeOutOfRange = Code("timeOutOfRange")
        /// A verification window outside the supported range.
        public static let invalidWindow = Code("invalidWindow")
        /// A key URI that cannot be parsed (scheme, type, label, query or a parameter's value).
        public static let invalidKeyURI = Code("invalidKeyURI")
        /// A key URI without a `secret` parameter.
        public static let missingSecret = Code("missingSecret")
        /// An `hotp` key URI without a `counter` parameter.
        public static let missingCounter = Code("missingCounter")
        /// The issuer in a key URI's label differs from its `issuer` parameter.
        public static let issuerMismatch = Code("issuerMismatch")
        /// A host that is not a valid DNS name.
        public static let invalidHost = Code("invalidHost")
        /// Text that is not an origin-bound one-time code message, or a code that cannot be put in one.
        public static let invalidSMSMessage = Code("invalidSMSMessage")
        /// A recovery code that is not made of the recovery alphabet, or has the wrong length; or an invalid
        /// request for a set of recovery codes.
        public static let invalidRecoveryCode = Code("invalidRecoveryCode")
        /// Input longer than the largest QR code (version 40) holds at the requested error-correction level.
        public static let dataTooLong = Code("dataTooLong")
        /// A QR image option (scale, quiet zone) outside the supported range.
        public static let invalidImageOptions = Code("invalidImageOptions")
    }

    public let code: Code
    /// Human-readable detail. Never holds secret material.
    public let reason: String
    public let file: String
    public let line: UInt

    public init(_ code: Code, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public var description: String {
        "OneTimeCodeError.\(code): \(reason) (\(file):\(line))"
    }

    public static func == (lhs: OneTimeCodeError, rhs: OneTimeCodeError) -> Bool {
        lhs.code == rhs.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// Lets tests and callers write `#expect(throws: OneTimeCodeError.Code.invalidBase32)`-style checks via
    /// `OneTimeCodeError(.invalidBase32)`: only the code takes part in equality.
    public init(_ code: Code) {
        self.init(code, reason: "", file: "", line: 0)
    }
}
