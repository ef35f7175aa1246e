/// What a stored challenge row is for. Only `Ceremonies` creates, reads and consumes challenge rows, and only with
/// one of these purposes; a row is found only by the purpose it was stored with.
package enum ChallengePurpose: String, CaseIterable, Sendable {
    /// Passkey sign-up (WebAuthn registration), bound to the ceremony token.
    case registration
    /// Passkey sign-in (WebAuthn authentication), bound to the ceremony token.
    case authentication
    /// Adding a passkey to a signed-in account, bound to the session.
    case addPasskey = "add_passkey"
    /// Re-authenticating a session with a passkey, bound to the session.
    case reauthentication
    /// A password sign-in waiting for its second factor; keyed by the pending token's hash.
    case pendingSecondFactor = "second_factor"
    /// An SMS code for a pending password sign-in.
    case smsSignIn = "sms_sign_in"
    /// An SMS code for re-authenticating a session.
    case smsReauthentication = "sms_reauthentication"
    /// A phone-number change waiting for the code sent to the new number.
    case phoneChange = "sms_setup"
    /// Forward auth's one-time code for an app on another domain, bound to the app's origin; keyed by the code's hash.
    case forwardAuthCode = "forward_auth_code"
}
