import ArgumentParser

import Foundation
import SesameCore

@main
struct Sesame: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sesame",
        abstract: "Passkeys, security keys and one-time codes for your sign-in.",
        version: SesameVersion.description,
        subcommands: SesameSubcommands.all
    )

    /// Runs the command line. Exit statuses: 0 success, 1 a refusal (a verification failed, a code was wrong),
    /// 2 bad usage (unknown option, missing or invalid argument). ArgumentParser's own usage status (64) is
    /// mapped to 2 so every command reports bad usage the same way.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                let message = fullMessage(for: error)
                if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
                Self.exit(withError: ExitCode(2))
            }
            Self.exit(withError: error)
        }
    }
}
