import Foundation
import SesameCore
import SesameMail

/// Whether accounts keep an email address (`email` setting).
public enum EmailAddressPolicy: String, Sendable, CaseIterable {
    /// No addresses: the routes answer `email_not_enabled`, pages hide the section, the `email` scope gives nothing.
    case off
    /// A person may add one address to their account and verify it.
    case optional
    /// As `optional`, and a verified address cannot be removed (only changed); the account page asks for one.
    case required
}

extension ServerConfiguration {
    /// Off by default: an address is only useful where mail can be delivered, and an https server without a relay
    /// gives every mail up (`UnconfiguredMailTransport`). Turning addresses on is the operator's decision, made with
    /// `smtp-url`; an upgrade never starts mailing people or answering the `email` scope by itself.
    private enum EmailKey: SettingKey { static let defaultValue = EmailAddressPolicy.off }

    /// Off by default: it makes the mailbox a way into the account (docs/threat-model.md, "Recovery by email").
    private enum EmailRecoveryKey: SettingKey { static let defaultValue = false }
    private enum RecoveryLinkHoursKey: SettingKey { static let defaultValue = 24 }

    /// Hours a recovery link an administrator makes (`RecoveryLinks`) works, unless used first.
    public var recoveryLinkHours: Int {
        get { self[RecoveryLinkHoursKey.self] }
        set { self[RecoveryLinkHoursKey.self] = newValue }
    }

    /// Whether a person may sign in with a code mailed to their verified address, into a session that can only add a
    /// passkey or security key (docs/email.md, "Recovery by email").
    public var emailRecovery: Bool {
        get { self[EmailRecoveryKey.self] }
        set { self[EmailRecoveryKey.self] = newValue }
    }

    /// Whether accounts keep an email address: `off`, `optional` or `required`.
    public var email: EmailAddressPolicy {
        get { self[EmailKey.self] }
        set { self[EmailKey.self] = newValue }
    }

    /// The address feature's rows of the settings table.
    package static let emailSettings: [Setting] = [
        Setting(
            key: "email", flag: "--email", environment: "SESAME_EMAIL",
            defaultValue: EmailKey.defaultValue.rawValue,
            help: "Email addresses on accounts: off, optional or required (a verified one cannot be removed)."
        ) { c, v throws(ConfigurationError) in
            guard let policy = EmailAddressPolicy(rawValue: v) else {
                throw ConfigurationError("email: expected off, optional or required")
            }
            c.email = policy
        },
        Setting(
            key: "emailRecovery", flag: "--email-recovery", environment: "SESAME_EMAIL_RECOVERY",
            defaultValue: String(EmailRecoveryKey.defaultValue),
            help:
                "Let a person without a usable passkey sign in with a code mailed to their verified address, into a session that can only add a passkey (the mailbox becomes a way in)."
        ) { c, v throws(ConfigurationError) in c.emailRecovery = try bool("email-recovery", v) },
        Setting(
            key: "recoveryLinkHours", flag: "--recovery-link-hours", environment: "SESAME_RECOVERY_LINK_HOURS",
            defaultValue: String(RecoveryLinkHoursKey.defaultValue),
            help:
                "Hours a recovery link an administrator makes for a person works (once) before it expires."
        ) { c, v throws(ConfigurationError) in c.recoveryLinkHours = try int("recovery-link-hours", v, 1...168) },
    ]

    /// Addresses need mail that arrives: on an https origin, a relay (`smtp-url`) or, knowingly, the console.
    package static func validateEmail(_ c: ServerConfiguration) throws(ConfigurationError) {
        if c.emailRecovery, c.email == .off {
            throw ConfigurationError("email-recovery: needs addresses on; set email to optional or required")
        }
        guard c.email != .off, c.isSecureOrigin, c.smtpURL.isEmpty, !c.allowConsoleMail else { return }
        throw ConfigurationError(
            "email: verification mail needs a relay on an https origin; set smtp-url (or allow-console-mail to true)")
    }
}
