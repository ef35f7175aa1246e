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
        }
    ]

    /// Addresses need mail that arrives: on an https origin, a relay (`smtp-url`) or, knowingly, the console.
    package static func validateEmail(_ c: ServerConfiguration) throws(ConfigurationError) {
        guard c.email != .off, c.isSecureOrigin, c.smtpURL.isEmpty, !c.allowConsoleMail else { return }
        throw ConfigurationError(
            "email: verification mail needs a relay on an https origin; set smtp-url (or allow-console-mail to true)")
    }
}
