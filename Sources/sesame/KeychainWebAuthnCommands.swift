import ArgumentParser
import Foundation
import Keychain
import WebAuthn

// `sesame keychain webauthn create | get`: the keychain as a passkey authenticator, for scripts, tests and the
// browser extension's native host to come.

struct KeychainWebAuthnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webauthn",
        abstract: "Make a passkey (create) or sign in with one (get), as a browser would for a page at --origin.",
        discussion: """
            Reads PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON and prints the \
            RegistrationResponseJSON or AuthenticationResponseJSON a browser would return. --origin is the page's \
            origin as the trusted side states it; the RP ID is checked against it with the public suffix list \
            (Debian package publicsuffix; --public-suffix-list or $SESAME_PUBLIC_SUFFIX_LIST to use another file).

            Passkeys are synced (backup eligible and backed up), attestation "none", sign count 0. User \
            verification (UV) is reported only within the unlock's verification window, or when the passphrase \
            was given to this command; "required" is refused otherwise.
            """,
        subcommands: [Create.self, Get.self]
    )

    struct Shared: ParsableArguments {
        @Option(help: "The calling page's origin: https://host[:port] (http only on localhost).")
        var origin: String

        @Option(help: "The options JSON file, or - for standard input.")
        var options: String

        @Option(help: "The public suffix list file.")
        var publicSuffixList: String?

        func optionsJSON() throws -> [UInt8] {
            do {
                return try readInput(options)
            } catch {
                throw keychainUsage("cannot read \(options)")
            }
        }

        func suffixes() throws -> PublicSuffixList {
            let path =
                publicSuffixList ?? ProcessInfo.processInfo.environment["SESAME_PUBLIC_SUFFIX_LIST"]
                ?? PublicSuffixList.defaultPath
            return try keychainCall { try PublicSuffixList.load(path: path) }
        }
    }

    enum AlgorithmChoice: String, ExpressibleByArgument, CaseIterable {
        case es256, eddsa
        var algorithm: PasskeyAlgorithm { self == .es256 ? .es256 : .edDSA }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a passkey; print RegistrationResponseJSON.")

        @OptionGroup var keychainOptions: KeychainOptions
        @OptionGroup var shared: Shared

        @Option(help: "Use this algorithm (default: ES256 when the relying party accepts it, else EdDSA).")
        var algorithm: AlgorithmChoice?

        func run() async throws {
            let json = try shared.optionsJSON()
            let suffixes = try shared.suffixes()
            let keychain = try keychainOptions.open()
            let registration = try keychainCall {
                let registration = try keychain.createPasskey(
                    optionsJSON: json, origin: shared.origin, suffixes: suffixes,
                    preferredAlgorithm: algorithm?.algorithm)
                try keychain.save()
                return registration
            }
            print(String(decoding: registration.responseJSON, as: UTF8.self))
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign in with a passkey; print AuthenticationResponseJSON.")

        @OptionGroup var keychainOptions: KeychainOptions
        @OptionGroup var shared: Shared

        @Option(help: "Use the passkey with this credential ID (base64url) when several could answer.")
        var credential: String?

        @Option(help: "Use the passkey for this user name when several could answer.")
        var user: String?

        func run() async throws {
            let json = try shared.optionsJSON()
            let suffixes = try shared.suffixes()
            let chosen: [UInt8]? = try credential.map { text in
                guard let id = try? Base64URL.decode(text), !id.isEmpty else {
                    throw keychainUsage("--credential is not base64url")
                }
                return id
            }
            let keychain = try keychainOptions.open()
            let assertion = try keychainCall {
                let assertion = try keychain.signIn(
                    optionsJSON: json, origin: shared.origin, suffixes: suffixes, credentialId: chosen, userName: user)
                try keychain.save()
                return assertion
            }
            print(String(decoding: assertion.responseJSON, as: UTF8.self))
        }
    }
}
