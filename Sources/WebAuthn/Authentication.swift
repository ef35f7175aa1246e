import Crypto
import Foundation
import SesameBytes

/// What the relying party expects of one authentication response.
public struct AuthenticationExpectation: Sendable {
    /// The challenge sent in the request options.
    public var challenge: [UInt8]
    /// The stored credential the response claims to use (looked up by the response's `rawId`).
    public var credential: CredentialRecord
    /// The user handle of the account that owns ``credential``. A user handle in the response must equal it.
    public var userHandle: [UInt8]
    /// The credential IDs sent in `allowCredentials`. When empty (discoverable-credential sign-in) the response
    /// must carry a user handle, which is what binds the assertion to an account.
    public var allowCredentials: [[UInt8]]
    /// `userVerification` from the request options: `required` makes the UV flag mandatory.
    public var userVerification: UserVerificationRequirement
    /// The FIDO AppID (`extensions.appid`) sent in the options, if any. When the client reports `appid: true`,
    /// the authenticator data is scoped to SHA-256 of this AppID instead of the RP ID (§10.1.1).
    public var appid: String?
    /// Origins for this ceremony only; nil uses the configuration's.
    public var origins: AllowedOrigins?
    /// When the challenge stops being valid (e.g. issue time + options timeout); nil = no limit here.
    public var expires: Date?
    /// ``credential``'s public key already parsed, for servers that cache parsed keys by credential ID; nil parses
    /// `credential.publicKey`. It must be the key parsed from that record.
    public var publicKey: COSEKey?

    public init(
        challenge: [UInt8], credential: CredentialRecord, userHandle: [UInt8], allowCredentials: [[UInt8]] = [],
        userVerification: UserVerificationRequirement = .preferred, appid: String? = nil,
        origins: AllowedOrigins? = nil, expires: Date? = nil, publicKey: COSEKey? = nil
    ) {
        self.challenge = challenge
        self.expires = expires
        self.publicKey = publicKey
        self.credential = credential
        self.userHandle = userHandle
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
        self.appid = appid
        self.origins = origins
    }

    /// The expectation matching options built by ``RelyingParty/makeRequestOptions(allowCredentials:userVerification:hints:extensions:)``.
    public init(
        options: PublicKeyCredentialRequestOptionsJSON, credential: CredentialRecord, userHandle: [UInt8]
    ) {
        self.init(
            challenge: options.challenge.bytes, credential: credential, userHandle: userHandle,
            allowCredentials: (options.allowCredentials ?? []).map(\.id.bytes),
            userVerification: options.userVerification ?? .preferred, appid: options.extensions?.appid)
    }
}

/// The outcome of a successful authentication.
public struct AuthenticationResult: Sendable {
    public let credentialId: [UInt8]
    /// The counter to store: the authenticator's new value, or the stored one if that was higher (a clone
    /// warning never lowers the stored counter).
    public let signCount: UInt32
    /// The counter the authenticator reported.
    public let reportedSignCount: UInt32
    /// The counter did not increase although the authenticator has one (only with
    /// ``SignCountPolicy/reportCloneWarning``; with ``SignCountPolicy/reject`` this is an error).
    public let cloneWarning: Bool
    public let flags: AuthenticatorFlags
    /// The user handle the response carried, if any (already checked against the expectation).
    public let userHandle: [UInt8]?
    /// Whether the assertion was scoped to the FIDO AppID rather than the RP ID.
    public let usedAppID: Bool
    public let authenticatorData: AuthenticatorData
    public let clientData: CollectedClientData
    public let authenticatorAttachment: AuthenticatorAttachment?
    /// Client extension outputs (unsigned): PRF results and largeBlob read/write outcome.
    public let clientExtensionResults: AuthenticationExtensionsClientOutputsJSON

    public var userVerified: Bool { flags.contains(.userVerified) }
    public var backupEligible: Bool { flags.contains(.backupEligible) }
    public var backupState: Bool { flags.contains(.backedUp) }

    /// The credential record updated as §7.2 step 24 says: new counter, backup state, and UV initialised once
    /// the user was verified.
    public func updating(_ record: CredentialRecord) -> CredentialRecord {
        var updated = record
        updated.signCount = signCount
        updated.backupState = backupState
        if userVerified { updated.uvInitialized = true }
        return updated
    }
}

extension RelyingParty {
    /// Verifies an authentication response following W3C WebAuthn Level 3 §7.2, step by step. Errors name the
    /// failed step (`WebAuthnError.step`, e.g. `"7.2 step 21: signature"`).
    public func verifyAuthentication(
        response: AuthenticationResponseJSON, expected: AuthenticationExpectation, now: Date
    ) throws(WebAuthnError) -> AuthenticationResult {
        let record = expected.credential
        let rawId = response.rawId.bytes

        // Steps 1–3: options sent, get() ran; check the credential envelope.
        guard response.type == PublicKeyCredentialType.publicKey else {
            throw WebAuthnError(.invalidCredentialType, step: "7.2 step 3: credential type")
        }
        guard (try? Base64URL.decode(response.id)) == rawId else {
            throw WebAuthnError(.credentialIdMismatch, step: "7.2 step 3: id and rawId")
        }
        guard !expected.challenge.isEmpty else {
            throw WebAuthnError(.invalidOptions, step: "7.2 step 1: options", detail: "empty expected challenge")
        }
        if let expires = expected.expires, now > expires {
            throw WebAuthnError(.challengeExpired, step: "7.2 step 11: challenge")
        }

        // Step 5: with an allow list, the credential must be in it.
        if !expected.allowCredentials.isEmpty, !expected.allowCredentials.contains(rawId) {
            throw WebAuthnError(.credentialNotAllowed, step: "7.2 step 5: allowCredentials")
        }

        // Step 6: the credential belongs to the user being authenticated.
        guard rawId == record.id else {
            throw WebAuthnError(
                .credentialIdMismatch, step: "7.2 step 6: credential owner",
                detail: "rawId is not the stored credential's ID")
        }
        // An empty user handle is what some clients send for server-side credentials: treat it as absent.
        if let handle = response.response.userHandle?.bytes, !handle.isEmpty {
            guard ConstantTime.equal(handle, expected.userHandle) else {
                throw WebAuthnError(.userHandleMismatch, step: "7.2 step 6: credential owner")
            }
        } else if expected.allowCredentials.isEmpty {
            // The user was not identified before the ceremony: only the user handle binds the credential to an
            // account, so it must be present.
            throw WebAuthnError(.userHandleMissing, step: "7.2 step 6: credential owner")
        }

        // Step 7: authenticator data.
        let authData: AuthenticatorData
        do {
            authData = try AuthenticatorData(
                bytes: response.response.authenticatorData.bytes,
                options: COSEKeyOptions(allowRS1: configuration.allowRS1))
        } catch { throw error.at("7.2 step 7: authenticator data") }

        // Steps 8–9: client data.
        let clientData: CollectedClientData
        do { clientData = try CollectedClientData(bytes: response.response.clientDataJSON.bytes) } catch {
            throw error.at("7.2 step 9: client data")
        }

        // Steps 10–14: type, challenge, origin, crossOrigin, topOrigin.
        try clientData.verify(
            type: .get, challenge: expected.challenge, origins: expected.origins ?? configuration.origins,
            crossOrigin: configuration.crossOrigin,
            steps: ClientDataSteps(
                type: "7.2 step 10: type", challenge: "7.2 step 11: challenge", origin: "7.2 step 12: origin",
                crossOrigin: "7.2 step 13: crossOrigin", topOrigin: "7.2 step 14: topOrigin"))

        // Step 15: rpIdHash, or SHA-256(AppID) when the appid extension was requested and used.
        let usedAppID = expected.appid != nil && response.clientExtensionResults.appid == true
        let expectedRpIdHash = Self.sha256(usedAppID ? (expected.appid ?? "") : configuration.id)
        guard authData.rpIdHash == expectedRpIdHash else {
            throw WebAuthnError(.rpIdHashMismatch, step: "7.2 step 15: rpIdHash")
        }

        // Step 16: user present.
        let flags = authData.flags
        guard flags.contains(.userPresent) else {
            throw WebAuthnError(.userPresenceRequired, step: "7.2 step 16: UP")
        }

        // Step 17: user verified, if required.
        if expected.userVerification == .required, !flags.contains(.userVerified) {
            throw WebAuthnError(.userVerificationRequired, step: "7.2 step 17: UV")
        }

        // Step 18: BS only with BE.
        if flags.contains(.backedUp), !flags.contains(.backupEligible) {
            throw WebAuthnError(.backupStateInvalid, step: "7.2 step 18: BE/BS")
        }

        // Step 19: backup eligibility is fixed at registration.
        guard flags.contains(.backupEligible) == record.backupEligible else {
            throw WebAuthnError(.backupEligibilityChanged, step: "7.2 step 19: BE")
        }

        // Steps 20–21: signature over authenticatorData ‖ SHA-256(clientDataJSON) with the stored key.
        let key: COSEKey
        if let parsed = expected.publicKey {
            key = parsed
        } else {
            do {
                key = try COSEKey(bytes: record.publicKey, options: COSEKeyOptions(allowRS1: configuration.allowRS1))
            } catch {
                throw error.at("7.2 step 21: stored public key")
            }
        }
        if key.algorithm == .rs1, !configuration.allowRS1 {
            throw WebAuthnError(
                .unsupportedAlgorithm, step: "7.2 step 21: stored public key", detail: "RS1 is not enabled")
        }
        do {
            try key.verify(signature: response.response.signature.bytes, over: authData.bytes + clientData.hash)
        } catch {
            throw WebAuthnError(.invalidSignature, step: "7.2 step 21: signature")
        }

        // Step 22: signature counter.
        var cloneWarning = false
        if authData.signCount != 0 || record.signCount != 0, authData.signCount <= record.signCount {
            switch configuration.signCount {
            case .reject:
                throw WebAuthnError(.signCountRegression, step: "7.2 step 22: signCount")
            case .reportCloneWarning:
                cloneWarning = true
            }
        }

        // Steps 23–24: extension outputs and the updated record are the caller's (see `updating(_:)`).
        return AuthenticationResult(
            credentialId: rawId,
            signCount: max(authData.signCount, record.signCount),
            reportedSignCount: authData.signCount,
            cloneWarning: cloneWarning,
            flags: flags,
            userHandle: response.response.userHandle.flatMap { $0.bytes.isEmpty ? nil : $0.bytes },
            usedAppID: usedAppID,
            authenticatorData: authData,
            clientData: clientData,
            authenticatorAttachment: response.authenticatorAttachment,
            clientExtensionResults: response.clientExtensionResults)
    }
}
