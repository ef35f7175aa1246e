import WebAuthn

/// Codes the virtual client and authenticator refuse with. The names are the `DOMException` names a browser
/// rejects `navigator.credentials.create()` / `.get()` with (W3C WebAuthn Level 3 §5.1.3, §5.1.4), so a test can
/// expect the same refusal it would see from a browser. Malformed options use ``WebAuthnError/Code/invalidOptions``
/// (a browser's `TypeError`).
extension WebAuthnError.Code {
    /// `InvalidStateError`: a credential in `excludeCredentials` is already on this authenticator.
    public static let invalidStateError = custom("InvalidStateError")
    /// `NotAllowedError`: no usable credential, user verification required but unavailable, or the user refused.
    public static let notAllowedError = custom("NotAllowedError")
    /// `SecurityError`: the origin is not a secure context or the RP ID is not a registrable suffix of its host.
    public static let securityError = custom("SecurityError")
    /// `NotSupportedError`: none of `pubKeyCredParams` is an algorithm this authenticator has.
    public static let notSupportedError = custom("NotSupportedError")
    /// The authenticator itself failed (key generation or signing); not caused by the options.
    public static let virtualAuthenticatorFailure = custom("virtualAuthenticatorFailure")
}
