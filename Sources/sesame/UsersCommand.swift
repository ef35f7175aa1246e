import ArgumentParser
import Foundation
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
import SesameGroups
import SesameEmail

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "List, show, disable, enable or delete accounts; put them in groups.",
        subcommands: [
            List.self, Show.self, Create.self, Disable.self, Enable.self, Delete.self, Export.self,
            UserGroupsCommand.self, RecoveryLink.self,
        ]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every account.")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in
                for line in try await admin.listUsers() { print(line) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an account: passkeys, factors, sessions.")
        @Argument(help: "Username (any case) or user id.") var user: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in print(try await admin.showUser(user)) }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print everything held about an account as JSON (passkeys, factors without secrets, sessions, apps, audit events)."
        )
        @Argument(help: "Username (any case) or user id.") var user: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            let file = try options.resolve().providerListFile
            try await withAdmin(options) { admin in print(try await admin.exportUser(user, providerListFile: file)) }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account with a password read from standard input (one line)."
        )
        @Argument(help: "Username.") var user: String
        @Option(name: .customLong("display-name"), help: "Display name (default: the username).") var displayName:
            String?
        @Flag(help: "Put the account in the administrators' group (adminGroup; made when missing).") var admin = false
        @OptionGroup var options: ServerOptions

        func run() async throws {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw ValidationError("give the password on standard input")
            }
            let logN = try options.resolve().passwordScryptLogN
            try await withAdmin(options) { admin in
                print(
                    try await admin.createUser(
                        user, displayName: displayName, password: line, scryptLogN: logN, administrator: self.admin))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an account and sign it out everywhere.")
        @Argument(help: "Username (any case) or user id.") var user: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in print(try await admin.setDisabled(user, true)) }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled account.")
        @Argument(help: "Username (any case) or user id.") var user: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in print(try await admin.setDisabled(user, false)) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account with its passkeys, factors and sessions.")
        @Argument(help: "Username (any case) or user id.") var user: String
        @Flag(help: "Confirm the deletion.") var yes = false
        @OptionGroup var options: ServerOptions

        func run() async throws {
            guard yes else { throw ValidationError("deleting an account cannot be undone; add --yes") }
            try await withAdmin(options) { admin in print(try await admin.deleteUser(user)) }
        }
    }
}

extension UsersCommand {
    struct RecoveryLink: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recovery-link",
            abstract:
                "Make a single-use link that lets a person add a passkey: printed, or mailed to their verified address."
        )
        @Argument(help: "Username (any case) or user id.") var user: String
        @Flag(help: "Mail it to the account's verified address (through the running server's outbox).") var mail = false
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                let maker = RecoveryLinkMaker(store: store, configuration: configuration, clock: .system)
                let made: RecoveryLinkMaker.Made
                do {
                    made = try await maker.make(for: user, deliver: mail ? .mail : .show, by: .commandLine)
                } catch let error as APIError {
                    throw AdminError(description: error.message)
                }
                if let address = made.address {
                    print(
                        "recovery link for \(made.username) mailed to \(address); it works once, until \(made.expiresAt)"
                    )
                } else if let link = made.link {
                    print(link)
                    print("works once, until \(made.expiresAt); give it to \(made.username) only")
                }
            }
        }
    }
}

/// Opens the store for an admin command, runs `body`, closes the store.
func withAdmin(_ options: ServerOptions, _ body: (Admin) async throws -> Void) async throws {
    try await withStore(options) { store, configuration in
        try await body(
            Admin(
                store: store, issuer: configuration.origin, groups: StoredAccountGroups(store: store),
                adminGroup: configuration.adminGroup))
    }
}

/// The store the configuration names, opened and migrated, for an operator's command; closed afterwards. Commands of
/// features that own their storage (`sesame metadata`) take the store itself; an `AdminError` becomes the
/// command's refusal.
func withStore(
    _ options: ServerOptions, _ body: (SQLStore, SesameCore.ServerConfiguration) async throws -> Void
) async throws {
    let configuration = try options.resolve()
    var logger = Logger(label: "sesame.admin")
    logger.logLevel = .warning
    let (engine, store) = try await openStore(configuration, logger: logger)
    do {
        try await body(store, configuration)
    } catch let error as AdminError {
        try await engine.shutdown()
        throw ValidationError(error.description)
    } catch {
        try await engine.shutdown()
        throw error
    }
    try await engine.shutdown()
}
