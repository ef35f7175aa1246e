import Foundation
import SMTP
import SesameCore

extension ServerConfiguration {
    private enum SMTPURLKey: SettingKey { static let defaultValue = "" }
    private enum SMTPFromKey: SettingKey { static let defaultValue = "" }
    private enum SMTPPasswordFileKey: SettingKey { static let defaultValue = "" }
    private enum SMTPCAFileKey: SettingKey { static let defaultValue = "" }
    private enum AllowConsoleMailKey: SettingKey { static let defaultValue = false }
    private enum MailRetentionDaysKey: SettingKey { static let defaultValue = 7 }
    private enum SMTPTimeoutKey: SettingKey { static let defaultValue = 30 }
    private enum MailFirstRetryKey: SettingKey { static let defaultValue = 2 }

    /// The relay mail goes through: `smtp://[USER[:PASSWORD]@]HOST[:PORT]` (STARTTLS, port 587) or `smtps://…`
    /// (TLS from the first byte, port 465). Empty: mail is printed to standard output (development only).
    public var smtpURL: String {
        get { self[SMTPURLKey.self] }
        set { self[SMTPURLKey.self] = newValue }
    }

    /// The sender address (`From`), e.g. `sesame@example.org`, or `Name <address>`.
    public var smtpFrom: String {
        get { self[SMTPFromKey.self] }
        set { self[SMTPFromKey.self] = newValue }
    }

    /// A file holding the relay's password (in place of one in the URL); read at start.
    public var smtpPasswordFile: String {
        get { self[SMTPPasswordFileKey.self] }
        set { self[SMTPPasswordFileKey.self] = newValue }
    }

    /// PEM certificates of a private relay's CA, trusted beside the system's.
    public var smtpCAFile: String {
        get { self[SMTPCAFileKey.self] }
        set { self[SMTPCAFileKey.self] = newValue }
    }

    /// Allow printing mail (with its links and codes) to standard output on an https origin.
    public var allowConsoleMail: Bool {
        get { self[AllowConsoleMailKey.self] }
        set { self[AllowConsoleMailKey.self] = newValue }
    }

    /// How many days sent and given-up mails (their content already gone) stay in the outbox's table.
    public var mailRetentionDays: Int {
        get { self[MailRetentionDaysKey.self] }
        set { self[MailRetentionDaysKey.self] = newValue }
    }

    /// Seconds each step of a conversation with the relay may take (connecting, each reply, sending the message).
    /// A mail a node took is leased to it for as long as a whole conversation can take (``mailLease``).
    public var smtpTimeout: Int {
        get { self[SMTPTimeoutKey.self] }
        set { self[SMTPTimeoutKey.self] = newValue }
    }

    /// Seconds before the first retry of a mail the relay did not take (unreachable, slow, or 4xx); each later retry
    /// waits twice as long as the one before, up to five minutes.
    public var mailFirstRetrySeconds: Int {
        get { self[MailFirstRetryKey.self] }
        set { self[MailFirstRetryKey.self] = newValue }
    }

    /// How long a node holds a mail it took before another node may take it: as long as a whole conversation with
    /// the relay can take (each of its at most 15 steps within `smtpTimeout`), so a mail is never taken again while
    /// a live node still sends it, and a mail a crashed node held is taken again after that long.
    package var mailLease: TimeInterval { TimeInterval(smtpTimeout * 15) }

    /// The outbox sender's retries and lease as the settings give them.
    package var outboxSchedule: OutboxSchedule {
        OutboxSchedule(firstRetry: TimeInterval(mailFirstRetrySeconds), lease: mailLease)
    }

    /// The mail delivery rows of the settings table.
    package static let mailSettings: [Setting] = [
        Setting(
            key: "smtpUrl", flag: "--smtp-url", environment: "SESAME_SMTP_URL", defaultValue: "(none)",
            help:
                "smtp://[USER[:PASSWORD]@]HOST[:PORT] (STARTTLS) or smtps://… (TLS); without one, mail is printed on http origins only.",
            secretURLPassword: true
        ) { c, v throws(ConfigurationError) in c.smtpURL = v },
        Setting(
            key: "smtpFrom", flag: "--smtp-from", environment: "SESAME_SMTP_FROM",
            defaultValue: "(none)",
            help: "The sender: ADDRESS or \"Name <ADDRESS>\" (needed with smtp-url)."
        ) { c, v throws(ConfigurationError) in c.smtpFrom = v },
        Setting(
            key: "smtpPasswordFile", flag: "--smtp-password-file", environment: "SESAME_SMTP_PASSWORD_FILE",
            defaultValue: "(none)",
            help: "A file holding the relay's password, in place of one in smtp-url.", secret: true
        ) { c, v throws(ConfigurationError) in c.smtpPasswordFile = v },
        Setting(
            key: "smtpCaFile", flag: "--smtp-ca-file", environment: "SESAME_SMTP_CA_FILE",
            defaultValue: "(none)",
            help: "PEM certificates of a private relay's CA, trusted beside the system's roots."
        ) { c, v throws(ConfigurationError) in c.smtpCAFile = v },
        Setting(
            key: "allowConsoleMail", flag: "--allow-console-mail", environment: "SESAME_ALLOW_CONSOLE_MAIL",
            defaultValue: String(AllowConsoleMailKey.defaultValue),
            help: "Allow printing mail (links and codes) to standard output on an https origin."
        ) { c, v throws(ConfigurationError) in c.allowConsoleMail = try bool("allow-console-mail", v) },
        Setting(
            key: "mailRetentionDays", flag: "--mail-retention-days", environment: "SESAME_MAIL_RETENTION_DAYS",
            defaultValue: String(MailRetentionDaysKey.defaultValue),
            help: "Days sent and given-up mails (without their content) stay in the outbox (1–365)."
        ) { c, v throws(ConfigurationError) in
            guard let days = Int(v), (1...365).contains(days) else {
                throw ConfigurationError("mail-retention-days: expected a whole number of days, 1–365")
            }
            c.mailRetentionDays = days
        },
        Setting(
            key: "smtpTimeout", flag: "--smtp-timeout", environment: "SESAME_SMTP_TIMEOUT",
            defaultValue: String(SMTPTimeoutKey.defaultValue),
            help:
                "Seconds each step with the relay may take (1–300); a node holds a mail it sends for 15 times as long."
        ) { c, v throws(ConfigurationError) in
            guard let seconds = Int(v), (1...300).contains(seconds) else {
                throw ConfigurationError("smtp-timeout: expected a whole number of seconds, 1–300")
            }
            c.smtpTimeout = seconds
        },
        Setting(
            key: "mailFirstRetrySeconds", flag: "--mail-first-retry-seconds",
            environment: "SESAME_MAIL_FIRST_RETRY_SECONDS", defaultValue: String(MailFirstRetryKey.defaultValue),
            help:
                "Seconds before a mail the relay did not take is tried again (1–60); each retry waits twice as long, up to 5 minutes."
        ) { c, v throws(ConfigurationError) in
            guard let seconds = Int(v), (1...60).contains(seconds) else {
                throw ConfigurationError("mail-first-retry-seconds: expected a whole number of seconds, 1–60")
            }
            c.mailFirstRetrySeconds = seconds
        },
    ]

    /// A relay is named by a URL this client can use and mail comes from an address. Without one, mail is printed on
    /// an http origin (development) and not sent at all on an https origin unless `allowConsoleMail` (each mail is
    /// then given up with the reason, and `sesame mail test` says so).
    package static func validateMail(_ c: ServerConfiguration) throws(ConfigurationError) {
        guard !c.smtpURL.isEmpty else { return }
        do {
            _ = try SMTPConfiguration(url: c.smtpURL)
            _ = try MailSender(c.smtpFrom)
        } catch {
            throw ConfigurationError(
                "\(error.code == .invalidConfiguration ? "smtp-url" : "smtp-from"): \(error.reason)")
        }
        for (name, path) in [("smtp-password-file", c.smtpPasswordFile), ("smtp-ca-file", c.smtpCAFile)]
        where !path.isEmpty {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ConfigurationError("\(name): \(path) cannot be read")
            }
        }
    }
}

/// The `From` of Sesame's mail: `address` or `Name <address>`.
package struct MailSender: Sendable {
    package let address: MailAddress
    package let name: String?

    package init(_ text: String) throws(SMTPError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            address = try MailAddress(
                String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]))
            let name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            self.name = name.isEmpty ? nil : name
        } else {
            address = try MailAddress(trimmed)
            name = nil
        }
    }
}
