import Foundation
import SesameAccount
import SesameAdminTokens
import SesameConsole
import SesameCore
import SesameEmail
import SesameForwardAuth
import SesameGroups
import SesameIdentityProvider
import SesameInvitations
import SesameKeychainSync
import SesameMail
import SesameMetadata
import SesameOperations
import SesamePasskeys
import SesamePasswords
import SesameReauthentication
import SesameSecondFactors

extension Vocabulary {
    /// Each part of the server, in the order its words are listed (in the OpenAPI document, docs/server.md,
    /// docs/configuration.md and `--help`).
    package static let parts: [Vocabulary] = [
        .core, .metadata, .passkeys, .passwords, .secondFactors, .reauthentication, .account, .email,
        .identityProvider, .groups, .forwardAuth, .keychainSync, .mail, .operations, .invitations, .console,
        .adminTokens,
    ]

    /// The server's one vocabulary: every part's words, each declared once (a duplicate stops the process here).
    package static let server = Vocabulary.joined(parts, owner: "SesameServer")
}

extension ServerConfiguration {
    /// The settings table: every part's rows (`Vocabulary.server.settings`), the core's first. `--help`,
    /// docs/configuration.md, the environment variables and the configuration file all read this one table.
    public static var settings: [Setting] { Vocabulary.server.settings }

    /// Resolves the configuration: defaults, then the config file, then environment, then flags; then every part's
    /// checks.
    public static func resolve(
        flags: [String: String], environment: [String: String], configFile: String?
    ) throws(ConfigurationError) -> ServerConfiguration {
        try resolve(flags: flags, environment: environment, configFile: configFile, vocabulary: .server)
    }

    /// Applies a JSON config file whose keys are the setting keys (and `clients`).
    public mutating func apply(fileAt path: String) throws(ConfigurationError) {
        try apply(fileAt: path, vocabulary: .server)
    }

    public mutating func apply(json data: Data, source: String = "config") throws(ConfigurationError) {
        try apply(json: data, source: source, vocabulary: .server)
    }

    /// Checks values that each source may set independently but must agree: the core's rules, then each part's.
    public func validate() throws(ConfigurationError) { try validate(vocabulary: .server) }

    /// Reads setting flags from command-line words (`--flag value` or `--flag=value`), by setting key.
    public static func flags(from words: [String]) throws(ConfigurationError) -> [String: String] {
        try flags(from: words, settings: settings)
    }

    /// The settings as `--help` shows them.
    public static var helpText: String { helpText(for: settings) }

    /// The settings table as Markdown (docs/configuration.md embeds it; a test keeps them equal).
    public static var markdownTable: String { markdownTable(for: settings) }
}
