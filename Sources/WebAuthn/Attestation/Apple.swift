import CBOR
import Crypto
import Foundation
import SesameBytes
import X509

/// The `apple` format (W3C WebAuthn §8.8, Apple Anonymous Attestation): Apple's anonymisation CA issues a
/// certificate for the credential key itself, binding it to this registration through a nonce extension.
///
/// CDDL: `appleStmtFormat = { x5c: [ credCert: bytes, * (caCert: bytes) ] }`. Apple devices also send
/// `alg`; it is accepted and not used (nothing in this format is signed with it).
///
/// Checks: the extension 1.2.840.113635.100.8.2 of credCert holds SHA-256(authenticatorData ‖ clientDataHash);
/// credCert's key is the credential public key. The result is `.anonCA`.
public struct AppleAttestationVerifier: AttestationStatementVerifier {
    public let format = "apple"
    public var chainRules: AttestationChainRules

    public init(chainRules: AttestationChainRules = .rfc5280) {
        self.chainRules = chainRules
    }

    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        let fields = try AttestationStatement.fields(statement, allowed: ["x5c", "alg"], step: step("8.8", "attStmt"))
        if fields["alg"] != nil {
            _ = try AttestationStatement.algorithm(fields["alg"], step: step("8.8", "alg"))
        }
        let x5c = try AttestationCertificateChain.parse(fields["x5c"], format: format)
        let credCert = x5c[0]
        let credential = try AttestationStatement.credential(authenticatorData, step: step("8.8", "authData"))

        let expected = Array(SHA256.hash(data: authenticatorData.bytes + clientDataHash))
        let nonce = try AttestationExtensions.appleNonce(in: credCert, step: step("8.8", "credCert"))
        guard ConstantTime.equal(nonce, expected) else {
            throw WebAuthnError(.attestationNonceMismatch, step: step("8.8", "nonce"))
        }
        guard credCert.publicKey.isSameKey(as: credential.publicKey) else {
            throw WebAuthnError(
                .attestationPublicKeyMismatch, step: step("8.8", "credCert"),
                detail: "credCert's key is not the credential public key")
        }

        let chain = try await AttestationCertificateChain.validatedPath(
            x5c, trust: trust, now: now, rules: chainRules, format: format)
        return AttestationResult(
            format: format, type: .anonCA, trustPath: x5c, chainVerified: chain != nil, verifiedChain: chain ?? [])
    }
}
