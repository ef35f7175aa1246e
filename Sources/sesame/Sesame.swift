import ArgumentParser

@main
struct Sesame: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sesame",
        abstract: "Passkeys, security keys and one-time codes for your sign-in.",
        subcommands: SesameSubcommands.all
    )
}
