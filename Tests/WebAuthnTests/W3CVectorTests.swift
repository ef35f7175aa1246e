import CBOR
import Crypto
import Foundation
import Testing
import X509

@testable import WebAuthn

/// W3C WebAuthn Level 3 §16 "Test Vectors", every case. Source: w3c/webauthn `index.bs` (commit 146d0db0),
/// section "Test Vectors"; each `Vectors/w3c-*.json` names its anchor in `source`. Values were converted from the
/// CDDL hex literals to unpadded base64url; nothing else was changed.
struct W3CVector: Decodable, Sendable, CustomStringConvertible {
    struct Registration: Decodable, Sendable {
        let challenge: String
        let credential_id: String
        let credential_private_key: String?
        let aaguid: String
        let clientDataJSON: String
        let attestationObject: String
    }
    struct Authentication: Decodable, Sendable {
        let challenge: String
        let clientDataJSON: String
        let authenticatorData: String
        let signature: String
    }
    let source: String
    let title: String
    let rpId: String
    let origin: String
    let topOrigin: String
    let attestationRootCertificate: String
    let registration: Registration
    let authentication: Authentication
    var file = ""
    var description: String { file }

    enum CodingKeys: String, CodingKey {
        case source, title, rpId, origin, topOrigin, attestationRootCertificate, registration, authentication
    }

    static func load(_ file: String) throws -> W3CVector {
        var v = try JSONDecoder().decode(W3CVector.self, from: Vectors.data(file))
        v.file = file
        return v
    }

    static let files = Vectors.names(in: "", prefix: "w3c-")

    /// What this library does with each vector today.
    enum Outcome: Equatable { case ok, error(WebAuthnError.Code) }
    var expectedRegistration: Outcome {
        if file.contains("ed448") { return .error(.unsupportedAlgorithm) }  // Ed448 is documented as unsupported
        return .ok
    }

    func registrationResponse() throws -> RegistrationResponseJSON {
        let id = try b64(registration.credential_id)
        return RegistrationResponseJSON(
            id: Base64URL.encode(id), rawId: id,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: try b64(registration.clientDataJSON),
                attestationObject: try b64(registration.attestationObject)))
    }

    func authenticationResponse() throws -> AuthenticationResponseJSON {
        let id = try b64(registration.credential_id)
        return AuthenticationResponseJSON(
            id: Base64URL.encode(id), rawId: id,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: try b64(authentication.clientDataJSON),
                authenticatorData: try b64(authentication.authenticatorData),
                signature: try b64(authentication.signature)))
    }

    /// A relying party for example.org that accepts the vectors' cross-origin cases (top origin example.com)
    /// and trusts the vectors' attestation root.
    func relyingParty(crossOrigin: Bool = true) throws -> RelyingParty {
        var config = try RelyingPartyConfiguration(id: rpId, name: "W3C test vectors", origins: [origin])
        if crossOrigin { config.crossOrigin = try .allow(topOrigins: [topOrigin]) }
        let root = try Certificate(derEncoded: b64(attestationRootCertificate))
        // The TPM vector's AIK certificate names the manufacturer "id:00000000", which is not in the TCG vendor
        // registry that Sesame accepts by default: the vectors' relying party adds it, as one would for a test TPM.
        // The android-key vector comes from a software keystore (attestationSecurityLevel Software) whose
        // authorization lists are both empty: it needs the software-enforced lists and lists without origin and
        // purpose, which Sesame refuses by default.
        config.attestationTrust = AttestationTrust(
            trustAnchors: [root], tpmManufacturers: TPMVendors.all.union(["id:00000000"]),
            androidKey: AndroidKeyPolicy(acceptSoftwareEnforced: true, requireOriginAndPurpose: false))
        return RelyingParty(configuration: config)
    }

    var registrationExpectation: RegistrationExpectation {
        get throws {
            RegistrationExpectation(challenge: try b64(registration.challenge), allowedAlgorithms: allAlgorithms)
        }
    }
}

let allAlgorithms: [COSEAlgorithm] = [
    .edDSA, .ed25519, .es256, .es384, .es512, .rs256, .rs384, .rs512, .ps256, .ps384, .ps512, .mldsa65, .mldsa87,
]

/// The vectors were generated on this date or later; certificates are valid 2024–3024.
let vectorTime = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

@Suite struct W3CVectorTests {
    @Test func everyVectorIsPresent() {
        // §16 has 15 credential examples after the root certificate.
        #expect(W3CVector.files.count == 15)
    }

    @Test(arguments: W3CVector.files)
    func registrationThenAuthentication(file: String) async throws {
        let v = try W3CVector.load(file)
        #expect(v.source.contains("w3c/webauthn"))
        let rp = try v.relyingParty()
        let response = try v.registrationResponse()
        let expectation = try v.registrationExpectation
        switch v.expectedRegistration {
        case .error(let code):
            await expectError(code, step: "7.1 step") {
                _ = try await rp.verifyRegistration(response: response, expected: expectation, now: vectorTime)
            }
        case .ok:
            let result = try await rp.verifyRegistration(response: response, expected: expectation, now: vectorTime)
            #expect(result.credential.id == (try b64(v.registration.credential_id)))
            #expect(result.credential.signCount == 0)
            if result.attestation.format != "fido-u2f" {
                #expect(result.credential.aaguid?.bytes == (try b64(v.registration.aaguid)))
            }
            let expectedFormat =
                file.contains("none-")
                ? "none"
                : file.contains("apple")
                    ? "apple"
                    : file.contains("fido-u2f")
                        ? "fido-u2f"
                        : file.contains("tpm") ? "tpm" : file.contains("android-key") ? "android-key" : "packed"
            #expect(result.attestation.format == expectedFormat)
            let expectedType: AttestationType =
                switch expectedFormat {
                case "none": .none
                case "apple": .anonCA
                case "fido-u2f": .basic
                case "tpm": .attCA
                default: file.contains("packed-self") ? .self : .basic
                }
            #expect(result.attestation.type == expectedType)
            if [.basic, .anonCA, .attCA].contains(expectedType) {
                #expect(result.attestation.chainVerified)
            }

            // Authentication with the credential just registered.
            let authExpectation = AuthenticationExpectation(
                challenge: try b64(v.authentication.challenge), credential: result.credential,
                userHandle: [1, 2, 3], allowCredentials: [result.credential.id])
            let auth = try rp.verifyAuthentication(
                response: try v.authenticationResponse(), expected: authExpectation, now: vectorTime)
            #expect(auth.credentialId == result.credential.id)
            #expect(auth.signCount == 0)
            #expect(!auth.cloneWarning)
            #expect(auth.backupEligible == result.credential.backupEligible)
        }
    }

    /// Ed448 (-53) is not supported: the key itself is refused with the documented error.
    @Test func ed448KeyIsUnsupported() async throws {
        let v = try W3CVector.load("w3c-packed-ed448.json")
        let object = try CBORDecoder(options: .lenientMapOrder).decode(b64(v.registration.attestationObject))
        let authData = try #require(object[text: "authData"]?.bytes)
        // Attested credential data starts at 37: AAGUID (16), length (2), ID, then the COSE key.
        let idLength = Int(authData[53]) << 8 | Int(authData[54])
        let keyBytes = Array(authData[(55 + idLength)...])
        expectError(.unsupportedAlgorithm) { _ = try COSEKey(bytes: keyBytes) }
    }

    /// With the default policy, the crossOrigin and topOrigin vectors are refused.
    @Test(arguments: ["w3c-none-es256-crossOrigin.json", "w3c-none-es256-topOrigin.json"])
    func crossOriginRejectedByDefault(file: String) async throws {
        let v = try W3CVector.load(file)
        let rp = try v.relyingParty(crossOrigin: false)
        let response = try v.registrationResponse()
        let expectation = try v.registrationExpectation
        await expectError(.crossOriginNotAllowed, step: "7.1 step 10") {
            _ = try await rp.verifyRegistration(response: response, expected: expectation, now: vectorTime)
        }
    }

    /// A cross-origin policy that lists another top origin refuses the topOrigin vector.
    @Test func topOriginMustBeListed() async throws {
        let v = try W3CVector.load("w3c-none-es256-topOrigin.json")
        var config = try RelyingPartyConfiguration(id: v.rpId, name: "x", origins: [v.origin])
        config.crossOrigin = try .allow(topOrigins: ["https://other.example"])
        let rp = RelyingParty(configuration: config)
        let response = try v.registrationResponse()
        let expectation = try v.registrationExpectation
        await expectError(.topOriginNotAllowed, step: "7.1 step 11") {
            _ = try await rp.verifyRegistration(response: response, expected: expectation, now: vectorTime)
        }
    }
}
