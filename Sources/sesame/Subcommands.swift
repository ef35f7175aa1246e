import ArgumentParser

/// Every `sesame` subcommand, in the order `--help` lists them.
enum SesameSubcommands {
    static let all: [any ParsableCommand.Type] = [
        ServeCommand.self,
        MigrateCommand.self,
        BackupCommand.self,
        RestoreCommand.self,
        UsersCommand.self,
        InvitesCommand.self,
        GroupsCommand.self,
        AdminTokensCommand.self,
        ClientsCommand.self,
        SigningKeysCommand.self,
        MetadataCommand.self,
        AuditCommand.self,
        SealKeysCommand.self,
        MailCommand.self,
        CatalogCommand.self,
        VerifyCommand.self,
        InspectCommand.self,
        AuthenticatorCommand.self,
        OTPCommand.self,
        KeychainCommand.self,
    ]
}
