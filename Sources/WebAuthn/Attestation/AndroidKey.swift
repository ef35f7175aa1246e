import CBOR
import Foundation
import SesameBytes
import X509

/// What an `android-key` verification accepts beyond W3C WebAuthn's fixed rules.
public struct AndroidKeyPolicy: Sendable, Hashable {
    /// Look for `origin` and `purpose` in `softwareEnforced` too (the union W3C WebAuthn §8.4 allows), not only in
    /// `teeEnforced`. Off by default: only keys whose properties the secure hardware itself enforces are accepted.
    public var acceptSoftwareEnforced: Bool
    /// Require `origin` and `purpose` to be present. On by default; §8.4 requires their values, and a list
    /// without them says nothing. Off accepts a key description that omits them (only checking them when they are
    /// present), as the W3C §16 test vector, made by a software keystore with empty lists, needs.
    public var requireOriginAndPurpose: Bool

    public init(acceptSoftwareEnforced: Bool = false, requireOriginAndPurpose: Bool = true) {
        self.acceptSoftwareEnforced = acceptSoftwareEnforced
        self.requireOriginAndPurpose = requireOriginAndPurpose
    }
}

/// The `android-key` format (W3C WebAuthn Level 3 §8.4): Android Keystore attests the credential key with a
/// certificate chain to Google's hardware attestation roots; the leaf carries a key description extension
/// (``AndroidKeyDescription``) that binds the key to this registration through `attestationChallenge`.
///
/// CDDL: `androidStmtFormat = { alg: COSEAlgorithmIdentifier, sig: bytes, x5c: [ credCert: bytes, * (caCert: bytes) ] }`
///
/// Verification procedure (§8.4, numbered in the order the specification lists it; errors carry the number):
/// 1. `attStmt` has the syntax above.
/// 2. `sig` is a valid `alg` signature over authenticatorData ‖ clientDataHash by the key of `x5c[0]`.
/// 3. The key of `x5c[0]` is the credential public key.
/// 4. `attestationChallenge` of the key description equals clientDataHash.
/// 5. (a) `allApplications` is in neither authorization list; (b) `origin` is KM_ORIGIN_GENERATED and (c)
///    `purpose` is exactly {KM_PURPOSE_SIGN}, in `teeEnforced` (or, when ``AndroidKeyPolicy/acceptSoftwareEnforced``,
///    in the union of both lists). Unless software-enforced lists are accepted, the attestation's security level
///    must be TrustedEnvironment or StrongBox: Android's software keystore also fills `teeEnforced`.
/// 6. The result is `basic` with trust path `x5c`. `x5c` may or may not end with the root: only the caller's
///    anchors (``TrustAnchors/bundled()`` ships Google's roots, RSA and the P-384 "Key Attestation CA1") end a
///    path, never a self-signed certificate inside `x5c`.
public struct AndroidKeyAttestationVerifier: AttestationStatementVerifier {
    public let format = "android-key"
    public var chainRules: AttestationChainRules

    public init(chainRules: AttestationChainRules = .rfc5280) {
        self.chainRules = chainRules
    }

    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        // Step 1: syntax.
        let syntax = step("8.4", "step 1: attStmt")
        let fields = try AttestationStatement.fields(statement, allowed: ["alg", "sig", "x5c"], step: syntax)
        let algorithm = try AttestationStatement.algorithm(fields["alg"], step: syntax)
        let signature = try AttestationStatement.signature(fields["sig"], step: syntax)
        let x5c = try AttestationCertificateChain.parse(fields["x5c"], format: format)
        let credCert = x5c[0]
        let credential = try AttestationStatement.credential(authenticatorData, step: syntax)

        // Step 2: the signature.
        try credCert.publicKey.verifyAttestationSignature(
            signature, over: authenticatorData.bytes + clientDataHash, algorithm: algorithm,
            allowSHA1: trust.allowSHA1Signatures, step: step("8.4", "step 2: sig"))

        // Step 3: credCert's key is the credential key.
        guard credCert.publicKey.isSameKey(as: credential.publicKey) else {
            throw WebAuthnError(
                .attestationPublicKeyMismatch, step: step("8.4", "step 3: credCert"),
                detail: "credCert's key is not the credential public key")
        }

        // Step 4: attestationChallenge.
        let description = try Self.keyDescription(in: credCert, step: step("8.4", "step 4: key description"))
        guard ConstantTime.equal(description.attestationChallenge, clientDataHash) else {
            throw WebAuthnError(.attestationNonceMismatch, step: step("8.4", "step 4: attestationChallenge"))
        }

        // Step 5: the authorization lists.
        try Self.checkAuthorizations(description, policy: trust.androidKey, format: format)

        // Step 6: Basic, trust path x5c.
        let chain = try await AttestationCertificateChain.validatedPath(
            x5c, trust: trust, now: now, rules: chainRules, format: format)
        return AttestationResult(
            format: format, type: .basic, trustPath: x5c, chainVerified: chain != nil, verifiedChain: chain ?? [])
    }

    /// The key description extension of `certificate`.
    static func keyDescription(in certificate: Certificate, step: String) throws(WebAuthnError) -> AndroidKeyDescription
    {
        guard let ext = certificate.extensions[oid: AndroidKeyDescription.oid] else {
            throw WebAuthnError(
                .androidKeyDescriptionInvalid, step: step, detail: "credCert has no key description extension")
        }
        do {
            return try AndroidKeyDescription(derEncoded: Array(ext.value))
        } catch {
            throw error.at(step)
        }
    }

    /// Step 5 of §8.4.
    static func checkAuthorizations(
        _ description: AndroidKeyDescription, policy: AndroidKeyPolicy, format: String = "android-key"
    ) throws(WebAuthnError) {
        let tee = description.teeEnforced
        let software = description.softwareEnforced
        guard !tee.allApplications, !software.allApplications else {
            throw WebAuthnError(
                .androidKeyAuthorizationInvalid, step: "§8.4 \(format): step 5a: allApplications",
                detail: "allApplications is present: the key is not scoped to this RP ID")
        }
        // A teeEnforced list means something only when secure hardware made the attestation: Android's software
        // keymaster fills teeEnforced too, with attestationSecurityLevel Software.
        if !policy.acceptSoftwareEnforced, description.attestationSecurityLevel == .software {
            throw WebAuthnError(
                .androidKeyAuthorizationInvalid, step: "§8.4 \(format): step 5: attestationSecurityLevel",
                detail: "the attestation was made by Android's software keystore, not a TEE or StrongBox")
        }
        let lists = policy.acceptSoftwareEnforced ? [tee, software] : [tee]
        let searched = policy.acceptSoftwareEnforced ? "teeEnforced or softwareEnforced" : "teeEnforced"

        let origins = lists.compactMap(\.origin)
        if origins.isEmpty {
            if policy.requireOriginAndPurpose {
                throw WebAuthnError(
                    .androidKeyAuthorizationInvalid, step: "§8.4 \(format): step 5b: origin",
                    detail: "origin is not in \(searched)")
            }
        } else if origins.contains(where: { $0 != AndroidKeyDescription.originGenerated }) {
            throw WebAuthnError(
                .androidKeyAuthorizationInvalid, step: "§8.4 \(format): step 5b: origin",
                detail: "origin is not KM_ORIGIN_GENERATED")
        }

        let purposes = lists.compactMap(\.purpose)
        if purposes.isEmpty {
            if policy.requireOriginAndPurpose {
                throw WebAuthnError(
                    .androidKeyAuthorizationInvalid, step: "§8.4 \(format): step 5c: purpose",
                    detail: "purpose is not in \(searched)")
            }
        } else if purposes.contains(where: { $0 != [AndroidKeyDescription.purposeSign] }) {
            throw WebAuthnError(
                .androidKeyAuthorizationInvalid, step: "§8.4 \(format): step 5c: purpose",
                detail: "purpose is not exactly KM_PURPOSE_SIGN")
        }
    }
}
