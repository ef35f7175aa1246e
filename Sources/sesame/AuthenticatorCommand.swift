import ArgumentParser
import Foundation
import VirtualAuthenticator
import WebAuthn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sesame authenticator`: Sesame's software authenticator and WebAuthn client on the command line.
struct AuthenticatorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authenticator",
        abstract: "A software passkey authenticator for testing relying parties (TEST USE ONLY).",
        discussion: """
            Acts as a browser plus authenticator: reads PublicKeyCredentialCreationOptionsJSON or \
            PublicKeyCredentialRequestOptionsJSON and prints the RegistrationResponseJSON or \
            AuthenticationResponseJSON a browser would return for a page at --origin.

            WARNING: the store file holds the credentials' PRIVATE KEYS in clear. Anyone who can read it can sign \
            in as those credentials. It is written with mode 0600; never use this tool for real accounts.

            Exit status: 0 on success, 1 when the authenticator or client refuses (the DOMException name a \
            browser would give is printed on stderr), 2 on bad usage or unreadable input.
            """,
        subcommands: [Create.self, Get.self]
    )

    enum KeyAlgorithm: String, ExpressibleByArgument, CaseIterable {
        case es256, eddsa, rs256
        var algorithm: VirtualAuthenticator.Algorithm {
            switch self {
            case .es256: .es256
            case .eddsa: .edDSA
            case .rs256: .rs256
            }
        }
    }

    enum AttestationChoice: String, ExpressibleByArgument, CaseIterable {
        case none, packed
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register: print RegistrationResponseJSON and save the new credential (with its private key).")

        @Option(help: "Origin of the calling page, e.g. https://example.com or http://localhost:8080.")
        var origin: String
        @Option(help: "File with PublicKeyCredentialCreationOptionsJSON, or - for standard input.")
        var options: String
        @Option(help: "Credential store file (JSON, private keys included, mode 0600); created if missing.")
        var store: String?
        @Option(help: "Only offer this algorithm (default: the first of the options' pubKeyCredParams it supports).")
        var algorithm: KeyAlgorithm?
        @Option(help: "Attestation statement: none, or packed self attestation.")
        var attestation: AttestationChoice = .none
        @Flag(help: "The authenticator cannot verify the user (UV flag 0; userVerification=required is refused).")
        var noUv = false
        @Flag(help: "Set the BE (backup eligible) flag on the new credential.")
        var backupEligible = false
        @Flag(
            help: "Set the BS (backed up) flag on the new credential (without --backup-eligible: invalid on purpose).")
        var backedUp = false
        @Flag(help: "The credential has no signature counter (always 0).")
        var noCounter = false

        func run() throws {
            var configuration = VirtualAuthenticator.Configuration(
                userVerification: !noUv, signCounter: !noCounter, backupEligible: backupEligible, backedUp: backedUp,
                attestation: attestation == .packed ? .packedSelf : .none)
            if let algorithm { configuration.algorithms = [algorithm.algorithm] }
            let authenticator = try AuthenticatorIO.open(store: store, configuration: configuration)
            let optionsJSON = try AuthenticatorIO.read(options)
            let response: RegistrationResponse
            do {
                response = try authenticator.create(optionsJSON: optionsJSON, origin: origin)
            } catch {
                throw AuthenticatorIO.fail(error)
            }
            if let store { try AuthenticatorIO.save(authenticator, to: store) }
            AuthenticatorIO.printJSON(response.json)
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign in: print AuthenticationResponseJSON made with a credential from the store.")

        @Option(help: "Origin of the calling page.")
        var origin: String
        @Option(help: "File with PublicKeyCredentialRequestOptionsJSON, or - for standard input.")
        var options: String
        @Option(help: "Credential store file written by `sesame authenticator create`.")
        var store: String
        @Option(help: "Use this credential (base64url ID) when several are usable.")
        var credentialId: String?
        @Flag(help: "The authenticator cannot verify the user (UV flag 0; userVerification=required is refused).")
        var noUv = false

        func run() throws {
            guard FileManager.default.fileExists(atPath: store) else {
                throw AuthenticatorIO.usage("store file \(store) does not exist")
            }
            let configuration = VirtualAuthenticator.Configuration(userVerification: !noUv)
            let authenticator = try AuthenticatorIO.open(store: store, configuration: configuration)
            let optionsJSON = try AuthenticatorIO.read(options)
            var chosen: [UInt8]?
            if let credentialId {
                do {
                    chosen = try Base64URL.decode(credentialId, field: "--credential-id")
                } catch {
                    throw AuthenticatorIO.usage("--credential-id is not unpadded base64url")
                }
            }
            let response: AuthenticationResponse
            do {
                response = try authenticator.get(optionsJSON: optionsJSON, origin: origin, credentialId: chosen)
            } catch {
                throw AuthenticatorIO.fail(error)
            }
            try AuthenticatorIO.save(authenticator, to: store)  // the counter moved
            AuthenticatorIO.printJSON(response.json)
        }
    }
}

/// File handling and exit statuses shared by the two subcommands.
enum AuthenticatorIO {
    static func usage(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("sesame authenticator: \(message)\n".utf8))
        return ExitCode(2)
    }

    /// Refusals (and the authenticator's own failure) exit 1; malformed options, configuration or store exit 2.
    static func fail(_ error: VirtualAuthenticatorError) -> ExitCode {
        let what = error.detail.isEmpty ? error.code.name : "\(error.code.name): \(error.detail)"
        if error.isRefusal || error.code == .authenticatorFailure {
            FileHandle.standardError.write(Data("sesame authenticator: refused: \(what)\n".utf8))
            return ExitCode(1)
        }
        return usage("invalid input: \(what)")
    }

    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw usage("cannot read \(path)")
        }
        return Array(data)
    }

    static func open(store: String?, configuration: VirtualAuthenticator.Configuration) throws -> VirtualAuthenticator {
        guard let store, FileManager.default.fileExists(atPath: store) else {
            return VirtualAuthenticator(configuration: configuration)
        }
        do {
            return try VirtualAuthenticator(configuration: configuration, importing: try read(store))
        } catch let error as VirtualAuthenticatorError {
            throw fail(error)
        }
    }

    /// Writes the store through a temporary file created with mode 0600, then renames it into place.
    static func save(_ authenticator: VirtualAuthenticator, to path: String) throws {
        let bytes = authenticator.exportCredentials()
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        let fd = Foundation.open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw usage("cannot write \(path)") }
        fchmod(fd, 0o600)
        var written = 0
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return buffer.isEmpty }
            while written < buffer.count {
                let n = write(fd, base + written, buffer.count - written)
                if n <= 0 { return false }
                written += n
            }
            return true
        }
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw usage("cannot write \(path)")
        }
    }

    static func printJSON(_ bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes + [0x0a]))
    }
}
