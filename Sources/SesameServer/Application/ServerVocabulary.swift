import SesameAccount
import SesameCore
import SesameForwardAuth
import SesameIdentityProvider
import SesameKeychainSync
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
        .core, .metadata, .passkeys, .passwords, .secondFactors, .reauthentication, .account, .identityProvider,
        .forwardAuth, .keychainSync, .operations,
    ]

    /// The server's one vocabulary: every part's words, each declared once (a duplicate stops the process here).
    package static let server = Vocabulary.joined(parts, owner: "SesameServer")
}
