/// Why a WebAuthn response, option or key was refused.
///
/// One error type for the whole library. `code` is opaque and extensible (compare with `==`, which looks at the
/// code only, or switch over the static members); `step` names the ceremony step that failed, using the step
/// numbers of W3C WebAuthn Level 3 §7.1 (registration) and §7.2 (authentication) where one applies. The
/// description never contains challenges, signatures, keys or other response bytes.
public struct WebAuthnError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable machine-readable name, e.g. `rpIdHashMismatch`.
        public let name: String
        private init(_ name: String) { self.name = name }

        public var description: String { name }

        // Encoding of the response itself.
        public static let invalidBase64URL = Code("invalidBase64URL")
        public static let invalidJSON = Code("invalidJSON")
        public static let invalidCBOR = Code("invalidCBOR")
        public static let credentialIdMismatch = Code("credentialIdMismatch")
        public static let invalidCredentialType = Code("invalidCredentialType")

        // Authenticator data.
        public static let authenticatorDataTooShort = Code("authenticatorDataTooShort")
        public static let authenticatorDataLengthMismatch = Code("authenticatorDataLengthMismatch")
        public static let credentialIdTooLong = Code("credentialIdTooLong")
        public static let attestedCredentialDataMissing = Code("attestedCredentialDataMissing")
        public static let unexpectedAttestedCredentialData = Code("unexpectedAttestedCredentialData")
        public static let extensionDataMissing = Code("extensionDataMissing")

        // COSE keys.
        public static let invalidCOSEKey = Code("invalidCOSEKey")
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm")
        public static let algorithmNotAllowed = Code("algorithmNotAllowed")
        public static let invalidSignature = Code("invalidSignature")

        // Client data.
        public static let clientDataTypeMismatch = Code("clientDataTypeMismatch")
        public static let challengeMismatch = Code("challengeMismatch")
        public static let originNotAllowed = Code("originNotAllowed")
        public static let crossOriginNotAllowed = Code("crossOriginNotAllowed")
        public static let topOriginNotAllowed = Code("topOriginNotAllowed")

        // Authenticator data checks.
        public static let rpIdHashMismatch = Code("rpIdHashMismatch")
        public static let userPresenceRequired = Code("userPresenceRequired")
        public static let userVerificationRequired = Code("userVerificationRequired")
        public static let backupStateInvalid = Code("backupStateInvalid")
        public static let backupEligibilityChanged = Code("backupEligibilityChanged")
        public static let signCountRegression = Code("signCountRegression")

        // Credential binding (authentication).
        public static let credentialNotAllowed = Code("credentialNotAllowed")
        public static let userHandleMismatch = Code("userHandleMismatch")
        public static let userHandleMissing = Code("userHandleMissing")

        // Attestation.
        public static let unsupportedAttestationFormat = Code("unsupportedAttestationFormat")
        public static let invalidAttestationStatement = Code("invalidAttestationStatement")
        public static let attestationSignatureInvalid = Code("attestationSignatureInvalid")
        public static let attestationCertificateInvalid = Code("attestationCertificateInvalid")
        public static let attestationAAGUIDMismatch = Code("attestationAAGUIDMismatch")
        public static let attestationNonceMismatch = Code("attestationNonceMismatch")
        public static let attestationPublicKeyMismatch = Code("attestationPublicKeyMismatch")
        public static let attestationUntrusted = Code("attestationUntrusted")
        public static let attestationTypeNotAllowed = Code("attestationTypeNotAllowed")
        public static let attestationAlgorithmMismatch = Code("attestationAlgorithmMismatch")
        /// An attestation signature uses SHA-1 (RS1) and the policy does not allow it
        /// (``AttestationTrust/allowSHA1Signatures``).
        public static let sha1SignatureNotAllowed = Code("sha1SignatureNotAllowed")
        /// A TPM structure (`certInfo`, `pubArea`) is malformed: truncated, oversized or with bytes left over.
        public static let tpmStructureInvalid = Code("tpmStructureInvalid")
        /// `certInfo.magic` is not `TPM_GENERATED_VALUE`: the TPM did not make the structure itself.
        public static let tpmMagicInvalid = Code("tpmMagicInvalid")
        /// `certInfo.attested.name` is not the Name of `pubArea`.
        public static let tpmNameMismatch = Code("tpmNameMismatch")
        /// The Android key description extension is missing or not the documented ASN.1.
        public static let androidKeyDescriptionInvalid = Code("androidKeyDescriptionInvalid")
        /// The Android key description's authorization lists break a W3C WebAuthn §8.4 rule (allApplications,
        /// origin, purpose).
        public static let androidKeyAuthorizationInvalid = Code("androidKeyAuthorizationInvalid")
        /// `android-safetynet` is deprecated and the policy does not enable it (``AttestationTrust/safetyNet``).
        public static let safetyNetNotEnabled = Code("safetyNetNotEnabled")
        /// The SafetyNet response is not a valid JWS attestation result.
        public static let safetyNetResponseInvalid = Code("safetyNetResponseInvalid")
        /// The SafetyNet response says the device does not match a compatible (CTS) profile.
        public static let safetyNetCTSProfileMismatch = Code("safetyNetCTSProfileMismatch")
        /// The SafetyNet response's `timestampMs` is outside the accepted window around the verification time.
        public static let safetyNetTimestampInvalid = Code("safetyNetTimestampInvalid")
        /// A compact JWS (SafetyNet response, metadata BLOB) that is not well formed or uses a refused algorithm.
        public static let invalidJWS = Code("invalidJWS")

        // FIDO Metadata Service (MDS3) BLOBs.
        /// The BLOB's JWS signature does not verify with the key of its first `x5c` certificate.
        public static let metadataSignatureInvalid = Code("metadataSignatureInvalid")
        /// The BLOB's `x5c` does not chain to the metadata trust anchor.
        public static let metadataChainInvalid = Code("metadataChainInvalid")
        /// A certificate of the BLOB's chain is outside its validity period at the verification time.
        public static let metadataCertificateExpired = Code("metadataCertificateExpired")
        /// A certificate of the BLOB's chain is listed in a CRL given with it.
        public static let metadataCertificateRevoked = Code("metadataCertificateRevoked")
        /// The verification time is after the BLOB's `nextUpdate` day.
        public static let metadataStale = Code("metadataStale")
        /// The BLOB's serial number (`no`) is not greater than that of the BLOB already held: a rollback.
        public static let metadataNotNewer = Code("metadataNotNewer")
        /// The BLOB payload, a statement or a CRL is not the documented format.
        public static let metadataInvalid = Code("metadataInvalid")

        // Registration policy (``RegistrationPolicy``); each code names the rule that refused.
        /// The attestation statement format (or a `compound` sub-statement's) is not one the policy admits.
        public static let policyFormatNotAllowed = Code("policyFormatNotAllowed")
        /// The authenticator's metadata carries a status report the policy refuses (REVOKED, …).
        public static let metadataStatusRefused = Code("metadataStatusRefused")
        /// The policy requires an attestation that chains to a trust anchor.
        public static let policyAttestationRequired = Code("policyAttestationRequired")
        /// The AAGUID is not on the policy's allow-list (or is not attested, which an allow-list needs).
        public static let policyAAGUIDNotAllowed = Code("policyAAGUIDNotAllowed")
        /// The AAGUID is on the policy's deny-list.
        public static let policyAAGUIDDenied = Code("policyAAGUIDDenied")
        /// The authenticator's metadata does not show the certification level the policy requires.
        public static let policyCertificationLevel = Code("policyCertificationLevel")
        /// The credential is backup eligible (a synced passkey) and the policy refuses those.
        public static let policyBackupEligible = Code("policyBackupEligible")

        // Options and configuration.
        public static let invalidConfiguration = Code("invalidConfiguration")
        public static let invalidOptions = Code("invalidOptions")
        /// A convenience copy in the response JSON (e.g. `response.authenticatorData`, `publicKeyAlgorithm`)
        /// disagrees with the signed data it copies.
        public static let inconsistentResponse = Code("inconsistentResponse")
        /// The expectation's challenge lifetime has passed.
        public static let challengeExpired = Code("challengeExpired")
        /// A provider list (AAGUID to name and icons) that is not the expected JSON document.
        public static let invalidProviderList = Code("invalidProviderList")

        /// A code defined outside this file (for formats and policies added by extensions).
        public static func custom(_ name: String) -> Code { Code(name) }
    }

    public let code: Code
    /// The ceremony step that failed, e.g. `"7.1 step 13: rpIdHash"`; empty when not in a ceremony.
    public let step: String
    /// Extra context that is safe to show (never secret or response bytes).
    public let detail: String
    public let file: String
    public let line: Int

    public init(_ code: Code, step: String = "", detail: String = "", file: String = #fileID, line: Int = #line) {
        self.code = code
        self.step = step
        self.detail = detail
        self.file = file
        self.line = line
    }

    public static func == (lhs: WebAuthnError, rhs: WebAuthnError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        var s = "WebAuthnError.\(code.name)"
        if !step.isEmpty { s += " (\(step))" }
        if !detail.isEmpty { s += ": \(detail)" }
        return s
    }
}
