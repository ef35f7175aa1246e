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

/// `sesame metadata import|show`: the FIDO metadata BLOB the server checks attestations and status reports against.
struct MetadataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metadata",
        abstract: "Import and show the FIDO metadata (MDS3) BLOB the server uses at registration.",
        subcommands: [Import.self, Show.self]
    )

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Verify a downloaded MDS3 BLOB (signature, chain to the FIDO root, CRLs, nextUpdate) and store it.",
            discussion: """
                Sesame never downloads it: fetch https://mds3.fidoalliance.org/ yourself. The BLOB must be newer (its \
                number) than the one held. Running servers load it within a minute, without a restart.
                """
        )
        @Argument(help: "The BLOB (a JWT file).") var blob: String
        @Option(name: .customLong("root"), help: "A PEM root to verify against instead of the bundled FIDO root.")
        var roots: [String] = []
        @Option(name: .customLong("crl"), help: "A PEM CRL for the signer's chain (repeatable).") var crls: [String] =
            []
        @Option(name: .customLong("at"), help: "Verify as of this ISO 8601 time instead of now.") var at: String?
        @Flag(name: .customLong("allow-stale"), help: "Accept a BLOB whose nextUpdate day has passed (test BLOBs).")
        var allowStale = false
        @OptionGroup var options: ServerOptions

        func run() async throws {
            func read(_ path: String) throws -> String {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ValidationError("cannot read \(path)")
                }
                return text
            }
            var request = MetadataAdmin.MetadataImport(
                jwt: try read(blob).trimmingCharacters(in: .whitespacesAndNewlines))
            request.rootsPEM = try roots.map(read)
            request.crlsPEM = try crls.map(read)
            request.allowStale = allowStale
            if let at {
                guard let time = ISO8601DateFormatter().date(from: at) else {
                    throw ValidationError("--at must be ISO 8601, e.g. 2024-01-31T12:00:00Z")
                }
                request.time = time
            }
            try await withStore(options) { store, _ in
                for line in try await MetadataAdmin(store: store).importMetadata(request) { print(line) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The metadata BLOB in force: number, next update, entries.")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, _ in
                for line in try await MetadataAdmin(store: store).showMetadata() { print(line) }
            }
        }
    }
}
