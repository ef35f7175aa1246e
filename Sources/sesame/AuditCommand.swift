import ArgumentParser
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

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "List audit events (sign-ins, failures, factor and passkey changes), newest first."
    )

    @Option(help: "Only this account (username or user id).") var user: String?
    @Option(help: "How many events.") var limit = 50
    @Flag(help: "One JSON object per line.") var json = false
    @OptionGroup var options: ServerOptions

    func run() async throws {
        try await withAdmin(options) { admin in
            for line in try await admin.auditLines(user: user, limit: limit, json: json) { print(line) }
        }
    }
}
