import ArgumentParser
import SesameGroups

/// `sesame groups`: the groups accounts belong to, which apps' allowed groups, forward-auth rules and the `groups`
/// claim name by slug.
struct GroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "Add, list, show, rename and remove groups (members: sesame users groups).",
        subcommands: [Add.self, List.self, Show.self, Rename.self, Claims.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a group.",
            discussion: """
                A slug is 1 to 64 of a-z, 0-9 and -, starting with a letter; anything else (capitals, other \
                alphabets, spaces) is refused, never changed. --claims is a JSON object of custom claims the group's \
                members get under the groups scope, e.g. '{"roles": ["editor"]}'.
                """)
        @Argument(help: "The group's slug, e.g. family.") var slug: String
        @Option(help: "Its display name (default: the slug).") var name: String?
        @Option(help: "Custom claims: a JSON object.") var claims: String?
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                print(
                    try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).add(
                        slug, name: name, claims: claims))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every group with its number of members.")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                for line in try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).list() {
                    print(line)
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a group: name, custom claims, members.")
        @Argument(help: "The group's slug.") var slug: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                print(try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).show(slug))
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a group a new display name (its slug stays).")
        @Argument(help: "The group's slug.") var slug: String
        @Option(help: "The new display name.") var name: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                print(
                    try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).update(
                        slug, name: name, claims: nil))
            }
        }
    }

    struct Claims: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a group's custom claims (a JSON object; {} for none).")
        @Argument(help: "The group's slug.") var slug: String
        @Argument(help: "A JSON object, e.g. '{\"roles\": [\"editor\"]}'.") var claims: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                print(
                    try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).update(
                        slug, name: nil, claims: claims))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a group and its memberships; apps that allow only it refuse its former members.")
        @Argument(help: "The group's slug.") var slug: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                print(try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).remove(slug))
            }
        }
    }
}

/// `sesame users groups add|remove USER GROUP`.
struct UserGroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups", abstract: "Put an account in a group or take it out.",
        subcommands: [Add.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put an account in a group.")
        @Argument(help: "Username (any case) or user id.") var user: String
        @Argument(help: "The group's slug.") var group: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                print(
                    try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).addMember(user, to: group)
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take an account out of a group; its next token refresh for an app that needs the group fails.")
        @Argument(help: "Username (any case) or user id.") var user: String
        @Argument(help: "The group's slug.") var group: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withStore(options) { store, configuration in
                print(
                    try await GroupsAdmin(store: store, adminGroup: configuration.adminGroup).removeMember(
                        user, from: group))
            }
        }
    }
}
