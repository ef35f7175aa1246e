import ArgumentParser
import Foundation
import SMTP
import SesameCore
import SesameMail
import SesameServer

struct MailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mail",
        abstract: "Check the mail relay the server is configured with.",
        subcommands: [Test.self]
    )

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a test mail now through the configured relay and print the relay's answer.",
            discussion: """
                Uses the same settings as `sesame serve` (smtp-url, smtp-from, smtp-password-file, smtp-ca-file). \
                Exit status 0 when the relay accepted the mail, 1 when it refused it or could not be reached (the \
                reason is printed; try-again-later failures say so), 2 when the settings are not usable.
                """)

        @OptionGroup var options: ServerOptions
        @Option(help: "The address to send the test mail to.") var to: String

        func run() async throws {
            let configuration = try options.resolve()
            guard !configuration.smtpURL.isEmpty else {
                print("smtp-url is not set: the server prints mail to standard output instead of sending it")
                throw ExitCode(2)
            }
            let transport: SMTPTransport
            do { transport = try SMTPTransport(configuration) } catch {
                print("the mail settings are not usable: \(error)")
                throw ExitCode(2)
            }
            let host = URL(string: configuration.origin)?.host ?? "localhost"
            let mail = OutgoingMail(
                to: to, subject: "Sesame test mail",
                text: "This mail was sent by `sesame mail test` on \(host) to check the relay settings.")
            do {
                let reply = try await transport.send(mail, messageID: "test-\(UUID().uuidString.lowercased())@\(host)")
                print("sent: the relay answered \(reply)")
            } catch {
                print("not sent (\(error.isTransient ? "try again later" : "refused")): \(error.reason)")
                if let reply = error.reply { print("the relay answered \(reply)") }
                throw ExitCode(1)
            }
        }
    }
}
