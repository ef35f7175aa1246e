import CBOR
import Crypto
import Foundation
import SesameBytes
import SwiftASN1
import X509

/// The `tpm` format (W3C WebAuthn Level 3 §8.3): a TPM 2.0 certifies the credential key with `TPM2_Certify`, signing
/// a `TPMS_ATTEST` (`certInfo`) with an attestation identity key (AIK) whose certificate chains to an attestation
/// CA (Microsoft's for Windows Hello).
///
/// CDDL:
/// ```
/// tpmStmtFormat = { ver: "2.0", ( alg: COSEAlgorithmIdentifier, x5c: [ aikCert: bytes, * (caCert: bytes) ] ),
///                   sig: bytes, certInfo: bytes, pubArea: bytes }
/// ```
/// `certInfo` is a ``TPMSAttest``, `pubArea` a ``TPMTPublic`` (TPM 2.0 Library Part 2). ECDAA (`ecdaaKeyId`) was
/// removed from the specification and is refused.
///
/// The verification procedure of §8.3, numbered here as the specification lists it (errors carry these numbers):
/// 1. `attStmt` has the syntax above (and `certInfo`, `pubArea` parse with exact length accounting).
/// 2. The key described by `pubArea` (`parameters` and `unique`) is the credential public key.
/// 3. `attToBeSigned` = authenticatorData ‖ clientDataHash.
/// 4. Integrity of `certInfo`: (a) `x5c` is present; (b) `aikCert` meets §8.3.1; (c) its id-fido-gen-ce-aaguid
///    extension, if any, equals the AAGUID in authenticator data; (d) `sig` is a valid `alg` signature over
///    `certInfo` by the key of `aikCert`.
/// 5. Validity of `certInfo`: (a) `magic` is `TPM_GENERATED_VALUE`; (b) `type` is `TPM_ST_ATTEST_CERTIFY`;
///    (c) `extraData` is the `alg` hash of `attToBeSigned`; (d) `attested.name` is the Name of `pubArea`
///    (`nameAlg ‖ H_nameAlg(pubArea)`, TPM 2.0 Part 1 §16).
/// 6. The result is `attCA` with trust path `x5c`, evaluated against the caller's anchors.
///
/// SHA-1: every TPM capture in the shared corpus signs with RS1 and SHA-1 `extraData`. Both are refused unless
/// ``AttestationTrust/allowSHA1Signatures`` is set (`.sha1SignatureNotAllowed`).
///
/// The AIK certificate's certificatePolicies and subjectAltName extensions are critical in every Windows Hello
/// chain. This verifier enforces subjectAltName (§8.3.1) and accepts any certificate policy: Sesame does not
/// evaluate policy trees, and the requirement that matters, the AIK EKU, is checked directly.
public struct TPMAttestationVerifier: AttestationStatementVerifier {
    public let format = "tpm"
    /// Chain rules used when anchors apply; by default ``tpmChainRules``.
    public var chainRules: AttestationChainRules

    /// tcg-kp-AIKCertificate, the extended key usage an AIK certificate must carry (§8.3.1).
    public static let aikCertificateEKU: ASN1ObjectIdentifier = [2, 23, 133, 8, 3]
    static let tpmManufacturer: ASN1ObjectIdentifier = [2, 23, 133, 2, 1]
    static let tpmModel: ASN1ObjectIdentifier = [2, 23, 133, 2, 2]
    static let tpmVersion: ASN1ObjectIdentifier = [2, 23, 133, 2, 3]
    static let certificatePolicies: ASN1ObjectIdentifier = [2, 5, 29, 32]

    /// RFC 5280 plus the AIK certificates' critical certificatePolicies and subjectAltName (see the type's notes).
    public static let tpmChainRules = AttestationChainRules(
        handledCriticalExtensions: [certificatePolicies, .X509ExtensionID.subjectAlternativeName])

    public init(chainRules: AttestationChainRules = TPMAttestationVerifier.tpmChainRules) {
        self.chainRules = chainRules
    }

    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        // Step 1: syntax.
        let syntax = step("8.3", "step 1: attStmt")
        let fields = try AttestationStatement.fields(
            statement, allowed: ["ver", "alg", "x5c", "sig", "certInfo", "pubArea", "ecdaaKeyId"], step: syntax)
        if fields["ecdaaKeyId"] != nil {
            throw WebAuthnError(
                .invalidAttestationStatement, step: syntax, detail: "ECDAA attestation is not supported")
        }
        guard fields["ver"]?.string == "2.0" else {
            throw WebAuthnError(.invalidAttestationStatement, step: syntax, detail: "ver must be \"2.0\"")
        }
        let algorithm = try AttestationStatement.algorithm(fields["alg"], step: syntax)
        let signature = try AttestationStatement.signature(fields["sig"], step: syntax)
        guard let certInfoBytes = fields["certInfo"]?.bytes, let pubAreaBytes = fields["pubArea"]?.bytes else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: syntax, detail: "certInfo and pubArea must be byte strings")
        }
        let pubArea: TPMTPublic
        let certInfo: TPMSAttest
        do {
            pubArea = try TPMTPublic(bytes: pubAreaBytes)
            certInfo = try TPMSAttest(bytes: certInfoBytes)
        } catch {
            throw error.at(syntax)
        }
        let credential = try AttestationStatement.credential(authenticatorData, step: syntax)

        // Step 2: pubArea describes the credential public key.
        try Self.checkPublicArea(pubArea, matches: credential.publicKey, step: step("8.3", "step 2: pubArea"))

        // Step 3: attToBeSigned.
        let attToBeSigned = authenticatorData.bytes + clientDataHash

        // Step 4: integrity of certInfo.
        guard fields["x5c"] != nil else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: step("8.3", "step 4a: x5c"), detail: "x5c is required")
        }
        let x5c = try AttestationCertificateChain.parse(fields["x5c"], format: format)
        let aikCert = x5c[0]
        try Self.checkAIKCertificate(aikCert, manufacturers: trust.tpmManufacturers, format: format)
        if let ext = try AttestationExtensions.aaguid(in: aikCert, step: step("8.3", "step 4c: aikCert AAGUID")) {
            guard ext.value == credential.aaguid.bytes else {
                throw WebAuthnError(.attestationAAGUIDMismatch, step: step("8.3", "step 4c: aikCert AAGUID"))
            }
        }
        try aikCert.publicKey.verifyAttestationSignature(
            signature, over: certInfoBytes, algorithm: algorithm, allowSHA1: trust.allowSHA1Signatures,
            step: step("8.3", "step 4d: sig"))

        // Step 5: certInfo is valid.
        guard certInfo.magic == TPMSAttest.generatedValue else {
            throw WebAuthnError(.tpmMagicInvalid, step: step("8.3", "step 5a: certInfo.magic"))
        }
        // Step 5b (type) is enforced by the parser: TPMU_ATTEST can only be read for TPM_ST_ATTEST_CERTIFY.
        let expectedExtraData = try Self.digest(
            attToBeSigned, for: algorithm, trust: trust, step: step("8.3", "step 5c: extraData"))
        guard ConstantTime.equal(certInfo.extraData, expectedExtraData) else {
            throw WebAuthnError(.attestationNonceMismatch, step: step("8.3", "step 5c: extraData"))
        }
        if pubArea.nameAlg == .sha1, !trust.allowSHA1Signatures {
            throw WebAuthnError(
                .sha1SignatureNotAllowed, step: step("8.3", "step 5d: attested.name"),
                detail: "a SHA-1 nameAlg needs the SHA-1 opt-in")
        }
        guard certInfo.attestedName == Self.name(of: pubArea) else {
            throw WebAuthnError(.tpmNameMismatch, step: step("8.3", "step 5d: attested.name"))
        }

        // Step 6: AttCA, trust path x5c.
        let chain = try await AttestationCertificateChain.validatedPath(
            x5c, trust: trust, now: now, rules: chainRules, format: format)
        return AttestationResult(
            format: format, type: .attCA, trustPath: x5c, chainVerified: chain != nil, verifiedChain: chain ?? [])
    }

    // MARK: - Step 2

    /// Whether `pubArea`'s key is `key`: same modulus, exponent and size for RSA; same curve and point for ECC.
    static func checkPublicArea(_ pubArea: TPMTPublic, matches key: COSEKey, step: String) throws(WebAuthnError) {
        switch pubArea.parameters {
        case .rsa(let keyBits, let exponent, let modulus):
            guard let (n, e) = key.rsaComponents else {
                throw WebAuthnError(
                    .attestationPublicKeyMismatch, step: step, detail: "pubArea is RSA, the credential key is not")
            }
            let tpmModulus = Array(modulus.drop { $0 == 0 })
            var tpmExponent: [UInt8] = withUnsafeBytes(of: exponent.bigEndian, Array.init)
            tpmExponent = Array(tpmExponent.drop { $0 == 0 })
            let bits = n.isEmpty ? 0 : n.count * 8 - n[0].leadingZeroBitCount
            guard tpmModulus == n, tpmExponent == e, Int(keyBits) == bits else {
                throw WebAuthnError(
                    .attestationPublicKeyMismatch, step: step, detail: "pubArea's RSA key is not the credential key")
            }
        case .ecc(let curveID, let x, let y):
            guard let (cx, cy) = key.ec2Coordinates else {
                throw WebAuthnError(
                    .attestationPublicKeyMismatch, step: step, detail: "pubArea is ECC, the credential key is not")
            }
            let expectedCurve: UInt16? =
                switch cx.count {
                case 32: TPMTPublic.curveP256
                case 48: TPMTPublic.curveP384
                case 66: TPMTPublic.curveP521
                default: nil
                }
            guard curveID == expectedCurve, x.count <= cx.count, y.count <= cy.count,
                [UInt8](repeating: 0, count: cx.count - x.count) + x == cx,
                [UInt8](repeating: 0, count: cy.count - y.count) + y == cy
            else {
                throw WebAuthnError(
                    .attestationPublicKeyMismatch, step: step, detail: "pubArea's ECC key is not the credential key")
            }
        }
    }

    // MARK: - Step 4b: AIK certificate requirements (§8.3.1)

    /// The TPM that made an AIK certificate, from its subjectAltName.
    public struct TPMDevice: Sendable, Hashable {
        public let manufacturer: String
        public let model: String
        public let version: String
    }

    /// Checks the §8.3.1 requirements: version 3, empty subject, subjectAltName with the TPM manufacturer (from
    /// `manufacturers`), model and version (TCG EK Credential Profile §3.2.9), the AIK extended key usage, basic
    /// constraints with CA false. Each failure names its requirement in the step.
    @discardableResult
    static func checkAIKCertificate(
        _ certificate: Certificate, manufacturers: Set<String>, format: String = "tpm"
    ) throws(WebAuthnError) -> TPMDevice {
        func fail(_ what: String, _ detail: String) -> WebAuthnError {
            WebAuthnError(.attestationCertificateInvalid, step: "§8.3.1 \(format): aikCert \(what)", detail: detail)
        }
        guard certificate.version == .v3 else { throw fail("version", "not an X.509 version 3 certificate") }
        guard certificate.subject.isEmpty else { throw fail("subject", "the subject must be empty") }

        let names: SubjectAlternativeNames?
        do { names = try certificate.extensions.subjectAlternativeNames } catch {
            throw fail("subjectAltName", "malformed subjectAltName")
        }
        guard let names else { throw fail("subjectAltName", "no subjectAltName extension") }
        var values: [ASN1ObjectIdentifier: [String]] = [:]
        for name in names {
            guard case .directoryName(let directory) = name else { continue }
            for rdn in directory {
                for attribute in rdn where [tpmManufacturer, tpmModel, tpmVersion].contains(attribute.type) {
                    values[attribute.type, default: []].append(String(attribute.value) ?? "")
                }
            }
        }
        guard let manufacturer = values[tpmManufacturer], manufacturer.count == 1,
            let model = values[tpmModel], model.count == 1, let version = values[tpmVersion], version.count == 1,
            !model[0].isEmpty, !version[0].isEmpty
        else {
            throw fail(
                "subjectAltName", "must name exactly one TPM manufacturer, model and version (TCG EK profile §3.2.9)")
        }
        guard manufacturers.contains(manufacturer[0]) else {
            // The value came from the response; only say that it is not listed.
            throw fail("subjectAltName", "the TPM manufacturer is not in the accepted vendor list")
        }

        let usage: ExtendedKeyUsage?
        do { usage = try certificate.extensions.extendedKeyUsage } catch {
            throw fail("EKU", "malformed extended key usage")
        }
        guard let usage, usage.contains(ExtendedKeyUsage.Usage(oid: aikCertificateEKU)) else {
            throw fail("EKU", "extended key usage must contain tcg-kp-AIKCertificate (2.23.133.8.3)")
        }

        let constraints: BasicConstraints?
        do { constraints = try certificate.extensions.basicConstraints } catch {
            throw fail("basic constraints", "malformed basic constraints")
        }
        guard case .notCertificateAuthority = constraints else {
            throw fail("basic constraints", "basic constraints must be present with CA false")
        }
        return TPMDevice(manufacturer: manufacturer[0], model: model[0], version: version[0])
    }

    // MARK: - Step 5

    /// The digest of `data` with the hash of attestation signature algorithm `algorithm` (RS1 → SHA-1, *256 →
    /// SHA-256, *384 → SHA-384, *512 → SHA-512).
    static func digest(
        _ data: [UInt8], for algorithm: COSEAlgorithm, trust: AttestationTrust, step: String
    ) throws(WebAuthnError) -> [UInt8] {
        switch algorithm {
        case .rs1:
            guard trust.allowSHA1Signatures else {
                throw WebAuthnError(.sha1SignatureNotAllowed, step: step, detail: "SHA-1 extraData needs the opt-in")
            }
            return Array(Insecure.SHA1.hash(data: data))
        case .rs256, .ps256, .es256: return Array(SHA256.hash(data: data))
        case .rs384, .ps384, .es384: return Array(SHA384.hash(data: data))
        case .rs512, .ps512, .es512: return Array(SHA512.hash(data: data))
        default:
            throw WebAuthnError(
                .unsupportedAlgorithm, step: step, detail: "alg \(algorithm.rawValue) has no TPM hash algorithm")
        }
    }

    /// The Name of a TPM object (TPM 2.0 Part 1 §16): `nameAlg` (2 bytes, big-endian) ‖ H_nameAlg(pubArea).
    static func name(of pubArea: TPMTPublic) -> [UInt8] {
        let algorithm: [UInt8] = [UInt8(pubArea.nameAlg.rawValue >> 8), UInt8(pubArea.nameAlg.rawValue & 0xFF)]
        let digest: [UInt8]
        switch pubArea.nameAlg {
        case .sha1: digest = Array(Insecure.SHA1.hash(data: pubArea.bytes))
        case .sha384: digest = Array(SHA384.hash(data: pubArea.bytes))
        case .sha512: digest = Array(SHA512.hash(data: pubArea.bytes))
        // SHA-256, and nothing else: `TPMTPublic` accepts only the four hash algorithms.
        default: digest = Array(SHA256.hash(data: pubArea.bytes))
        }
        return algorithm + digest
    }
}
