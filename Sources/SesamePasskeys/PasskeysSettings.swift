import SesameCore

/// Who may create an account on the sign-up page and its API (`signUp` setting). An operator's
/// `sesame users create` is never refused.
public enum SignUpPolicy: String, Sendable, CaseIterable {
    /// Anyone may sign up (as before the setting existed).
    case open
    /// Only with an invitation (`sesame invites create`); a sign-up without one is `invitation_required`.
    case inviteOnly = "invite-only"
    /// No one: every sign-up is `sign_up_closed`, with or without an invitation.
    case closed
}

extension ServerConfiguration {
    private enum SignUpKey: SettingKey { static let defaultValue = SignUpPolicy.open }

    /// Who may sign up: `open`, `invite-only` or `closed`.
    public var signUp: SignUpPolicy {
        get { self[SignUpKey.self] }
        set { self[SignUpKey.self] = newValue }
    }

    /// Passkey sign-up's rows of the settings table.
    package static let passkeysSettings: [Setting] = [
        Setting(
            key: "signUp", flag: "--sign-up", environment: "SESAME_SIGN_UP",
            defaultValue: SignUpKey.defaultValue.rawValue,
            help:
                "Who may create an account: open, invite-only (with an invitation from sesame invites create) or closed (sesame users create still works)."
        ) { c, v throws(ConfigurationError) in
            guard let policy = SignUpPolicy(rawValue: v) else {
                throw ConfigurationError("sign-up: expected open, invite-only or closed")
            }
            c.signUp = policy
        }
    ]
}
