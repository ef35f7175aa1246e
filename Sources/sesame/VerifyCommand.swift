import ArgumentParser
import Foundation
import WebAuthn
import X509

/// `sesame verify registration|authentication`: run a ceremony on a captured response and print the outcome
/// as one line of JSON. Exit status: 0 verified, 1 verification failed, 2 bad usage.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a captured WebAuthn registration or authentication response.",
        discussion: """
            Prints {"ok":true,...} and exits 0 when the response verifies, prints \
            {"ok":false,"error":"<code>","step":"<W3C step>"} and exits 1 when it does not, \
            and exits 2 on bad usage (unknown or missing options, malformed option values, unreadable files).
            """,
        subcommands: [VerifyRegistrationCommand.self, VerifyAuthenticationCommand.self]
    )
}

/// Options shared by both ceremonies.
struct CeremonyOptions: ParsableArguments {
    @Option(name: .customLong("rp-id"), help: "The RP ID, e.g. example.org.")
    var rpId: String

    @Option(help: "An origin the response may come from (repeat for several).")
    var origin: [String]

    @Option(parsing: .unconditional, help: "The challenge that was sent, unpadded base64url (may start with -).")
    var challenge: String

    @Flag(name: .customLong("require-uv"), help: "Fail unless the authenticator verified the user (UV flag).")
    var requireUV = false

    @Flag(
        name: .customLong("allow-rs1"), help: "Accept RSASSA-PKCS1-v1_5 with SHA-1 (COSE -65535) keys and signatures.")
    var allowRS1 = false

    @Option(
        name: .customLong("allow-cross-origin"),
        help: "Accept crossOrigin/topOrigin client data when topOrigin is this origin (repeat for several).")
    var topOrigins: [String] = []

    @Argument(help: "The response JSON (RegistrationResponseJSON / AuthenticationResponseJSON), or - for stdin.")
    var response: String

    func relyingParty() throws -> RelyingParty {
        guard !origin.isEmpty else { throw usage("at least one --origin is required") }
        var config: RelyingPartyConfiguration
        do {
            config = try RelyingPartyConfiguration(id: rpId, name: rpId, origins: origin)
            if !topOrigins.isEmpty { config.crossOrigin = try .allow(topOrigins: topOrigins) }
        } catch { throw usage(error.description) }
        config.allowRS1 = allowRS1
        config.signCount = .reject
        return RelyingParty(configuration: config)
    }

    func challengeBytes() throws -> [UInt8] {
        guard let bytes = try? Base64URL.decode(challenge), !bytes.isEmpty else {
            throw usage("--challenge must be non-empty unpadded base64url")
        }
        return bytes
    }

    func responseBytes() throws -> [UInt8] {
        do { return try readInput(response) } catch { throw usage("cannot read \(response)") }
    }
}

/// A bad-usage exit (status 2) after printing why.
func usage(_ message: String) -> ExitCode {
    printError("sesame: \(message)")
    return ExitCode(2)
}

/// Prints a ceremony failure and returns the exit status for it.
func failed(_ error: WebAuthnError) -> ExitCode {
    var members: [(String, JSONValue)] = [
        ("ok", .bool(false)), ("error", .string(error.code.name)), ("step", .string(error.step)),
    ]
    if !error.detail.isEmpty { members.append(("detail", .string(error.detail))) }
    print(JSONValue.object(members).rendered())
    return ExitCode(1)
}

struct VerifyRegistrationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registration",
        abstract: "Verify a registration (navigator.credentials.create) response.",
        discussion: """
            Output: {"ok":true,"fmt":...,"attestationType":...,"credentialId":...,"credentialPublicKey":..., \
            "signCount":...,"aaguid":...,"flags":{"up":...,"uv":...,"be":...,"bs":...,"at":...,"ed":...}, \
            "chainVerified":...,"trustAnchor":"<subject>"|null, \
            "metadata":{"description":...,"certificationLevel":...,"statuses":[...]}|null,"transports":[...]}. \
            A refusal by --policy is {"ok":false,"error":"<rule's code>","step":"7.1 step 24: policy <rule>"}. \
            A --metadata BLOB that does not verify, or a --policy file that is not a policy, is bad usage (exit 2).
            """
    )

    @OptionGroup var ceremony: CeremonyOptions

    @Option(
        name: .customLong("trust-anchor"),
        help: "A PEM file of attestation root certificates (repeat for several). Without any, chains are not evaluated."
    )
    var trustAnchors: [String] = []

    @Option(help: "Verification time for attestation certificates, ISO 8601 (default: now).")
    var at: String?

    @Option(
        name: .customLong("allow-algorithm"), parsing: .unconditionalSingleValue,
        help:
            "A COSE algorithm identifier the options offered, e.g. -7 (repeat; default: every algorithm the library supports)."
    )
    var allowAlgorithms: [Int] = []

    @Flag(help: "Treat the response as a conditional create (mediation: \"conditional\"): UP not required.")
    var conditional = false

    @Flag(
        name: .customLong("bundled-anchors"),
        help:
            "Also trust the roots Sesame ships, each for its format (Apple, Google, GlobalSign for SafetyNet, Microsoft TPM)."
    )
    var bundledAnchors = false

    @OptionGroup var metadataOptions: MetadataOptions

    @Option(
        help:
            "A registration policy JSON file (RegistrationPolicy: formats, attestation types, statuses, AAGUID lists, certification level, SafetyNet, SHA-1)."
    )
    var policy: String?

    func run() async throws {
        let rp = try ceremony.relyingParty()
        var config = rp.configuration
        var anchors: [Certificate] = []
        for path in trustAnchors {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw usage("cannot read \(path)")
            }
            do {
                let end = "-----END CERTIFICATE-----"
                let blocks = text.components(separatedBy: end).dropLast().map { $0 + end }
                guard !blocks.isEmpty else { throw usage("\(path) holds no PEM certificate") }
                anchors += try blocks.map { try Certificate(pemEncoded: $0) }
            } catch { throw usage("\(path) is not PEM certificates") }
        }
        var time = Date()
        if let at {
            guard let parsed = ISO8601DateFormatter().date(from: at) else {
                throw usage("--at must be ISO 8601, e.g. 2024-01-31T12:00:00Z")
            }
            time = parsed
        }
        config.attestationTrust = AttestationTrust(trustAnchors: anchors, verificationTime: time)
        if bundledAnchors {
            do { config.attestationTrust.formatAnchors = try TrustAnchors.bundled().formatAnchors } catch {
                throw usage("the bundled trust anchors cannot be read: \(error)")
            }
        }
        if let policy {
            guard let data = try? readInput(policy) else { throw usage("cannot read \(policy)") }
            do { config.registrationPolicy = try RegistrationPolicy(json: data) } catch {
                throw usage("--policy: \(error.detail)")
            }
        }
        config.attestationTrust.metadata = try await metadataOptions.load()
        let expectation = RegistrationExpectation(
            challenge: try ceremony.challengeBytes(),
            userVerification: ceremony.requireUV ? .required : .preferred,
            mediation: conditional ? .conditional : nil,
            allowedAlgorithms: allowAlgorithms.isEmpty
                ? VerifyDefaults.allAlgorithms : allowAlgorithms.map(COSEAlgorithm.init(rawValue:)))
        let bytes = try ceremony.responseBytes()
        do {
            let response = try RegistrationResponseJSON.decode(bytes)
            let result = try await RelyingParty(configuration: config).verifyRegistration(
                response: response, expected: expectation, now: time)
            let record = result.credential
            print(
                JSONValue.object([
                    ("ok", .bool(true)),
                    ("fmt", .string(result.attestation.format)),
                    ("attestationType", .string(result.attestation.type.rawValue)),
                    ("credentialId", .string(Base64URL.encode(record.id))),
                    ("credentialPublicKey", .string(Base64URL.encode(record.publicKey))),
                    ("signCount", .int(Int64(record.signCount))),
                    ("aaguid", .optional(record.aaguid?.uuidString)),
                    ("flags", JSONValue.flags(result.flags)),
                    ("chainVerified", .bool(result.attestation.chainVerified)),
                    ("trustAnchor", .optional(result.attestation.trustAnchor.map { String(describing: $0.subject) })),
                    ("metadata", result.metadata.map(JSONValue.metadata) ?? .null),
                    ("transports", .array(record.transports.map { .string($0.rawValue) })),
                ]).rendered())
        } catch {
            throw failed(error)
        }
    }
}

struct VerifyAuthenticationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authentication",
        abstract: "Verify an authentication (navigator.credentials.get) response against a stored credential.",
        discussion: """
            Output: {"ok":true,"credentialId":...,"signCount":...,"cloneWarning":false,"userHandle":..., \
            "flags":{...}}. The response's credential is taken to be the one stored with --public-key; with \
            --user-handle the response's user handle (if any) must equal it.
            """
    )

    @OptionGroup var ceremony: CeremonyOptions

    @Option(
        name: .customLong("public-key"), parsing: .unconditional,
        help: "The stored credential public key (COSE_Key), unpadded base64url.")
    var publicKey: String

    @Option(name: .customLong("sign-count"), help: "The stored signature counter.")
    var signCount: UInt32

    @Option(
        name: .customLong("user-handle"), parsing: .unconditional,
        help: "The account's user handle, unpadded base64url.")
    var userHandle: String?

    @Option(
        name: .customLong("backup-eligible"),
        help:
            "Whether the credential was backup eligible (BE) at registration: true or false (default: whatever this response says, i.e. not checked)."
    )
    var backupEligible: Bool?

    @Option(help: "The FIDO AppID requested with the appid extension (U2F credentials).")
    var appid: String?

    func run() throws {
        let rp = try ceremony.relyingParty()
        let challenge = try ceremony.challengeBytes()
        guard let key = try? Base64URL.decode(publicKey), !key.isEmpty else {
            throw usage("--public-key must be base64url")
        }
        var handle: [UInt8]? = nil
        if let userHandle {
            guard let h = try? Base64URL.decode(userHandle) else { throw usage("--user-handle must be base64url") }
            handle = h
        }
        let bytes = try ceremony.responseBytes()
        do {
            let response = try AuthenticationResponseJSON.decode(bytes)
            let be =
                backupEligible
                ?? ((try? AuthenticatorData(bytes: response.response.authenticatorData.bytes))?.flags.contains(
                    .backupEligible)
                    ?? false)
            let record = CredentialRecord(
                id: response.rawId.bytes, publicKey: key, signCount: signCount, backupEligible: be,
                backupState: false, uvInitialized: false)
            let expectation = AuthenticationExpectation(
                challenge: challenge, credential: record,
                userHandle: handle ?? response.response.userHandle?.bytes ?? [],
                allowCredentials: [response.rawId.bytes],
                userVerification: ceremony.requireUV ? .required : .preferred, appid: appid)
            let result = try rp.verifyAuthentication(response: response, expected: expectation, now: Date())
            print(
                JSONValue.object([
                    ("ok", .bool(true)),
                    ("credentialId", .string(Base64URL.encode(result.credentialId))),
                    ("signCount", .int(Int64(result.signCount))),
                    ("cloneWarning", .bool(result.cloneWarning)),
                    ("userHandle", .optional(result.userHandle.map(Base64URL.encode))),
                    ("usedAppID", .bool(result.usedAppID)),
                    ("flags", JSONValue.flags(result.flags)),
                ]).rendered())
        } catch {
            throw failed(error)
        }
    }
}

enum VerifyDefaults {
    /// Every credential algorithm the library verifies (RS1 still needs --allow-rs1).
    static let allAlgorithms: [COSEAlgorithm] = [
        .edDSA, .ed25519, .es256, .es384, .es512, .rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .rs1, .mldsa65,
        .mldsa87,
    ]
}
