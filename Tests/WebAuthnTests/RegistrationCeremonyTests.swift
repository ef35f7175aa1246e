import CBOR
import Crypto
import Foundation
import Testing

@testable import WebAuthn

/// One negative test per §7.1 step (and the positive baseline they start from). Each test changes one thing in
/// the W3C none-ES256 vector's registration.
@Suite struct RegistrationCeremonyTests {
    let f: Fixture
    init() throws { f = try Fixture() }

    var challengeText: String { Base64URL.encode(f.registrationChallenge) }

    @Test func baselineVerifies() async throws {
        let result = try await f.register(try f.registration())
        #expect(result.credential.id == f.credentialId)
        #expect(result.attestation.type == .none)
        #expect(result.credential.backupEligible)
        #expect(result.credential.backupState)
        #expect(result.publicKey.algorithm == .es256)
    }

    @Test func step3TypeMustBePublicKey() async throws {
        var r = try f.registration()
        r.type = "password"
        await expectError(.invalidCredentialType, step: "7.1 step 3") { _ = try await f.register(r) }
    }

    @Test func step3IdMustEqualRawId() async throws {
        let r = try f.registration(id: Base64URL.encode([1, 2, 3]))
        await expectError(.credentialIdMismatch, step: "7.1 step 3") { _ = try await f.register(r) }
    }

    @Test func step6ClientDataMustBeJSON() async throws {
        let r = try f.registration(clientData: Array("not json".utf8))
        await expectError(.invalidJSON, step: "7.1 step 6") { _ = try await f.register(r) }
    }

    @Test func step7TypeMustBeCreate() async throws {
        let r = try f.registration(clientData: Fixture.clientData(type: "webauthn.get", challenge: challengeText))
        await expectError(.clientDataTypeMismatch, step: "7.1 step 7") { _ = try await f.register(r) }
    }

    @Test func step8ChallengeMustMatch() async throws {
        var other = f.registrationChallenge
        other[0] ^= 1
        let r = try f.registration(
            clientData: Fixture.clientData(type: "webauthn.create", challenge: Base64URL.encode(other)))
        await expectError(.challengeMismatch, step: "7.1 step 8") { _ = try await f.register(r) }
    }

    @Test func step8PaddedChallengeDoesNotMatch() async throws {
        // 32 bytes encode to 43 characters; the padded form has one "=".
        let r = try f.registration(
            clientData: Fixture.clientData(type: "webauthn.create", challenge: challengeText + "="))
        await expectError(.challengeMismatch, step: "7.1 step 8") { _ = try await f.register(r) }
    }

    @Test func step8ExpiredChallenge() async throws {
        var e = f.registrationExpectation()
        e.expires = vectorTime.addingTimeInterval(-1)
        let r = try f.registration()
        await expectError(.challengeExpired) { _ = try await f.register(r, e) }
    }

    @Test(arguments: [
        "https://evil.example", "http://example.org", "https://example.org:8443", "https://sub.example.org",
        "https://example.org/", "https://example.org.evil.example", "android:apk-key-hash:AAAA",
    ])
    func step9OriginMustBeAllowed(origin: String) async throws {
        let r = try f.registration(
            clientData: Fixture.clientData(type: "webauthn.create", challenge: challengeText, origin: origin))
        await expectError(.originNotAllowed, step: "7.1 step 9") { _ = try await f.register(r) }
    }

    @Test func step9DefaultPortIsTheSameOrigin() async throws {
        let r = try f.registration(
            clientData: Fixture.clientData(
                type: "webauthn.create", challenge: challengeText, origin: "https://example.org:443"))
        _ = try await f.register(r)
    }

    @Test func step10CrossOriginRejectedByDefault() async throws {
        let r = try f.registration(
            clientData: Fixture.clientData(type: "webauthn.create", challenge: challengeText, crossOrigin: true))
        await expectError(.crossOriginNotAllowed, step: "7.1 step 10") { _ = try await f.register(r) }
    }

    @Test func step11TopOriginRejectedByDefault() async throws {
        let r = try f.registration(
            clientData: Fixture.clientData(
                type: "webauthn.create", challenge: challengeText, crossOrigin: true, topOrigin: "https://example.com"))
        await expectError(.crossOriginNotAllowed, step: "7.1 step 10") { _ = try await f.register(r) }
        let r2 = try f.registration(
            clientData: Fixture.clientData(
                type: "webauthn.create", challenge: challengeText, crossOrigin: false, topOrigin: "https://example.com")
        )
        await expectError(.crossOriginNotAllowed, step: "7.1 step 11") { _ = try await f.register(r2) }
    }

    @Test func step13AttestationObjectMustDecode() async throws {
        var r = try f.registration()
        r.response.attestationObject = Base64URLBytes([0xa3, 0x63, 0x66])
        await expectError(.invalidCBOR, step: "7.1 step 13") { _ = try await f.register(r) }
    }

    @Test func step13RawIdMustBeTheAuthenticatorDataCredentialId() async throws {
        let r = try f.registration(rawId: Array(repeating: 7, count: 32))
        await expectError(.credentialIdMismatch, step: "7.1 step 13") { _ = try await f.register(r) }
    }

    @Test func step13AttestedCredentialDataRequired() async throws {
        // Authenticator data without the AT flag or attested credential data.
        let r = try f.registration(authData: Fixture.withFlags(Array(f.registrationAuthData[0..<37])) { $0 & ~0x40 })
        await expectError(.attestedCredentialDataMissing, step: "7.1 step 13") { _ = try await f.register(r) }
    }

    @Test func step13AuthenticatorDataCopyMustAgree() async throws {
        var r = try f.registration()
        r.response.authenticatorData = Base64URLBytes(Fixture.withCounter(f.registrationAuthData, 9))
        await expectError(.inconsistentResponse, step: "7.1 step 13") { _ = try await f.register(r) }
    }

    @Test func step14RpIdHashMustMatch() async throws {
        let r = try f.registration(authData: Fixture.withRpIdHash(f.registrationAuthData, "evil.example"))
        await expectError(.rpIdHashMismatch, step: "7.1 step 14") { _ = try await f.register(r) }
    }

    @Test func step15UserPresenceRequired() async throws {
        let r = try f.registration(authData: Fixture.withFlags(f.registrationAuthData) { $0 & ~0x01 })
        await expectError(.userPresenceRequired, step: "7.1 step 15") { _ = try await f.register(r) }
        // A conditional create may skip user presence...
        let result = try await f.register(r, f.registrationExpectation(mediation: .conditional))
        #expect(!result.flags.contains(.userPresent))
        // ...but no other mediation may.
        await expectError(.userPresenceRequired) {
            _ = try await f.register(r, f.registrationExpectation(mediation: .optional))
        }
    }

    @Test func step16UserVerificationWhenRequired() async throws {
        let r = try f.registration()  // the vector's UV flag is clear
        await expectError(.userVerificationRequired, step: "7.1 step 16") {
            _ = try await f.register(r, f.registrationExpectation(userVerification: .required))
        }
        let verified = try f.registration(authData: Fixture.withFlags(f.registrationAuthData) { $0 | 0x04 })
        #expect(try await f.register(verified, f.registrationExpectation(userVerification: .required)).userVerified)
    }

    @Test func step17BackupStateWithoutEligibility() async throws {
        let r = try f.registration(authData: Fixture.withFlags(f.registrationAuthData) { $0 & ~0x08 })
        await expectError(.backupStateInvalid, step: "7.1 step 17") { _ = try await f.register(r) }
    }

    @Test func step20AlgorithmMustBeOffered() async throws {
        let r = try f.registration()
        await expectError(.algorithmNotAllowed, step: "7.1 step 20") {
            _ = try await f.register(r, f.registrationExpectation(algorithms: [.edDSA, .rs256]))
        }
    }

    @Test func step20PublicKeyAlgorithmCopyMustAgree() async throws {
        var r = try f.registration()
        r.response.publicKeyAlgorithm = .rs256
        await expectError(.inconsistentResponse, step: "7.1 step 20") { _ = try await f.register(r) }
    }

    @Test func step21UnknownFormatRefused() async throws {
        let r = try f.registration(fmt: "made-up")
        await expectError(.unsupportedAttestationFormat, step: "7.1 step 21") { _ = try await f.register(r) }
    }

    @Test func step24AttestationTypePolicy() async throws {
        var config = f.rp.configuration
        config.acceptedAttestationTypes = [.basic, .attCA]
        let rp = RelyingParty(configuration: config)
        let r = try f.registration()
        let e = f.registrationExpectation()
        await expectError(.attestationTypeNotAllowed, step: "7.1 step 24") {
            _ = try await rp.verifyRegistration(response: r, expected: e, now: vectorTime)
        }
    }

    @Test func step25CredentialIdLength() async throws {
        // The W3C long-credential-ID vector has exactly 1023 bytes and is accepted.
        let v = try W3CVector.load("w3c-none-es256-long-credential-id.json")
        let result = try await v.relyingParty().verifyRegistration(
            response: try v.registrationResponse(), expected: try v.registrationExpectation, now: vectorTime)
        #expect(result.credential.id.count == 1023)
    }

    @Test func step25CredentialIdOver1023BytesRefused() async throws {
        // The vector's authenticator data with a 1024-byte credential ID in place of its 32-byte one.
        let ad = f.registrationAuthData
        let longId = [UInt8](repeating: 0x5a, count: 1024)
        let tampered = Array(ad[0..<53]) + [0x04, 0x00] + longId + Array(ad[(55 + 32)...])
        let r = try f.registration(authData: tampered, rawId: longId)
        await expectError(.credentialIdTooLong) { _ = try await f.register(r) }
    }

    @Test func extensionOutputsAreReported() async throws {
        var r = try f.registration()
        r.clientExtensionResults = AuthenticationExtensionsClientOutputsJSON(
            credProps: .init(rk: true), prf: .init(enabled: true), largeBlob: .init(supported: false))
        r.response.transports = [.internal, .hybrid, "future-transport"]
        let result = try await f.register(r)
        #expect(result.discoverable == true)
        #expect(result.prfEnabled == true)
        #expect(result.largeBlobSupported == false)
        #expect(
            result.credential.transports == [.internal, .hybrid, AuthenticatorTransport(rawValue: "future-transport")])
    }
}
