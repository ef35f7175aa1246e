import ArgumentParser
import Foundation
import SesameAdminTokens
import SesameCore
import SesameServer

/// `sesame admin-tokens`: tokens for scripts that call the admin API (docs/console.md, "Admin API tokens").
struct AdminTokensCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-tokens",
        abstract: "Make, list and revoke admin API tokens (bearer tokens for /api/admin with chosen scopes).",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an admin API token; prints it once (only its hash is kept).",
            discussion: """
                Scopes: \(AdminScope.all.map(\.rawValue).joined(separator: ", ")). Send the token as \
                Authorization: Bearer TOKEN. Making one is audited.
                """
        )
        @Option(help: "What the token is for (1 to 64 characters), shown in lists and the audit log.") var name: String
        @Option(help: "Comma-separated scopes the token holds, e.g. people,groups.") var scope: String
        @Option(help: "Days until it expires (1 to 365).") var expiresIn: Int = AdminTokens.defaultLifetime
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, _ in
                for line in try await AdminTokensAdmin(store: store).create(
                    name: name, scopes: scope, days: expiresIn)
                {
                    print(line)
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List admin API tokens: id, name, scopes, created, expires, last used, revoked, state.")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, _ in
                for line in try await AdminTokensAdmin(store: store).list() { print(line) }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an admin API token: it stops working at once.")
        @Argument(help: "The token's id (sesame admin-tokens list).") var id: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, _ in
                print(try await AdminTokensAdmin(store: store).revoke(id))
            }
        }
    }
}
