import ArgumentParser
import Logging
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

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create or update the database schema, then exit (safe while other nodes start).",
        discussion: "serve does the same on start; use this to migrate before rolling out new nodes."
    )

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        let logger = Logger(label: "sesame.migrate")
        let engine: SQLEngine
        do {
            (engine, _) = try await openStore(configuration, logger: logger)
        } catch {
            throw StartupErrors.explained(error)
        }
        let versions = try await engine.appliedMigrations()
        try await engine.shutdown()
        print("schema at version \(versions.last ?? 0) (\(versions.count) migrations applied)")
    }
}
