/// Why the virtual client or authenticator refused a request.
///
/// The library's one error type, in the shape of `WebAuthnError`: `code` is opaque and extensible (compare with `==`,
/// which looks at the code only), `detail` is safe to show and never holds key or response bytes. The refusal codes
/// carry the `DOMException` names a browser rejects `navigator.credentials.create()` / `.get()` with (W3C WebAuthn
/// Level 3 §5.1.3 and §5.1.4), so a test expects the same refusal it would see from a browser; the other codes are
/// mistakes of the caller (options, configuration, a stored credential file) or a failure of the authenticator itself.
public struct VirtualAuthenticatorError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable machine-readable name; for refusals, the browser's `DOMException` name.
        public let name: String
        private init(_ name: String) { self.name = name }

        public var description: String { name }

        /// `InvalidStateError`: a credential in `excludeCredentials` is already on this authenticator.
        public static let invalidStateError = Code("InvalidStateError")
        /// `NotAllowedError`: no usable credential, user verification required but unavailable, or the user refused.
        public static let notAllowedError = Code("NotAllowedError")
        /// `SecurityError`: the origin is not a secure context or the RP ID is not a registrable suffix of its host.
        public static let securityError = Code("SecurityError")
        /// `NotSupportedError`: none of `pubKeyCredParams` is an algorithm this authenticator has.
        public static let notSupportedError = Code("NotSupportedError")

        /// The options are not WebAuthn options JSON, or break one of its rules (a browser's `TypeError`).
        public static let invalidOptions = Code("invalidOptions")
        /// The authenticator's configuration is unusable (an AAGUID that is not 16 bytes, a credential ID length
        /// outside 16…1023).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A credential store given to ``VirtualAuthenticator/init(configuration:importing:)`` is not one that
        /// ``VirtualAuthenticator/exportCredentials()`` wrote.
        public static let invalidStore = Code("invalidStore")
        /// The authenticator itself failed (key generation or signing); not caused by the options.
        public static let authenticatorFailure = Code("authenticatorFailure")

        /// The codes a browser would show a page as a rejected promise with a `DOMException`: the authenticator
        /// or the person said no, as opposed to a caller's mistake.
        public static let refusals: Set<Code> = [
            .invalidStateError, .notAllowedError, .securityError, .notSupportedError,
        ]
    }

    public let code: Code
    /// Extra context that is safe to show (never key or response bytes).
    public let detail: String
    public let file: String
    public let line: Int

    public init(_ code: Code, detail: String = "", file: String = #fileID, line: Int = #line) {
        self.code = code
        self.detail = detail
        self.file = file
        self.line = line
    }

    /// Whether a browser would report this as a refusal (``Code/refusals``) rather than a caller's mistake.
    public var isRefusal: Bool { Code.refusals.contains(code) }

    public static func == (lhs: VirtualAuthenticatorError, rhs: VirtualAuthenticatorError) -> Bool {
        lhs.code == rhs.code
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        detail.isEmpty ? "VirtualAuthenticatorError.\(code.name)" : "VirtualAuthenticatorError.\(code.name): \(detail)"
    }
}
