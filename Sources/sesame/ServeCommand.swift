import ArgumentParser
import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import SesameServer
import SesameCore
import SesameWeb
import SesameMetadata
import SesameSecondFactors
import SesameIdentityProvider
import SesamePasswords
import SesamePasskeys
import SesameAccount
import SesameReauthentication
import SesameKeychainSync
import SesameForwardAuth
import SesameOperations

/// Flags shared by every command that opens the database (`serve`, `migrate`, `users`, `audit`, `seal-keys`).
///
/// The setting flags are not declared here one by one: they come from the settings table
/// (`ServerConfiguration.settings`), which also feeds the environment variables, the JSON config file,
/// docs/configuration.md and the help text, so they cannot drift apart (`SettingsTests`).
struct ServerOptions: ParsableArguments {
    @Option(help: "JSON config file (setting keys as in docs/configuration.md). Also SESAME_CONFIG.")
    var config: String?
    @Argument(
        parsing: .allUnrecognized, help: ArgumentHelp("Settings, as --flag value (see below).", visibility: .hidden))
    var settings: [String] = []

    func resolve() throws -> ServerConfiguration {
        do {
            let flags = try ServerConfiguration.flags(from: settings)
            return try ServerConfiguration.resolve(
                flags: flags, environment: ProcessInfo.processInfo.environment, configFile: config)
        } catch {
            throw StartupErrors.explained(error)
        }
    }
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Sesame server (passkeys, passwords, one-time codes) over HTTP.",
        discussion: """
            Every setting comes from, in increasing precedence: its default, the JSON config file \
            (--config or SESAME_CONFIG), its SESAME_* environment variable, its flag.

            SETTINGS:
            \(ServerConfiguration.helpText)

            The database is created and migrated on start. SIGTERM or SIGINT stops the server gracefully.
            """
    )

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        if configuration.taskExecutor == .eventLoops {
            // Before any request task exists: from here on, a task started or resumed on an event loop stays there.
            // Hummingbird serves on the same singleton group, so a request needs no thread hand-off.
            guard NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() else {
                throw StartupErrors.explained(
                    ConfigurationError(
                        "task-executor: this platform cannot run Swift tasks on the event loops; use --task-executor global"
                    ))
            }
        }
        let app: any ApplicationProtocol
        do {
            app = try await buildApplication(configuration: configuration)
        } catch {
            throw StartupErrors.explained(error)
        }
        try await app.runService()
    }
}
