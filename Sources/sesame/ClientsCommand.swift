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
import SesameGroups

/// `sesame clients`: the applications that sign their people in through Sesame (OpenID Connect).
struct ClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract:
            "Register, list, show and remove the applications that sign people in through Sesame (OpenID Connect).",
        subcommands: [Add.self, List.self, Show.self, Update.self, Remove.self, RotateSecret.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an application; prints its client id and, once, its secret.",
            discussion: """
                Redirect URIs must match exactly at sign-in; an http URI on a loopback host (native apps, RFC 8252) \
                matches on any port. Public clients (--public) have no secret and must use PKCE, as every client does.
                """
        )
        @Option(help: "The application's name, shown on the consent page.") var name: String
        @Option(name: .customLong("redirect-uri"), help: "A redirect URI (repeat for several).") var redirectURIs:
            [String] = []
        @Option(
            name: .customLong("post-logout-redirect-uri"), help: "Where RP-initiated logout may return (repeatable).")
        var postLogoutRedirectURIs: [String] = []
        @Option(name: .customLong("backchannel-logout-uri"), help: "The application's back-channel logout endpoint.")
        var backchannelLogoutURI: String?
        @Flag(name: .customLong("public"), help: "A public client (native or single-page app): no secret.")
        var isPublic = false
        @Flag(name: .customLong("first-party"), help: "Your own application: no consent page.") var firstParty = false
        @Option(name: .customLong("id-token-alg"), help: "ES256 (default) or RS256.") var idTokenAlgorithm = "ES256"
        @Option(
            name: .customLong("subject-type"),
            help: "public (default: sub is the account id) or pairwise (a sub of its own per redirect host).")
        var subjectType = "public"
        @Option(
            name: .customLong("jwks-file"),
            help: "A JWK set of the application's public keys: it signs client assertions (private_key_jwt), no secret."
        )
        var jwksFile: String?
        @Option(
            name: .customLong("allowed-groups"),
            help: "Only members of these groups may use it (comma-separated slugs; default: anyone who can sign in).")
        var allowedGroups: String?
        @Flag(
            name: .customLong("id-token-claims"),
            help: "Put the scope claims (profile, email, groups) in the ID token too, not only in UserInfo.")
        var idTokenClaims = false
        @OptionGroup var options: ServerOptions

        func run() async throws {
            var client = ClientAdmin.ClientOptions(name: name, redirectURIs: redirectURIs)
            client.allowedGroups = allowedGroups.map(ClientsCommand.slugs)
            client.idTokenClaims = idTokenClaims
            client.postLogoutRedirectURIs = postLogoutRedirectURIs
            client.backchannelLogoutURI = backchannelLogoutURI
            client.isPublic = isPublic
            client.firstParty = firstParty
            client.idTokenAlgorithm = idTokenAlgorithm
            client.subjectType = subjectType
            if let jwksFile {
                guard let data = FileManager.default.contents(atPath: jwksFile) else {
                    throw ValidationError("--jwks-file \(jwksFile) cannot be read")
                }
                client.jwks = String(decoding: data, as: UTF8.self)
            }
            try await withStore(options) { store, _ in
                let admin = ClientAdmin(store: store, groups: StoredAccountGroups(store: store))
                for line in try await admin.addClient(client) { print(line) }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the registered applications (never their secrets).")
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in
                for line in try await ClientAdmin(store: admin.store).listClients() { print(line) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one application.")
        @Argument(help: "Client id.") var client: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in print(try await ClientAdmin(store: admin.store).showClient(client))
            }
        }
    }

    /// `--allowed-groups a,b` as slugs (checked by `ClientAdmin`).
    static func slugs(_ list: String) -> [String] {
        list.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0).trimmingCharacters(in: .whitespaces)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change who may use an application and whether its ID tokens carry the scope claims.")
        @Argument(help: "Client id.") var client: String
        @Option(
            name: .customLong("allowed-groups"),
            help: "Only members of these groups may use it (comma-separated slugs); refreshes are checked at once.")
        var allowedGroups: String?
        @Flag(name: .customLong("anyone"), help: "Anyone who can sign in may use it (drops the allowed groups).")
        var anyone = false
        @Flag(
            name: .customLong("id-token-claims"), inversion: .prefixedNo,
            help: "Whether the ID token carries the scope claims too.")
        var idTokenClaims: Bool?
        @OptionGroup var options: ServerOptions

        func validate() throws {
            if anyone, allowedGroups != nil { throw ValidationError("give --allowed-groups or --anyone, not both") }
            if !anyone, allowedGroups == nil, idTokenClaims == nil {
                throw ValidationError("nothing to change: give --allowed-groups, --anyone or --[no-]id-token-claims")
            }
        }

        func run() async throws {
            var changes = ClientAdmin.ClientChanges()
            if anyone { changes.allowedGroups = .some(nil) }
            if let allowedGroups { changes.allowedGroups = .some(ClientsCommand.slugs(allowedGroups)) }
            changes.idTokenClaims = idTokenClaims
            try await withStore(options) { store, _ in
                let admin = ClientAdmin(store: store, groups: StoredAccountGroups(store: store))
                print(try await admin.updateClient(client, changes))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an application; its grants and tokens stop working.")
        @Argument(help: "Client id.") var client: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in
                print(try await ClientAdmin(store: admin.store).removeClient(client))
            }
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Give a confidential application a new secret (printed once); the old one stops working."
        )
        @Argument(help: "Client id.") var client: String
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in
                print(try await ClientAdmin(store: admin.store).rotateClientSecret(client))
            }
        }
    }
}

/// `sesame signing-keys rotate`.
struct SigningKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signing-keys",
        abstract: "Rotate the keys that sign ID and access tokens.",
        subcommands: [Rotate.self]
    )

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make new ES256 and RS256 signing keys; the old ones stay in the JWKS until their tokens expire."
        )
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await withAdmin(options) { admin in
                for line in try await ClientAdmin(store: admin.store).rotateSigningKeys() { print(line) }
            }
        }
    }
}
