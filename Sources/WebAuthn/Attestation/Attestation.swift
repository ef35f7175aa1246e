import CBOR
import Foundation
import SwiftASN1
import X509

// Attestation statement verification (W3C WebAuthn Level 3 §6.5, §8).
//
// An attestation object carries a format name and a statement:
//
//     attObj = { authData: bytes, $$attStmtType }
//     attStmtTemplate = ( fmt: text, attStmt: { * tstr => any } )     ; compound: attStmt is an array (§8.9)
//
// Each format has a verifier (one file each: None.swift, Packed.swift, TPM.swift, AndroidKey.swift, SafetyNet.swift,
// FIDOU2F.swift, Apple.swift, Compound.swift) that checks the statement's signature and format rules and, through
// `AttestationCertificateChain`, the certificate chain against the anchors that apply: the caller's, those for the
// format (`TrustAnchors`), and those of the FIDO metadata statement for the authenticator. The registry maps `fmt` to
// a verifier; a verifier of another format is added with `AttestationFormatRegistry.adding(_:)`.
//
// Verification is `async` because chain building uses swift-certificates' `Verifier`, whose `validate` is async.

/// How much an attestation says about the authenticator (W3C WebAuthn §6.5.4). A server applies its policy to it.
public enum AttestationType: String, Sendable, Hashable, Codable {
    /// No attestation statement (`none`, or an unknown format the policy accepts as none).
    case none
    /// Signed with the credential key itself: proves possession, says nothing about the device.
    case `self`
    /// Signed with an attestation key certified by the vendor (packed x5c, fido-u2f).
    case basic
    /// Signed with a key certified by an attestation CA (tpm).
    case attCA = "attca"
    /// Signed by an anonymisation CA for this credential only (apple).
    case anonCA = "anonca"
}

/// The caller's trust policy for attestation: which roots it trusts, at what time certificates are checked, and
/// the format rules that are a matter of policy (SHA-1, Android software keys, SafetyNet, TPM vendors).
///
/// Build one per request from configuration; nothing here reads the clock.
public struct AttestationTrust: Sendable {
    /// Root certificates the caller trusts for every format. Together with ``formatAnchors`` for the statement's
    /// format: when both are empty, certificate chains are not evaluated (the statement's signature and format
    /// rules are still verified, and the result says `chainVerified == false`).
    public var trustAnchors: [Certificate]
    /// Root certificates trusted for one format only, by `fmt` (e.g. the Apple WebAuthn root for `apple`, Google's
    /// hardware attestation roots for `android-key`). ``TrustAnchors/bundled()`` holds the roots Sesame ships.
    public var formatAnchors: [String: [Certificate]]
    /// When certificate validity is checked; `nil` means the `now` given to `verify` (the ceremony's time).
    public var verificationTime: Date?
    /// Accept an attestation format this library does not know as if it were `none`. Off by default: an unknown
    /// format is then `.unsupportedAttestationFormat`.
    public var acceptUnknownFormatsAsNone: Bool
    /// Accept an attestation certificate that is itself one of `trustAnchors` (a pinned batch certificate).
    ///
    /// W3C WebAuthn §7.1 lets the attestation certificate itself be the acceptable certificate, and some metadata
    /// entries list a self-signed batch certificate as their "root". Sesame leaves this off by default: anchors are
    /// usually CA roots (Apple, Yubico, a vendor's MDS root), and a leaf equal to one of them more often means a
    /// mixed-up anchor list than a deliberate pin. Off: the leaf must chain to an anchor other than itself, so a
    /// self-signed leaf is never its own root. On: a leaf that byte-for-byte equals an anchor is trusted when it is
    /// within its validity period at the verification time (its own signature already proved possession of its
    /// key; RFC 5280's CA requirement for a lone root does not apply to a pinned end-entity certificate).
    public var acceptsLeafAsTrustAnchor: Bool
    /// Accept attestation signatures made with RSASSA-PKCS1-v1_5 and SHA-1 (COSE RS1, -65535), and a `tpm`
    /// `extraData` that is a SHA-1 digest. Off by default: SHA-1 collisions are practical. Every Windows Hello TPM
    /// statement seen so far (all 14 TPM captures in the shared corpus) is RS1, so a relying party that wants TPM
    /// attestation from Windows machines has to turn this on and accept that risk for the attestation signature
    /// (the credential key itself is RS256 or ES256 and is unaffected).
    public var allowSHA1Signatures: Bool
    /// TPM manufacturers (`id:XXXXXXXX`) accepted in an AIK certificate's subjectAltName. Default: every vendor of
    /// the TCG TPM Vendor ID Registry (``TPMVendors/all``).
    public var tpmManufacturers: Set<String>
    /// `android-key` rules that are policy (software-enforced lists, lists without origin and purpose).
    public var androidKey: AndroidKeyPolicy
    /// `android-safetynet` (deprecated): nil, the default, refuses every SafetyNet statement with
    /// `.safetyNetNotEnabled`; a policy value enables the format with its freshness and integrity rules.
    public var safetyNet: SafetyNetPolicy?
    /// FIDO metadata from a verified MDS3 BLOB: the statement of the attested model adds its
    /// `attestationRootCertificates` to the anchors, for that model only (by AAGUID, or by attestation certificate
    /// key identifier for U2F authenticators).
    public var metadata: MetadataIndex?

    /// The AAGUID of the registration being verified, set by ``AttestationFormatRegistry`` so that chain
    /// evaluation can find the metadata statement.
    var subjectAAGUID: AAGUID?

    public init(
        trustAnchors: [Certificate] = [],
        formatAnchors: [String: [Certificate]] = [:],
        verificationTime: Date? = nil,
        acceptUnknownFormatsAsNone: Bool = false,
        acceptsLeafAsTrustAnchor: Bool = false,
        allowSHA1Signatures: Bool = false,
        tpmManufacturers: Set<String> = TPMVendors.all,
        androidKey: AndroidKeyPolicy = AndroidKeyPolicy(),
        safetyNet: SafetyNetPolicy? = nil,
        metadata: MetadataIndex? = nil
    ) {
        self.trustAnchors = trustAnchors
        self.formatAnchors = formatAnchors
        self.verificationTime = verificationTime
        self.acceptUnknownFormatsAsNone = acceptUnknownFormatsAsNone
        self.acceptsLeafAsTrustAnchor = acceptsLeafAsTrustAnchor
        self.allowSHA1Signatures = allowSHA1Signatures
        self.tpmManufacturers = tpmManufacturers
        self.androidKey = androidKey
        self.safetyNet = safetyNet
        self.metadata = metadata
    }
}

extension AttestationTrust {
    /// Reads trust anchors from PEM text holding one or more `CERTIFICATE` blocks (a root store file, a
    /// `--trust-anchor` argument). Other block types, or text without any certificate, are an error.
    public static func certificates(fromPEM text: String) throws(WebAuthnError) -> [Certificate] {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw WebAuthnError(.invalidConfiguration, detail: "trust anchors are not valid PEM")
        }
        guard !documents.isEmpty else {
            throw WebAuthnError(.invalidConfiguration, detail: "no certificate in the trust anchor PEM")
        }
        var certificates: [Certificate] = []
        for (index, document) in documents.enumerated() {
            guard document.discriminator == "CERTIFICATE", let certificate = try? Certificate(pemDocument: document)
            else {
                throw WebAuthnError(
                    .invalidConfiguration, detail: "PEM block \(index + 1) is not an X.509 certificate")
            }
            certificates.append(certificate)
        }
        return certificates
    }
}

/// What a verified attestation statement established.
public struct AttestationResult: Sendable, Hashable {
    /// The statement's `fmt`, as received.
    public let format: String
    public let type: AttestationType
    /// The attestation certificates from `x5c`, leaf first; empty for `none` and `self`.
    public let trustPath: [Certificate]
    /// True only when the trust path was validated up to one of the caller's trust anchors. False when there is no
    /// certificate (`none`, `self`) or the caller supplied no anchors for this format.
    public let chainVerified: Bool
    /// The validated chain, leaf first and ending with the trust anchor it reached; empty unless `chainVerified`.
    public let verifiedChain: [Certificate]
    /// For `compound` (W3C WebAuthn §8.9): the result of every sub-statement, in order. Empty for other formats.
    public let components: [AttestationResult]

    public init(
        format: String, type: AttestationType, trustPath: [Certificate], chainVerified: Bool,
        verifiedChain: [Certificate] = [], components: [AttestationResult] = []
    ) {
        self.format = format
        self.type = type
        self.trustPath = trustPath
        self.chainVerified = chainVerified
        self.verifiedChain = verifiedChain
        self.components = components
    }

    /// The trust anchor the chain reached, when it was verified.
    public var trustAnchor: Certificate? { chainVerified ? verifiedChain.last : nil }
}

/// The verification procedure of one attestation statement format (W3C WebAuthn §8).
public protocol AttestationStatementVerifier: Sendable {
    /// The `fmt` value this verifier handles, e.g. `"packed"`.
    var format: String { get }

    /// Verifies `statement` for a new credential.
    ///
    /// - Parameters:
    ///   - statement: `attStmt` as decoded from the attestation object.
    ///   - authenticatorData: the attestation object's authenticator data (with attested credential data).
    ///   - clientDataHash: SHA-256 of `clientDataJSON`, 32 bytes.
    ///   - trust: the caller's trust anchors and verification time.
    ///   - now: the ceremony's time, used when `trust.verificationTime` is nil.
    func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult
}

/// Maps attestation formats to their verifiers.
public struct AttestationFormatRegistry: Sendable {
    private var verifiers: [String: any AttestationStatementVerifier]

    /// The formats of W3C WebAuthn Level 3 that this library implements: `none`, `packed`, `tpm`, `android-key`,
    /// `android-safetynet` (refused unless ``AttestationTrust/safetyNet`` enables it), `fido-u2f`, `apple` and
    /// `compound`, whose sub-statements are verified by this registry's verifiers.
    public static let standard = AttestationFormatRegistry(verifiers: [
        NoneAttestationVerifier(),
        PackedAttestationVerifier(),
        TPMAttestationVerifier(),
        AndroidKeyAttestationVerifier(),
        SafetyNetAttestationVerifier(),
        FIDOU2FAttestationVerifier(),
        AppleAttestationVerifier(),
        CompoundAttestationVerifier(),
    ])

    /// A registry of `verifiers`; a later verifier for the same format replaces an earlier one.
    public init(verifiers: [any AttestationStatementVerifier]) {
        var table: [String: any AttestationStatementVerifier] = [:]
        for verifier in verifiers { table[verifier.format] = verifier }
        self.verifiers = table
    }

    /// This registry with `verifier` added (replacing any verifier for the same format).
    public func adding(_ verifier: any AttestationStatementVerifier) -> AttestationFormatRegistry {
        var copy = self
        copy.verifiers[verifier.format] = verifier
        return copy
    }

    /// The formats this registry can verify, sorted.
    public var formats: [String] { verifiers.keys.sorted() }

    /// The verifier for `format` (an exact, case-sensitive match, as §7.1 requires), if any.
    public func verifier(for format: String) -> (any AttestationStatementVerifier)? { verifiers[format] }

    /// Verifies the statement of `object` with the verifier for its `fmt`.
    ///
    /// An unknown format is `.unsupportedAttestationFormat`, unless `trust.acceptUnknownFormatsAsNone` is set: then
    /// the result has type `.none`, the received `fmt`, and nothing in the statement is checked.
    public func verify(
        _ object: AttestationObject, clientDataHash: [UInt8], trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        guard clientDataHash.count == 32 else {
            throw WebAuthnError(.invalidConfiguration, detail: "clientDataHash must be the 32-byte SHA-256")
        }
        guard let verifier = verifiers[object.format] else {
            if trust.acceptUnknownFormatsAsNone {
                return AttestationResult(format: object.format, type: .none, trustPath: [], chainVerified: false)
            }
            // Only names from the IANA registry are repeated; anything else came from the response.
            let name = Self.registeredFormats.contains(object.format) ? object.format : "an unregistered format"
            throw WebAuthnError(
                .unsupportedAttestationFormat, step: "§7.1: attestation statement format",
                detail: "fmt \(name) is not supported by this registry")
        }
        var trust = trust
        trust.subjectAAGUID = object.authenticatorData.attestedCredentialData?.aaguid
        if let compound = verifier as? CompoundAttestationVerifier {
            return try await compound.verify(
                statement: object.statement, authenticatorData: object.authenticatorData,
                clientDataHash: clientDataHash, trust: trust, now: now, registry: self)
        }
        return try await verifier.verify(
            statement: object.statement, authenticatorData: object.authenticatorData,
            clientDataHash: clientDataHash, trust: trust, now: now)
    }

    /// The IANA "WebAuthn Attestation Statement Format Identifiers" registry (RFC 8809 and its updates).
    static let registeredFormats: Set<String> = [
        "packed", "tpm", "android-key", "android-safetynet", "fido-u2f", "apple", "none", "compound",
    ]
}

// MARK: - Helpers shared by the format verifiers

extension AttestationStatementVerifier {
    /// The step label for errors of this format, e.g. `§8.2 packed: sig`.
    func step(_ section: String, _ what: String) -> String { "§\(section) \(format): \(what)" }
}

enum AttestationStatement {
    /// The statement as a map with text keys; every key must be one of `allowed`.
    static func fields(
        _ statement: CBOR, allowed: Set<String>, step: String
    ) throws(WebAuthnError) -> [String: CBOR] {
        guard let entries = statement.mapEntries else {
            throw WebAuthnError(.invalidAttestationStatement, step: step, detail: "attStmt is not a map")
        }
        var fields: [String: CBOR] = [:]
        for entry in entries {
            guard let key = entry.key.string, allowed.contains(key) else {
                throw WebAuthnError(.invalidAttestationStatement, step: step, detail: "attStmt has an unexpected key")
            }
            guard fields[key] == nil else {
                throw WebAuthnError(.invalidAttestationStatement, step: step, detail: "attStmt repeats key \(key)")
            }
            fields[key] = entry.value
        }
        return fields
    }

    static func algorithm(_ value: CBOR?, step: String) throws(WebAuthnError) -> COSEAlgorithm {
        guard let raw = value?.int else {
            throw WebAuthnError(.invalidAttestationStatement, step: step, detail: "alg must be an integer")
        }
        return COSEAlgorithm(rawValue: raw)
    }

    static func signature(_ value: CBOR?, step: String) throws(WebAuthnError) -> [UInt8] {
        guard let bytes = value?.bytes, !bytes.isEmpty else {
            throw WebAuthnError(.invalidAttestationStatement, step: step, detail: "sig must be a non-empty byte string")
        }
        return bytes
    }

    static func credential(
        _ authenticatorData: AuthenticatorData, step: String
    ) throws(WebAuthnError) -> AttestedCredentialData {
        guard let credential = authenticatorData.attestedCredentialData else {
            throw WebAuthnError(.attestedCredentialDataMissing, step: step)
        }
        return credential
    }
}
