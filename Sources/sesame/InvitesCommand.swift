import ArgumentParser
import Foundation
import SesameCore
import SesameInvitations
import SesameServer

/// `sesame invites`: single-use sign-up links (docs/invitations.md).
struct InvitesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invites",
        abstract: "Make, list and revoke single-use sign-up links (invitations).",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an invitation; prints its link (and mails it with --email).",
            discussion: """
                The link works once, until it expires; the account made with it joins the groups named. With \
                sign-up set to invite-only, an invitation is the only way to sign up (sesame users create aside).
                """
        )
        @Option(help: "Mail the link to this address (through the outbox: sesame serve sends it).") var email: String?
        @Option(help: "Comma-separated groups the new account joins.") var groups: String?
        @Option(help: "How long the link works: 30m, 12h, 7d (5 minutes to 90 days).") var expires = "7d"
        @OptionGroup var options: ServerOptions

        func run() async throws {
            guard let lifetime = InvitationAdmin.lifetime(expires) else {
                throw ValidationError("--expires: a number with m, h or d, between 5 minutes and 90 days")
            }
            let slugs = (groups ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            try await withStore(options) { store, configuration in
                let admin = InvitationAdmin(
                    store: store, groups: serverAccountGroups(store), configuration: configuration)
                let created = try await admin.create(email: email, groups: slugs, lifetime: lifetime, at: Date())
                print(created.link)
                print(
                    "invitation \(created.id), until \(InvitationMails.shown(created.expiresAt))"
                        + (created.mailed ? ", mailed to \(email ?? "")" : ""))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "List invitations (until the purge removes them once expired): id, state, expiry, address, groups.")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                let admin = InvitationAdmin(
                    store: store, groups: serverAccountGroups(store), configuration: configuration)
                for line in try await admin.list(at: Date()) { print(line) }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an unused invitation: its link stops working.")
        @Argument(help: "The invitation's id (sesame invites list).") var id: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                let admin = InvitationAdmin(
                    store: store, groups: serverAccountGroups(store), configuration: configuration)
                try await admin.revoke(id: id, at: Date())
                print("revoked \(id)")
            }
        }
    }
}
