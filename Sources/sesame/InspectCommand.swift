import ArgumentParser
import CBOR
import Crypto
import Foundation
import SesameBytes
import SesameServer
import WebAuthn
import X509
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

/// `sesame inspect FILE|-`: decode a WebAuthn response (or one of its parts) and print it readably.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode a WebAuthn response, attestation object, authenticator data or client data.",
        discussion: """
            Input: RegistrationResponseJSON or AuthenticationResponseJSON, or a bare attestation object, \
            authenticator data or clientDataJSON in unpadded base64url. Decoding shows what the bytes say (flags, \
            AAGUID, COSE key, attestation statement, certificate subjects). \
            For a registration response it also checks the attestation statement alone (its signature and format \
            rules against the response's own clientDataJSON, the chain against the roots Sesame ships and the \
            --metadata BLOB's statements) and shows, under "attestation", the trust path, the matched metadata \
            statement and the provider's name; challenge, origin and RP ID are not checked (use sesame verify). \
            SHA-1 attestation signatures and SafetyNet are shown, not refused. \
            Exit status: 0 decoded (whatever the attestation check found), 1 undecodable input, 2 bad usage.
            """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(help: "Verification time for attestation certificates, ISO 8601 (default: now).")
    var at: String?

    @OptionGroup var metadataOptions: MetadataOptions

    @Argument(help: "A file, or - for standard input.")
    var input: String

    func run() async throws {
        var time = Date()
        if let at {
            guard let parsed = ISO8601DateFormatter().date(from: at) else {
                throw usage("--at must be ISO 8601, e.g. 2024-01-31T12:00:00Z")
            }
            time = parsed
        }
        let metadata = try await metadataOptions.load()
        let bytes: [UInt8]
        do { bytes = try readInput(input) } catch { throw usage("cannot read \(input)") }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var report: JSONValue
        do {
            report = try Inspector.inspect(text)
        } catch {
            throw failed(error)
        }
        if case .object(var members) = report, members.first?.value == .string("registration"),
            let response = try? RegistrationResponseJSON.decode(Array(text.utf8))
        {
            members.append(
                .init(key: "attestation", value: await Inspector.attestation(response, time: time, metadata: metadata)))
            report = .object(members)
        }
        if json {
            print(report.rendered(pretty: true))
        } else {
            print(Inspector.text(report), terminator: "")
        }
    }
}

enum Inspector {
    static func inspect(_ text: String) throws(WebAuthnError) -> JSONValue {
        if text.hasPrefix("{") {
            return try inspectResponse(Array(text.utf8))
        }
        let bytes = try Base64URL.decode(text, field: "input")
        if bytes.first == UInt8(ascii: "{") {
            return .object([("kind", .string("clientData")), ("clientData", clientData(bytes))])
        }
        if let item = try? CBORDecoder(options: .lenientMapOrder).decode(bytes), item[text: "fmt"] != nil {
            return .object([("kind", .string("attestationObject")), ("attestationObject", attestationObject(bytes))])
        }
        return .object([("kind", .string("authenticatorData")), ("authenticatorData", authenticatorData(bytes))])
    }

    static func inspectResponse(_ json: [UInt8]) throws(WebAuthnError) -> JSONValue {
        // Decide the ceremony by the members present; both decoders check the envelope strictly.
        let probe = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any]
        let inner = probe?["response"] as? [String: Any]
        if inner?["attestationObject"] != nil {
            let r = try RegistrationResponseJSON.decode(json)
            var members: [(String, JSONValue)] = [
                ("kind", .string("registration")),
                ("id", .string(r.id)),
                ("type", .string(r.type)),
                ("authenticatorAttachment", .optional(r.authenticatorAttachment?.rawValue)),
                ("transports", .array((r.response.transports ?? []).map { .string($0.rawValue) })),
                ("clientData", clientData(r.response.clientDataJSON.bytes)),
                ("attestationObject", attestationObject(r.response.attestationObject.bytes)),
            ]
            members.append(("clientExtensionResults", extensionResults(r.clientExtensionResults)))
            return .object(members)
        }
        let r = try AuthenticationResponseJSON.decode(json)
        return .object([
            ("kind", .string("authentication")),
            ("id", .string(r.id)),
            ("type", .string(r.type)),
            ("authenticatorAttachment", .optional(r.authenticatorAttachment?.rawValue)),
            ("userHandle", .optional(r.response.userHandle.map { Base64URL.encode($0.bytes) })),
            ("signature", .string(Base64URL.encode(r.response.signature.bytes))),
            ("clientData", clientData(r.response.clientDataJSON.bytes)),
            ("authenticatorData", authenticatorData(r.response.authenticatorData.bytes)),
            ("clientExtensionResults", extensionResults(r.clientExtensionResults)),
        ])
    }

    static func extensionResults(_ e: AuthenticationExtensionsClientOutputsJSON) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let appid = e.appid { members.append(("appid", .bool(appid))) }
        if let credProps = e.credProps {
            members.append(("credProps", .object([("rk", credProps.rk.map(JSONValue.bool) ?? .null)])))
        }
        if let prf = e.prf {
            var p: [(String, JSONValue)] = [("enabled", prf.enabled.map(JSONValue.bool) ?? .null)]
            if let r = prf.results {
                p.append(
                    (
                        "results",
                        .object([("first", .string(r.first.description)), ("second", .optional(r.second?.description))])
                    ))
            }
            members.append(("prf", .object(p)))
        }
        if let lb = e.largeBlob {
            members.append(
                (
                    "largeBlob",
                    .object([
                        ("supported", lb.supported.map(JSONValue.bool) ?? .null),
                        ("blob", .optional(lb.blob?.description)),
                        ("written", lb.written.map(JSONValue.bool) ?? .null),
                    ])
                ))
        }
        return .object(members)
    }

    static func clientData(_ bytes: [UInt8]) -> JSONValue {
        do {
            let c = try CollectedClientData(bytes: bytes)
            var members: [(String, JSONValue)] = [
                ("type", .string(c.type)), ("challenge", .string(c.challenge)), ("origin", .string(c.origin)),
            ]
            members.append(("crossOrigin", c.crossOrigin.map(JSONValue.bool) ?? .null))
            members.append(("topOrigin", .optional(c.topOrigin)))
            return .object(members)
        } catch {
            return .object([("error", .string(error.code.name)), ("detail", .string(error.detail))])
        }
    }

    /// The attestation statement checked on its own (§7.1 steps 21–22 without the ceremony's other steps): what it
    /// proves, the trust path, the metadata statement of the model and the provider's name.
    static func attestation(
        _ response: RegistrationResponseJSON, time: Date, metadata: MetadataIndex?
    ) async -> JSONValue {
        let object: AttestationObject
        do {
            object = try AttestationObject(
                bytes: response.response.attestationObject.bytes, options: COSEKeyOptions(allowRS1: true))
        } catch {
            return .object([("verified", .bool(false)), ("error", .string(error.code.name))])
        }
        var trust = AttestationTrust(verificationTime: time, allowSHA1Signatures: true, metadata: metadata)
        trust.safetyNet = SafetyNetPolicy()
        if let bundled = try? TrustAnchors.bundled() { trust.formatAnchors = bundled.formatAnchors }
        let clientDataHash = Array(SHA256.hash(data: response.response.clientDataJSON.bytes))
        let aaguid = object.authenticatorData.attestedCredentialData?.aaguid
        var members: [(String, JSONValue)] = []
        var leaf: Certificate?
        do {
            let result = try await AttestationFormatRegistry.standard.verify(
                object, clientDataHash: clientDataHash, trust: trust, now: time)
            leaf = result.trustPath.first
            let path = result.chainVerified ? result.verifiedChain : result.trustPath
            members += [
                ("verified", .bool(true)),
                ("type", .string(result.type.rawValue)),
                ("chainVerified", .bool(result.chainVerified)),
                ("trustPath", .array(path.map { .string(subjectText($0)) })),
                ("trustAnchor", .optional(result.trustAnchor.map { $0.subject.description })),
            ]
        } catch {
            members += [("verified", .bool(false)), ("error", .string(error.code.name))]
            if !error.step.isEmpty { members.append(("step", .string(error.step))) }
            // The certificates as sent, leaf first: what the chain would have been.
            let x5c =
                (try? CBORDecoder(options: .lenientMapOrder).decode(response.response.attestationObject.bytes))?[
                    text: "attStmt"]?[text: "x5c"]?.array ?? []
            let certificates = x5c.compactMap(\.bytes).compactMap { try? Certificate(derEncoded: $0) }
            leaf = certificates.first
            members += [
                ("chainVerified", .bool(false)),
                ("trustPath", .array(certificates.map { .string(subjectText($0)) })),
            ]
        }
        let entry = metadata?.entry(aaguid: aaguid, attestationCertificate: leaf)
        members.append(("metadata", entry.map(JSONValue.metadata) ?? .null))
        let provider = aaguid.flatMap { AuthenticatorProviders.sesameBundled[$0]?.name } ?? entry?.name
        members.append(("provider", .optional(provider)))
        return .object(members)
    }

    /// A certificate's subject; a TPM AIK's is empty by rule (§8.3.1), which the output says rather than print "".
    static func subjectText(_ certificate: Certificate) -> String {
        let subject = certificate.subject.description
        return subject.isEmpty ? "(empty subject)" : subject
    }

    static func attestationObject(_ bytes: [UInt8]) -> JSONValue {
        let item: CBOR
        do { item = try CBORDecoder(options: .lenientMapOrder).decode(bytes) } catch {
            return .object([("error", .string("invalidCBOR")), ("detail", .string(error.description))])
        }
        var members: [(String, JSONValue)] = [("fmt", .optional(item[text: "fmt"]?.string))]
        let statement = item[text: "attStmt"] ?? .map([])
        members.append(("attStmt", JSONValue.from(statement)))
        var certificates: [JSONValue] = []
        for der in (statement[text: "x5c"]?.array ?? []).compactMap(\.bytes) {
            certificates.append(certificate(der))
        }
        members.append(("certificates", .array(certificates)))
        if let authData = item[text: "authData"]?.bytes {
            members.append(("authenticatorData", authenticatorData(authData)))
        } else {
            members.append(("authenticatorData", .null))
        }
        return .object(members)
    }

    static func certificate(_ der: [UInt8]) -> JSONValue {
        do {
            let cert = try Certificate(derEncoded: der)
            return .object([
                ("subject", .string(cert.subject.description)),
                ("issuer", .string(cert.issuer.description)),
                ("serialNumber", .string(cert.serialNumber.description)),
                ("notBefore", .string(ISO8601DateFormatter().string(from: cert.notValidBefore))),
                ("notAfter", .string(ISO8601DateFormatter().string(from: cert.notValidAfter))),
                ("selfSigned", .bool(cert.subject == cert.issuer)),
            ])
        } catch {
            return .object([("error", .string("invalid certificate"))])
        }
    }

    static func authenticatorData(_ bytes: [UInt8]) -> JSONValue {
        let data: AuthenticatorData
        do { data = try AuthenticatorData(bytes: bytes, options: COSEKeyOptions(allowRS1: true)) } catch {
            var members: [(String, JSONValue)] = [("error", .string(error.code.name))]
            if !error.detail.isEmpty { members.append(("detail", .string(error.detail))) }
            if bytes.count >= 37 {
                // The fixed header can still be shown.
                members.append(("rpIdHash", .string(Hex.encode(bytes[0..<32]))))
                members.append(("flags", JSONValue.flags(AuthenticatorFlags(rawValue: bytes[32]))))
                members.append(
                    (
                        "signCount",
                        .int(
                            Int64(
                                UInt32(bytes[33]) << 24 | UInt32(bytes[34]) << 16 | UInt32(bytes[35]) << 8
                                    | UInt32(bytes[36])))
                    ))
            }
            return .object(members)
        }
        var members: [(String, JSONValue)] = [
            ("rpIdHash", .string(Hex.encode(data.rpIdHash))),
            ("flags", JSONValue.flags(data.flags)),
            ("signCount", .int(Int64(data.signCount))),
        ]
        if let attested = data.attestedCredentialData {
            members.append(("aaguid", .string(attested.aaguid.uuidString)))
            members.append(("credentialId", .string(Base64URL.encode(attested.credentialId))))
            members.append(
                ("credentialPublicKey", coseKey(attested.publicKeyBytes, algorithm: attested.publicKey.algorithm)))
        }
        members.append(("extensions", data.extensions.map(JSONValue.from) ?? .null))
        return .object(members)
    }

    static let coseLabels: [Int64: String] = [1: "kty", 3: "alg", -1: "crv/n/pub", -2: "x/e", -3: "y"]

    static func coseKey(_ bytes: [UInt8], algorithm: COSEAlgorithm) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("alg", .int(Int64(algorithm.rawValue))), ("algName", .string(algorithm.name)),
            ("cose", .string(Base64URL.encode(bytes))),
        ]
        if let item = try? CBORDecoder(options: .lenientMapOrder).decode(bytes), let entries = item.mapEntries {
            members.append(
                (
                    "parameters",
                    .object(
                        entries.map { entry in
                            let label = entry.key.int64.flatMap { coseLabels[$0] }.map {
                                "\(JSONValue.keyText(entry.key)) (\($0))"
                            }
                            return (label ?? JSONValue.keyText(entry.key), JSONValue.from(entry.value))
                        })
                ))
        }
        return .object(members)
    }

    /// Human-readable rendering: one `path: value` line per leaf.
    static func text(_ value: JSONValue, prefix: String = "") -> String {
        switch value {
        case .object(let members):
            return members.map { member in
                let (key, v) = (member.key, member.value)
                let path = prefix.isEmpty ? key : prefix + "." + key
                if case .object(let inner) = v, !inner.isEmpty { return text(v, prefix: path) }
                if case .array(let items) = v, !items.isEmpty { return text(v, prefix: path) }
                return path + ": " + v.rendered() + "\n"
            }.joined()
        case .array(let items):
            return items.enumerated().map { i, v in
                let path = "\(prefix)[\(i)]"
                if case .object = v { return text(v, prefix: path) }
                return path + ": " + v.rendered() + "\n"
            }.joined()
        default:
            return prefix + ": " + value.rendered() + "\n"
        }
    }
}
