import ArgumentParser
import Foundation
import Logging
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
                reason is printed; try-again-later failures say so), 2 when the settings are not usable. \
                With --outbox the mail is written to the outbox of the configured database instead, for the running \
                servers' senders to deliver (the whole path of the server's own mail, retries included): exit \
                status 0 once written, 2 when the settings are not usable or the database cannot be opened.
                """)

        @OptionGroup var options: ServerOptions
        @Option(help: "The address to send the test mail to.") var to: String
        @Flag(help: "Write the mail to the outbox of the configured database for the running server to send.")
        var outbox = false
        @Option(help: "With --outbox: how many test mails to write, each in its own transaction (1–100000).")
        var count = 1

        func validate() throws {
            guard (1...100_000).contains(count) else { throw ValidationError("--count: 1–100000") }
            guard count == 1 || outbox else { throw ValidationError("--count needs --outbox") }
        }

        func run() async throws {
            let configuration = try options.resolve()
            if outbox { return try await queue(configuration) }
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

        /// Writes the test mail(s) to the outbox, as a feature's change would; the server's sender takes them from there.
        private func queue(_ configuration: SesameCore.ServerConfiguration) async throws {
            do { _ = try MailAddress(to) } catch {
                print("--to: \(error.reason)")
                throw ExitCode(2)
            }
            if configuration.smtpURL.isEmpty {
                print("note: smtp-url is not set: a server with these settings prints mail instead of sending it")
            }
            var logger = Logger(label: "sesame.mail")
            logger.logLevel = .warning
            let engine: SQLEngine
            let store: SQLStore
            do {
                (engine, store) = try await openStore(configuration, logger: logger)
            } catch {
                print("the database cannot be opened: \(StartupErrors.explained(error))")
                throw ExitCode(2)
            }
            let host = URL(string: configuration.origin)?.host ?? "localhost"
            let started = ContinuousClock.now
            do {
                for _ in 0..<count {
                    let id = "test-\(UUID().uuidString.lowercased())"
                    let mail = OutgoingMail(
                        to: to, subject: "Sesame test mail",
                        text: "This mail was written to the outbox by `sesame mail test --outbox` on \(host) to "
                            + "check delivery by the running server.")
                    try await store.enqueueMail(mail, kind: "test", id: id, at: Date())
                }
            } catch {
                try? await engine.shutdown()
                throw error
            }
            let elapsed = ContinuousClock.now - started
            try await engine.shutdown()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(
                "queued \(count) test mail\(count == 1 ? "" : "s") in \(String(format: "%.3f", seconds)) s: "
                    + "the running server sends \(count == 1 ? "it" : "them") (see /health, /metrics)")
        }
    }
}
