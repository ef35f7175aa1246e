import ArgumentParser
import Foundation
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

struct SealKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal-keys",
        abstract: "Inspect and rotate the keys that seal TOTP secrets and phone numbers at rest.",
        discussion: """
            The sealing key file (--sealing-key-file, SESAME_SEALING_KEY_FILE) holds one entry per line: a base64 \
            256-bit key or the word database (the key derived from the server secret). The first entry seals new \
            values; every entry opens values sealed under it. docs/server.md describes a rotation step by step.
            """,
        subcommands: [Status.self, Rotate.self, Generate.self]
    )

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Count the stored secrets under each key (key ids only).")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            let keys = try options.resolve().sealingKeyFile.map { try SealingKeyFile.load(path: $0) }
            try await withAdmin(options) { admin in
                for line in try await admin.sealingStatus(keys: keys) { print(line) }
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal every stored secret again under the key file's first entry (safe while servers run)."
        )
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in
                for line in try await admin.resealSecrets() { print(line) }
            }
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new random 256-bit key as a key file line (standard base64)."
        )

        func run() {
            print(SealingKey.generateLine())
        }
    }
}
