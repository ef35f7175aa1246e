import CBOR
import Foundation
import SwiftASN1
import X509

/// The `packed` format (W3C WebAuthn §8.2): a signature over `authenticatorData ‖ clientDataHash`, made either
/// with an attestation key certified in `x5c` (basic attestation) or with the credential key itself (self
/// attestation).
///
/// CDDL:
/// ```
/// packedStmtFormat = { alg: COSEAlgorithmIdentifier, sig: bytes, x5c: [ attestnCert: bytes, * (caCert: bytes) ] }
///                  / { alg: COSEAlgorithmIdentifier, sig: bytes }
/// ```
/// ECDAA (`ecdaaKeyId`) was removed from the specification and is refused.
///
/// With `x5c`, the attestation certificate must meet §8.2.1: X.509 version 3; subject with C, O, CN and
/// OU = "Authenticator Attestation"; basic constraints present with CA false; the id-fido-gen-ce-aaguid extension,
/// when present, not critical and equal to the AAGUID in authenticator data. The result is `.basic`: telling basic
/// from attCA needs metadata about the root, which a caller can apply to `trustPath`.
public struct PackedAttestationVerifier: AttestationStatementVerifier {
    public let format = "packed"
    /// Chain rules used when the caller supplies trust anchors.
    public var chainRules: AttestationChainRules

    public init(chainRules: AttestationChainRules = .rfc5280) {
        self.chainRules = chainRules
    }

    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        let fields = try AttestationStatement.fields(
            statement, allowed: ["alg", "sig", "x5c", "ecdaaKeyId"], step: step("8.2", "attStmt"))
        if fields["ecdaaKeyId"] != nil {
            throw WebAuthnError(
                .invalidAttestationStatement, step: step("8.2", "attStmt"), detail: "ECDAA attestation is not supported"
            )
        }
        let algorithm = try AttestationStatement.algorithm(fields["alg"], step: step("8.2", "alg"))
        let signature = try AttestationStatement.signature(fields["sig"], step: step("8.2", "sig"))
        let credential = try AttestationStatement.credential(authenticatorData, step: step("8.2", "authData"))
        let signedData = authenticatorData.bytes + clientDataHash

        guard fields["x5c"] != nil else {
            // Self attestation: the credential key signs, with its own algorithm.
            guard algorithm == credential.publicKey.algorithm else {
                throw WebAuthnError(
                    .attestationAlgorithmMismatch, step: step("8.2", "alg"),
                    detail: "self attestation alg \(algorithm.rawValue) differs from the credential key's "
                        + "\(credential.publicKey.algorithm.rawValue)")
            }
            guard credential.publicKey.isValidSignature(signature, over: signedData) else {
                throw WebAuthnError(.attestationSignatureInvalid, step: step("8.2", "sig"))
            }
            return AttestationResult(format: format, type: .`self`, trustPath: [], chainVerified: false)
        }

        let x5c = try AttestationCertificateChain.parse(fields["x5c"], format: format)
        let leaf = x5c[0]
        try Self.checkCertificateRequirements(leaf, aaguid: credential.aaguid, step: step("8.2.1", "attestnCert"))
        try leaf.publicKey.verifyAttestationSignature(
            signature, over: signedData, algorithm: algorithm, allowSHA1: trust.allowSHA1Signatures,
            step: step("8.2", "sig"))
        let chain = try await AttestationCertificateChain.validatedPath(
            x5c, trust: trust, now: now, rules: chainRules, format: format)
        return AttestationResult(
            format: format, type: .basic, trustPath: x5c, chainVerified: chain != nil, verifiedChain: chain ?? [])
    }

    /// The packed attestation certificate requirements (W3C WebAuthn §8.2.1).
    static func checkCertificateRequirements(
        _ certificate: Certificate, aaguid: AAGUID, step: String
    ) throws(WebAuthnError) {
        guard certificate.version == .v3 else {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "not an X.509 version 3 certificate")
        }

        var subject: [ASN1ObjectIdentifier: [String]] = [:]
        for rdn in certificate.subject {
            for attribute in rdn {
                subject[attribute.type, default: []].append(String(attribute.value) ?? "")
            }
        }
        let required: [(ASN1ObjectIdentifier, String)] = [
            (.RDNAttributeType.countryName, "C"),
            (.RDNAttributeType.organizationName, "O"),
            (.RDNAttributeType.organizationalUnitName, "OU"),
            (.RDNAttributeType.commonName, "CN"),
        ]
        for (type, name) in required {
            guard let values = subject[type], values.count == 1, !values[0].isEmpty else {
                throw WebAuthnError(
                    .attestationCertificateInvalid, step: step,
                    detail: "subject must have exactly one non-empty \(name)")
            }
        }
        guard subject[.RDNAttributeType.organizationalUnitName] == ["Authenticator Attestation"] else {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "subject OU must be \"Authenticator Attestation\"")
        }

        let basicConstraints: BasicConstraints?
        do {
            basicConstraints = try certificate.extensions.basicConstraints
        } catch {
            throw WebAuthnError(.attestationCertificateInvalid, step: step, detail: "malformed basic constraints")
        }
        guard case .notCertificateAuthority = basicConstraints else {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "basic constraints must be present with CA false")
        }

        if let ext = try AttestationExtensions.aaguid(in: certificate, step: step) {
            guard !ext.critical else {
                throw WebAuthnError(
                    .attestationCertificateInvalid, step: step, detail: "the AAGUID extension must not be critical")
            }
            guard ext.value == aaguid.bytes else {
                throw WebAuthnError(.attestationAAGUIDMismatch, step: step)
            }
        }
    }
}
