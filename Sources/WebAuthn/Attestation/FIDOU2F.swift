import CBOR
import Crypto
import Foundation
import X509

/// The `fido-u2f` format (W3C WebAuthn §8.6): a U2F registration signature by a P-256 attestation key.
///
/// CDDL: `u2fStmtFormat = { x5c: [ attestnCert: bytes ], sig: bytes }` (exactly one certificate).
///
/// The signed data is the U2F registration message:
/// `0x00 ‖ rpIdHash (32) ‖ clientDataHash (32) ‖ credentialId ‖ 0x04 ‖ x (32) ‖ y (32)`, and the credential key
/// must be an EC2 P-256 key. The result is `.basic`.
public struct FIDOU2FAttestationVerifier: AttestationStatementVerifier {
    public let format = "fido-u2f"
    public var chainRules: AttestationChainRules

    public init(chainRules: AttestationChainRules = .rfc5280) {
        self.chainRules = chainRules
    }

    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        let fields = try AttestationStatement.fields(statement, allowed: ["sig", "x5c"], step: step("8.6", "attStmt"))
        let signature = try AttestationStatement.signature(fields["sig"], step: step("8.6", "sig"))
        let x5c = try AttestationCertificateChain.parse(fields["x5c"], format: format)
        guard x5c.count == 1 else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: step("8.6", "x5c"), detail: "x5c must hold exactly one certificate")
        }
        let certificate = x5c[0]
        guard P256.Signing.PublicKey(certificate.publicKey) != nil else {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step("8.6", "attCert"),
                detail: "the attestation certificate key must be an EC P-256 key")
        }

        let credential = try AttestationStatement.credential(authenticatorData, step: step("8.6", "authData"))
        guard credential.publicKey.algorithm == COSEAlgorithm.es256, let (x, y) = credential.publicKey.ec2Coordinates,
            x.count == 32, y.count == 32
        else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: step("8.6", "credentialPublicKey"),
                detail: "fido-u2f needs an EC2 P-256 credential key")
        }

        var verificationData: [UInt8] = [0x00]
        verificationData.reserveCapacity(1 + 32 + 32 + credential.credentialId.count + 65)
        verificationData += authenticatorData.rpIdHash
        verificationData += clientDataHash
        verificationData += credential.credentialId
        verificationData += [0x04] + x + y
        try certificate.publicKey.verifyAttestationSignature(
            signature, over: verificationData, algorithm: .es256, step: step("8.6", "sig"))

        let chain = try await AttestationCertificateChain.validatedPath(
            x5c, trust: trust, now: now, rules: chainRules, format: format)
        return AttestationResult(
            format: format, type: .basic, trustPath: x5c, chainVerified: chain != nil, verifiedChain: chain ?? [])
    }
}
