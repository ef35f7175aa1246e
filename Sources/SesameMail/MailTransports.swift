import Foundation
import Logging
import SMTP
import SesameCore

/// Delivers through the configured relay with the `SMTP` library: one connection per mail, the relay's verdict
/// mapped to whether the outbox tries again.
package struct SMTPTransport: MailTransport {
    package let client: SMTPClient
    package let sender: MailSender

    package init(client: SMTPClient, sender: MailSender) {
        self.client = client
        self.sender = sender
    }

    /// The transport `configuration` names; its password and CA file are read now.
    package init(_ configuration: ServerConfiguration) throws {
        var smtp = try SMTPConfiguration(
            url: configuration.smtpURL,
            password: try configuration.smtpPasswordFile.isEmpty
                ? nil : Self.read(configuration.smtpPasswordFile).trimmingCharacters(in: .newlines),
            localName: URL(string: configuration.origin)?.host ?? "localhost")
        smtp.timeout = .seconds(Int64(configuration.smtpTimeout))
        if !configuration.smtpCAFile.isEmpty {
            smtp.caCertificatesPEM = Array(try Self.read(configuration.smtpCAFile).utf8)
        }
        self.init(client: SMTPClient(smtp), sender: try MailSender(configuration.smtpFrom))
    }

    private static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { throw ConfigurationError("\(path) cannot be read") }
        return text
    }

    /// Sends one mail now; the relay's reply to the message (often its queue id).
    @discardableResult
    package func send(_ mail: OutgoingMail, messageID: String, date: Date = Date()) async throws(SMTPError)
        -> SMTPReply
    {
        let message = MailMessage(
            from: sender.address, fromName: sender.name, to: [try MailAddress(mail.to)], subject: mail.subject,
            text: mail.text, html: mail.html, messageID: messageID, date: date,
            listUnsubscribe: mail.listUnsubscribe)
        return try await client.send(message)
    }

    package func deliver(_ mail: OutgoingMail, messageID: String) async throws(MailDeliveryError) {
        do {
            try await send(mail, messageID: messageID)
        } catch {
            throw MailDeliveryError(
                transient: error.isTransient, reason: "\(error.code): \(error.reply?.description ?? error.reason)")
        }
    }
}

/// Development transport: prints each mail to standard output (or hands it to `observer`, for tests). Refused on an
/// https origin unless `allowConsoleMail`.
package struct ConsoleMailTransport: MailTransport {
    package let observer: (@Sendable (OutgoingMail) -> Void)?
    package init(observer: (@Sendable (OutgoingMail) -> Void)? = nil) { self.observer = observer }

    package func deliver(_ mail: OutgoingMail, messageID: String) async throws(MailDeliveryError) {
        if let observer {
            observer(mail)
        } else {
            FileHandle.standardOutput.write(
                Data("Mail to \(mail.to) <\(messageID)>\nSubject: \(mail.subject)\n\n\(mail.text)\n".utf8))
        }
    }
}

/// No relay on an https origin: printing mail there would put people's links and codes in the logs, so each mail is
/// given up with the reason.
package struct UnconfiguredMailTransport: MailTransport {
    package func deliver(_ mail: OutgoingMail, messageID: String) async throws(MailDeliveryError) {
        throw MailDeliveryError(transient: false, reason: "no mail relay is configured (smtp-url)")
    }
}

/// The transport the configuration names: the relay; without one, the console on an http origin (or where
/// `allowConsoleMail` says so), else none.
package func makeMailTransport(_ configuration: ServerConfiguration) throws -> any MailTransport {
    if !configuration.smtpURL.isEmpty { return try SMTPTransport(configuration) }
    return !configuration.isSecureOrigin || configuration.allowConsoleMail
        ? ConsoleMailTransport() : UnconfiguredMailTransport()
}
