import Crypto
import Foundation

/// What the relying party expects of one registration response: the values from the creation options it sent.
public struct RegistrationExpectation: Sendable {
    /// The challenge sent in the options.
    public var challenge: [UInt8]
    /// `authenticatorSelection.userVerification` from the options: `required` makes the UV flag mandatory.
    public var userVerification: UserVerificationRequirement
    /// The `mediation` passed to `navigator.credentials.create()`. Only `conditional` (automatic passkey
    /// upgrade) lets a registration without user presence through.
    public var mediation: CredentialMediationRequirement?
    /// The algorithms offered in `pubKeyCredParams`; the new credential's must be one of them.
    public var allowedAlgorithms: [COSEAlgorithm]
    /// Origins for this ceremony only; nil uses the configuration's.
    public var origins: AllowedOrigins?
    /// When the challenge stops being valid (e.g. issue time + options timeout); nil = no limit here.
    public var expires: Date?

    public init(
        challenge: [UInt8], userVerification: UserVerificationRequirement = .preferred,
        mediation: CredentialMediationRequirement? = nil, allowedAlgorithms: [COSEAlgorithm],
        origins: AllowedOrigins? = nil, expires: Date? = nil
    ) {
        self.challenge = challenge
        self.expires = expires
        self.userVerification = userVerification
        self.mediation = mediation
        self.allowedAlgorithms = allowedAlgorithms
        self.origins = origins
    }

    /// The expectation matching options built by ``RelyingParty/makeCreationOptions(user:excludeCredentials:residentKey:authenticatorAttachment:hints:extensions:)``.
    public init(options: PublicKeyCredentialCreationOptionsJSON, mediation: CredentialMediationRequirement? = nil) {
        self.init(
            challenge: options.challenge.bytes,
            userVerification: options.authenticatorSelection?.userVerification ?? .preferred,
            mediation: mediation,
            allowedAlgorithms: options.pubKeyCredParams.filter { $0.type == PublicKeyCredentialType.publicKey }.map(
                \.alg))
    }
}

/// A credential as the relying party stores it (§4 "credential record"), and what authentication needs back.
public struct CredentialRecord: Sendable, Hashable {
    /// The credential ID (at most 1023 bytes).
    public var id: [UInt8]
    /// The credential public key as a COSE_Key, exactly as the authenticator sent it.
    public var publicKey: [UInt8]
    /// The signature counter last seen.
    public var signCount: UInt32
    /// Transports reported by the client at registration (hints for `allowCredentials`).
    public var transports: [AuthenticatorTransport]
    /// Backup eligibility (BE) at registration; it may never change afterwards.
    public var backupEligible: Bool
    /// Backup state (BS) last seen.
    public var backupState: Bool
    /// Whether user verification has been performed with this credential at least once.
    public var uvInitialized: Bool
    /// The authenticator model's AAGUID (all zero for most `none` attestations).
    public var aaguid: AAGUID?
    /// The attestation statement format and the attestation type it proved.
    public var attestationFormat: String
    public var attestationType: AttestationType

    public init(
        id: [UInt8], publicKey: [UInt8], signCount: UInt32, transports: [AuthenticatorTransport] = [],
        backupEligible: Bool, backupState: Bool, uvInitialized: Bool, aaguid: AAGUID? = nil,
        attestationFormat: String = "none", attestationType: AttestationType = .none
    ) {
        self.id = id
        self.publicKey = publicKey
        self.signCount = signCount
        self.transports = transports
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.uvInitialized = uvInitialized
        self.aaguid = aaguid
        self.attestationFormat = attestationFormat
        self.attestationType = attestationType
    }
}

/// The outcome of a successful registration.
public struct RegistrationResult: Sendable {
    /// Store this (after checking that no account already has a credential with this ID, §7.1 step 26).
    public let credential: CredentialRecord
    /// The parsed credential public key.
    public let publicKey: COSEKey
    /// The authenticator data from the attestation object.
    public let authenticatorData: AuthenticatorData
    /// The verified attestation: format, type, certificate path and whether it chains to a trust anchor.
    public let attestation: AttestationResult
    /// The FIDO metadata entry of the authenticator model (by AAGUID, or by attestation certificate key identifier
    /// for U2F authenticators), when the configuration has metadata and the model is in it. Unless the attestation
    /// chained to an anchor, the AAGUID it was found by is only the client's word.
    public let metadata: MetadataEntry?
    /// The parsed client data.
    public let clientData: CollectedClientData
    /// `credProps.rk` as reported by the client: whether the credential is discoverable (nil = unknown).
    public let discoverable: Bool?
    /// `prf.enabled` as reported by the client.
    public let prfEnabled: Bool?
    /// `largeBlob.supported` as reported by the client.
    public let largeBlobSupported: Bool?
    public let authenticatorAttachment: AuthenticatorAttachment?

    public var flags: AuthenticatorFlags { authenticatorData.flags }
    public var userVerified: Bool { flags.contains(.userVerified) }
}

extension RelyingParty {
    /// Verifies a registration response following W3C WebAuthn Level 3 §7.1, step by step. Errors name the
    /// failed step (`WebAuthnError.step`, e.g. `"7.1 step 14: rpIdHash"`).
    ///
    /// - Parameter now: the time at which certificates are checked, unless the configuration's
    ///   ``AttestationTrust/verificationTime`` pins another.
    ///
    /// Step 26 (the credential ID is not registered yet) needs the caller's store: check it before saving
    /// ``RegistrationResult/credential``.
    public func verifyRegistration(
        response: RegistrationResponseJSON, expected: RegistrationExpectation, now: Date
    ) async throws(WebAuthnError) -> RegistrationResult {
        let keyOptions = COSEKeyOptions(allowRS1: configuration.allowRS1)

        // Steps 1–4: the options were sent, create() ran; `response` is the credential's response.
        guard response.type == PublicKeyCredentialType.publicKey else {
            throw WebAuthnError(.invalidCredentialType, step: "7.1 step 3: credential type")
        }
        guard (try? Base64URL.decode(response.id)) == response.rawId.bytes else {
            throw WebAuthnError(.credentialIdMismatch, step: "7.1 step 3: id and rawId")
        }
        guard !expected.challenge.isEmpty else {
            throw WebAuthnError(.invalidOptions, step: "7.1 step 1: options", detail: "empty expected challenge")
        }
        if let expires = expected.expires, now > expires {
            throw WebAuthnError(.challengeExpired, step: "7.1 step 8: challenge")
        }

        // Steps 5–6: decode and parse clientDataJSON.
        let clientData: CollectedClientData
        do { clientData = try CollectedClientData(bytes: response.response.clientDataJSON.bytes) } catch {
            throw error.at("7.1 step 6: client data")
        }

        // Steps 7–11: type, challenge, origin, crossOrigin, topOrigin.
        try clientData.verify(
            type: .create, challenge: expected.challenge, origins: expected.origins ?? configuration.origins,
            crossOrigin: configuration.crossOrigin,
            steps: ClientDataSteps(
                type: "7.1 step 7: type", challenge: "7.1 step 8: challenge", origin: "7.1 step 9: origin",
                crossOrigin: "7.1 step 10: crossOrigin", topOrigin: "7.1 step 11: topOrigin"))

        // Step 12: hash = SHA-256(clientDataJSON) (computed while parsing).
        let clientDataHash = clientData.hash

        // Step 13: decode the attestation object: fmt, attStmt, authData.
        let object: AttestationObject
        do {
            object = try AttestationObject(bytes: response.response.attestationObject.bytes, options: keyOptions)
        } catch {
            throw error.at("7.1 step 13: attestation object")
        }
        let authData = object.authenticatorData
        guard let attested = authData.attestedCredentialData else {
            throw WebAuthnError(.attestedCredentialDataMissing, step: "7.1 step 13: attestation object")
        }
        if let copy = response.response.authenticatorData, copy.bytes != authData.bytes {
            throw WebAuthnError(
                .inconsistentResponse, step: "7.1 step 13: attestation object",
                detail: "response.authenticatorData differs from the attestation object's authData")
        }
        guard attested.credentialId == response.rawId.bytes else {
            throw WebAuthnError(
                .credentialIdMismatch, step: "7.1 step 13: attestation object",
                detail: "rawId differs from the credential ID in authenticator data")
        }

        // Step 14: rpIdHash.
        guard authData.rpIdHash == Self.sha256(configuration.id) else {
            throw WebAuthnError(.rpIdHashMismatch, step: "7.1 step 14: rpIdHash")
        }

        // Step 15: user present, unless this was a conditional create.
        if expected.mediation != .conditional, !authData.flags.contains(.userPresent) {
            throw WebAuthnError(.userPresenceRequired, step: "7.1 step 15: UP")
        }

        // Step 16: user verified, if required.
        if expected.userVerification == .required, !authData.flags.contains(.userVerified) {
            throw WebAuthnError(.userVerificationRequired, step: "7.1 step 16: UV")
        }

        // Step 17: BS may only be set when BE is. (Steps 18–19, using BE/BS for policy, are the caller's.)
        if authData.flags.contains(.backedUp), !authData.flags.contains(.backupEligible) {
            throw WebAuthnError(.backupStateInvalid, step: "7.1 step 17: BE/BS")
        }

        // Step 20: the credential's algorithm is one the options offered.
        let publicKey = attested.publicKey
        guard expected.allowedAlgorithms.contains(publicKey.algorithm) else {
            throw WebAuthnError(
                .algorithmNotAllowed, step: "7.1 step 20: alg", detail: "algorithm \(publicKey.algorithm) not offered")
        }
        if let copy = response.response.publicKeyAlgorithm, copy != publicKey.algorithm {
            throw WebAuthnError(
                .inconsistentResponse, step: "7.1 step 20: alg",
                detail: "publicKeyAlgorithm differs from the credential public key")
        }

        // Steps 21–22: find the format's verification procedure and run it.
        var trust = configuration.registrationPolicy.attestationTrust(from: configuration.attestationTrust)
        if trust.verificationTime == nil { trust.verificationTime = now }
        if configuration.allowRS1 { trust.allowSHA1Signatures = true }
        let attestation: AttestationResult
        do {
            attestation = try await configuration.attestationRegistry.verify(
                object, clientDataHash: clientDataHash, trust: trust, now: trust.verificationTime ?? now)
        } catch {
            throw error.at(
                error.code == .unsupportedAttestationFormat
                    ? "7.1 step 21: attestation format" : "7.1 step 22: attestation statement")
        }

        // Steps 23–24: trust anchors were applied by the verifier; the attestation type must be acceptable.
        if let accepted = configuration.acceptedAttestationTypes, !accepted.contains(attestation.type) {
            throw WebAuthnError(
                .attestationTypeNotAllowed, step: "7.1 step 24: attestation trust",
                detail: "attestation type \(attestation.type.rawValue) not accepted")
        }

        // Step 24 (continued): the relying party's registration policy, with the model's metadata.
        let leaf = attestation.trustPath.first
        let metadata = trust.metadata?.entry(aaguid: attested.aaguid, attestationCertificate: leaf)
        let metadataRoots =
            trust.metadata?.attestationRoots(aaguid: attested.aaguid, attestationCertificate: leaf) ?? []
        do {
            try configuration.registrationPolicy.evaluate(
                attestation: attestation, authenticatorData: authData, metadata: metadata, metadataRoots: metadataRoots)
        } catch {
            throw error.at("7.1 step 24: \(error.step)")
        }

        // Step 25: credential ID length.
        guard attested.credentialId.count <= 1023 else {
            throw WebAuthnError(.credentialIdTooLong, step: "7.1 step 25: credentialId")
        }

        // Step 27: the credential record. Step 28: client extension outputs (unsigned, informational).
        let flags = authData.flags
        let outputs = response.clientExtensionResults
        let record = CredentialRecord(
            id: attested.credentialId,
            publicKey: attested.publicKeyBytes,
            signCount: authData.signCount,
            transports: response.response.transports ?? [],
            backupEligible: flags.contains(.backupEligible),
            backupState: flags.contains(.backedUp),
            uvInitialized: flags.contains(.userVerified),
            aaguid: attested.aaguid,
            attestationFormat: attestation.format,
            attestationType: attestation.type
        )
        return RegistrationResult(
            credential: record, publicKey: publicKey, authenticatorData: authData, attestation: attestation,
            metadata: metadata, clientData: clientData, discoverable: outputs.credProps?.rk,
            prfEnabled: outputs.prf?.enabled,
            largeBlobSupported: outputs.largeBlob?.supported, authenticatorAttachment: response.authenticatorAttachment)
    }

    static func sha256(_ text: String) -> [UInt8] { Array(SHA256.hash(data: Array(text.utf8))) }
}
