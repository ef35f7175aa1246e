import CBOR
import Crypto
import Foundation

@testable import WebAuthn

/// Builds responses from the W3C "ES256 Credential with No Attestation" vector (§16), whose credential private
/// key the vector publishes, so negative tests can change one thing and re-sign: the failure they see is then
/// the check under test, not the signature.
struct Fixture {
    let vector: W3CVector
    let privateKey: P256.Signing.PrivateKey
    let rp: RelyingParty
    let credentialId: [UInt8]
    let registrationChallenge: [UInt8]
    let authenticationChallenge: [UInt8]
    /// The vector's authenticator data (registration) and its parts.
    let registrationAuthData: [UInt8]
    let authenticationAuthData: [UInt8]

    init() throws {
        vector = try W3CVector.load("w3c-none-es256.json")
        privateKey = try P256.Signing.PrivateKey(
            rawRepresentation: b64(vector.registration.credential_private_key ?? ""))
        rp = RelyingParty(
            configuration: try RelyingPartyConfiguration(
                id: "example.org", name: "Example", origins: ["https://example.org"]))
        credentialId = try b64(vector.registration.credential_id)
        registrationChallenge = try b64(vector.registration.challenge)
        authenticationChallenge = try b64(vector.authentication.challenge)
        let object = try CBORDecoder(options: .lenientMapOrder).decode(b64(vector.registration.attestationObject))
        registrationAuthData = object[text: "authData"]?.bytes ?? []
        authenticationAuthData = try b64(vector.authentication.authenticatorData)
    }

    // MARK: client data

    static func clientData(
        type: String, challenge: String, origin: String = "https://example.org", crossOrigin: Bool? = false,
        topOrigin: String? = nil
    ) -> [UInt8] {
        var json = "{\"type\":\"\(type)\",\"challenge\":\"\(challenge)\",\"origin\":\"\(origin)\""
        if let crossOrigin { json += ",\"crossOrigin\":\(crossOrigin)" }
        if let topOrigin { json += ",\"topOrigin\":\"\(topOrigin)\"" }
        return Array((json + "}").utf8)
    }

    // MARK: registration

    func attestationObject(authData: [UInt8], fmt: String = "none", attStmt: CBOR = .map([])) -> [UInt8] {
        CBOREncoder.encode(
            .map([
                CBORMapEntry("fmt", .textString(fmt)), CBORMapEntry("attStmt", attStmt),
                CBORMapEntry("authData", .byteString(authData)),
            ]))
    }

    /// A registration response; by default exactly the vector's.
    func registration(
        clientData: [UInt8]? = nil, authData: [UInt8]? = nil, rawId: [UInt8]? = nil, id: String? = nil,
        fmt: String = "none"
    ) throws -> RegistrationResponseJSON {
        let raw = rawId ?? credentialId
        return RegistrationResponseJSON(
            id: id ?? Base64URL.encode(raw), rawId: raw,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: try clientData ?? b64(vector.registration.clientDataJSON),
                attestationObject: attestationObject(authData: authData ?? registrationAuthData, fmt: fmt)))
    }

    func registrationExpectation(
        userVerification: UserVerificationRequirement = .preferred, mediation: CredentialMediationRequirement? = nil,
        algorithms: [COSEAlgorithm] = [.es256]
    ) -> RegistrationExpectation {
        RegistrationExpectation(
            challenge: registrationChallenge, userVerification: userVerification, mediation: mediation,
            allowedAlgorithms: algorithms)
    }

    func register(_ response: RegistrationResponseJSON, _ expectation: RegistrationExpectation? = nil)
        async throws(WebAuthnError)
        -> RegistrationResult
    {
        try await rp.verifyRegistration(
            response: response, expected: expectation ?? registrationExpectation(), now: vectorTime)
    }

    // MARK: authentication

    var record: CredentialRecord {
        get async throws {
            try await register(registration()).credential
        }
    }

    static let userHandle: [UInt8] = Array("user-1234".utf8)

    /// An assertion signed with the vector's key over `authData` and `clientData` (the vector's by default).
    func assertion(
        clientData: [UInt8]? = nil, authData: [UInt8]? = nil, userHandle: [UInt8]? = Fixture.userHandle,
        rawId: [UInt8]? = nil, signature: [UInt8]? = nil, appidOutput: Bool? = nil
    ) throws -> AuthenticationResponseJSON {
        let cd = try clientData ?? b64(vector.authentication.clientDataJSON)
        let ad = authData ?? authenticationAuthData
        let sig = try signature ?? Array(privateKey.signature(for: ad + Array(SHA256.hash(data: cd))).derRepresentation)
        let raw = rawId ?? credentialId
        return AuthenticationResponseJSON(
            id: Base64URL.encode(raw), rawId: raw,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: cd, authenticatorData: ad, signature: sig, userHandle: userHandle),
            clientExtensionResults: AuthenticationExtensionsClientOutputsJSON(appid: appidOutput))
    }

    func authenticationExpectation(
        record: CredentialRecord, allowCredentials: [[UInt8]]? = nil, userHandle: [UInt8] = Fixture.userHandle,
        userVerification: UserVerificationRequirement = .preferred, appid: String? = nil
    ) -> AuthenticationExpectation {
        AuthenticationExpectation(
            challenge: authenticationChallenge, credential: record, userHandle: userHandle,
            allowCredentials: allowCredentials ?? [credentialId], userVerification: userVerification, appid: appid)
    }

    func authenticate(
        _ response: AuthenticationResponseJSON, _ expectation: AuthenticationExpectation, rp: RelyingParty? = nil
    ) throws(WebAuthnError) -> AuthenticationResult {
        try (rp ?? self.rp).verifyAuthentication(response: response, expected: expectation, now: vectorTime)
    }

    /// Authenticator data with its flags byte replaced and/or its counter set.
    static func withFlags(_ authData: [UInt8], _ transform: (UInt8) -> UInt8) -> [UInt8] {
        var d = authData
        d[32] = transform(d[32])
        return d
    }

    static func withCounter(_ authData: [UInt8], _ counter: UInt32) -> [UInt8] {
        var d = authData
        d[33] = UInt8(counter >> 24)
        d[34] = UInt8(counter >> 16 & 0xff)
        d[35] = UInt8(counter >> 8 & 0xff)
        d[36] = UInt8(counter & 0xff)
        return d
    }

    static func withRpIdHash(_ authData: [UInt8], _ rpId: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(rpId.utf8))) + authData[32...]
    }
}
