import Crypto
import Foundation
import Testing

@testable import WebAuthn

/// One negative test per §7.2 step. Each starts from the W3C none-ES256 vector's assertion, changes one thing and
/// re-signs with the vector's published credential key, so the failure is the check under test.
@Suite struct AuthenticationCeremonyTests {
    let f: Fixture
    let record: CredentialRecord
    init() async throws {
        f = try Fixture()
        record = try await f.record
    }

    var challengeText: String { Base64URL.encode(f.authenticationChallenge) }

    @Test func vectorAssertionVerifiesAsPublished() async throws {
        let published = try f.assertion(userHandle: nil, signature: b64(f.vector.authentication.signature))
        let result = try f.authenticate(published, f.authenticationExpectation(record: record))
        #expect(result.credentialId == f.credentialId)
        #expect(result.flags.contains(.userPresent))
    }

    @Test func resignedBaselineVerifies() async throws {
        let result = try f.authenticate(try f.assertion(), f.authenticationExpectation(record: record))
        #expect(result.userHandle == Fixture.userHandle)
        #expect(result.updating(record).signCount == 0)
    }

    @Test func step3IdMustEqualRawId() async throws {
        var r = try f.assertion()
        r.id = Base64URL.encode([9, 9, 9])
        expectError(.credentialIdMismatch, step: "7.2 step 3") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step3TypeMustBePublicKey() async throws {
        var r = try f.assertion()
        r.type = "otp"
        expectError(.invalidCredentialType, step: "7.2 step 3") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step5CredentialMustBeInAllowList() async throws {
        let r = try f.assertion()
        expectError(.credentialNotAllowed, step: "7.2 step 5") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record, allowCredentials: [[1, 2, 3]]))
        }
    }

    @Test func step6CredentialMustBeTheStoredOne() async throws {
        // A response for another credential ID, checked against this record (no allow list, user handle given).
        let r = try f.assertion(rawId: Array(repeating: 0x42, count: 32))
        expectError(.credentialIdMismatch, step: "7.2 step 6") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record, allowCredentials: []))
        }
    }

    @Test func step6UserHandleMustMatch() async throws {
        let r = try f.assertion(userHandle: Array("user-9999".utf8))
        expectError(.userHandleMismatch, step: "7.2 step 6") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
        expectError(.userHandleMismatch, step: "7.2 step 6") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record, allowCredentials: []))
        }
    }

    /// Discoverable sign-in (no allow list): without a user handle nothing binds the credential to the account
    /// (the java-webauthn-server YSA-2026-02 class of bug), so it must fail.
    @Test func step6UserHandleRequiredWithoutAllowList() async throws {
        let r = try f.assertion(userHandle: nil)
        expectError(.userHandleMissing, step: "7.2 step 6") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record, allowCredentials: []))
        }
        // An empty user handle counts as absent.
        let empty = try f.assertion(userHandle: [])
        expectError(.userHandleMissing, step: "7.2 step 6") {
            _ = try f.authenticate(empty, f.authenticationExpectation(record: record, allowCredentials: []))
        }
        // With an allow list the user was identified first, and a missing user handle is fine.
        #expect(try f.authenticate(r, f.authenticationExpectation(record: record)).userHandle == nil)
    }

    @Test func step7AuthenticatorDataMustParse() async throws {
        let r = try f.assertion(authData: Array(f.authenticationAuthData[0..<36]))
        expectError(.authenticatorDataTooShort, step: "7.2 step 7") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step10TypeMustBeGet() async throws {
        let r = try f.assertion(clientData: Fixture.clientData(type: "webauthn.create", challenge: challengeText))
        expectError(.clientDataTypeMismatch, step: "7.2 step 10") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step11ChallengeMustMatch() async throws {
        let r = try f.assertion(
            clientData: Fixture.clientData(type: "webauthn.get", challenge: Base64URL.encode(f.registrationChallenge)))
        expectError(.challengeMismatch, step: "7.2 step 11") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step12OriginMustBeAllowed() async throws {
        let r = try f.assertion(
            clientData: Fixture.clientData(
                type: "webauthn.get", challenge: challengeText, origin: "https://examp1e.org"))
        expectError(.originNotAllowed, step: "7.2 step 12") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step13CrossOriginRejectedByDefault() async throws {
        let r = try f.assertion(
            clientData: Fixture.clientData(type: "webauthn.get", challenge: challengeText, crossOrigin: true))
        expectError(.crossOriginNotAllowed, step: "7.2 step 13") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step14TopOriginMustBeListed() async throws {
        var config = f.rp.configuration
        config.crossOrigin = try .allow(topOrigins: ["https://portal.example"])
        let rp = RelyingParty(configuration: config)
        let bad = try f.assertion(
            clientData: Fixture.clientData(
                type: "webauthn.get", challenge: challengeText, crossOrigin: true, topOrigin: "https://evil.example"))
        expectError(.topOriginNotAllowed, step: "7.2 step 14") {
            _ = try f.authenticate(bad, f.authenticationExpectation(record: record), rp: rp)
        }
        let good = try f.assertion(
            clientData: Fixture.clientData(
                type: "webauthn.get", challenge: challengeText, crossOrigin: true, topOrigin: "https://portal.example"))
        _ = try f.authenticate(good, f.authenticationExpectation(record: record), rp: rp)
    }

    @Test func step15RpIdHashMustMatch() async throws {
        let r = try f.assertion(authData: Fixture.withRpIdHash(f.authenticationAuthData, "example.com"))
        expectError(.rpIdHashMismatch, step: "7.2 step 15") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step15AppIDScopesTheHashOnlyWhenUsed() async throws {
        let appid = "https://example.org/app-id.json"
        let scoped = try f.assertion(authData: Fixture.withRpIdHash(f.authenticationAuthData, appid), appidOutput: true)
        let result = try f.authenticate(scoped, f.authenticationExpectation(record: record, appid: appid))
        #expect(result.usedAppID)
        // The client said it did not use the AppID: the RP ID hash is required.
        let notUsed = try f.assertion(
            authData: Fixture.withRpIdHash(f.authenticationAuthData, appid), appidOutput: false)
        expectError(.rpIdHashMismatch, step: "7.2 step 15") {
            _ = try f.authenticate(notUsed, f.authenticationExpectation(record: record, appid: appid))
        }
        // The RP did not request the AppID: a client claiming it changes nothing.
        expectError(.rpIdHashMismatch, step: "7.2 step 15") {
            _ = try f.authenticate(scoped, f.authenticationExpectation(record: record))
        }
    }

    @Test func step16UserPresenceRequired() async throws {
        let r = try f.assertion(authData: Fixture.withFlags(f.authenticationAuthData) { $0 & ~0x01 })
        expectError(.userPresenceRequired, step: "7.2 step 16") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step17UserVerificationWhenRequired() async throws {
        let r = try f.assertion()
        expectError(.userVerificationRequired, step: "7.2 step 17") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record, userVerification: .required))
        }
        let verified = try f.assertion(authData: Fixture.withFlags(f.authenticationAuthData) { $0 | 0x04 })
        let result = try f.authenticate(
            verified, f.authenticationExpectation(record: record, userVerification: .required))
        #expect(result.updating(record).uvInitialized)
    }

    @Test func step18BackupStateWithoutEligibility() async throws {
        let r = try f.assertion(authData: Fixture.withFlags(f.authenticationAuthData) { $0 & ~0x08 })
        expectError(.backupStateInvalid, step: "7.2 step 18") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step19BackupEligibilityMustNotChange() async throws {
        let r = try f.assertion(authData: Fixture.withFlags(f.authenticationAuthData) { $0 & ~0x18 })
        expectError(.backupEligibilityChanged, step: "7.2 step 19") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
        // Backup state may change: BE stays, BS clears.
        let bsCleared = try f.assertion(authData: Fixture.withFlags(f.authenticationAuthData) { $0 & ~0x10 })
        let result = try f.authenticate(bsCleared, f.authenticationExpectation(record: record))
        #expect(!result.updating(record).backupState)
    }

    @Test func step21SignatureMustVerify() async throws {
        var sig = try f.assertion().response.signature.bytes
        sig[sig.count - 1] ^= 0x01
        let r = try f.assertion(signature: sig)
        expectError(.invalidSignature, step: "7.2 step 21") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
    }

    @Test func step21SignedBytesMustNotChange() async throws {
        // Sign, then change one byte of the signed authenticator data (the counter) without re-signing.
        var r = try f.assertion()
        r.response.authenticatorData = Base64URLBytes(Fixture.withCounter(f.authenticationAuthData, 1))
        expectError(.invalidSignature, step: "7.2 step 21") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: record))
        }
        // And one byte of clientDataJSON (inside extra whitespace, so it still parses and checks pass).
        var r2 = try f.assertion()
        r2.response.clientDataJSON = Base64URLBytes(r2.response.clientDataJSON.bytes + [0x20])
        expectError(.invalidSignature, step: "7.2 step 21") {
            _ = try f.authenticate(r2, f.authenticationExpectation(record: record))
        }
    }

    @Test func step21KeyFromAnotherCredentialFails() async throws {
        // The stored key of a different credential (the W3C long-credential-ID vector's).
        let v = try W3CVector.load("w3c-none-es256-long-credential-id.json")
        let otherKey = try await v.relyingParty().verifyRegistration(
            response: try v.registrationResponse(), expected: try v.registrationExpectation, now: vectorTime
        ).credential.publicKey
        var other = record
        other.publicKey = otherKey
        let r = try f.assertion()
        expectError(.invalidSignature, step: "7.2 step 21") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: other))
        }
    }

    @Test func preParsedKeyIsUsed() async throws {
        var e = f.authenticationExpectation(record: record)
        e.publicKey = try COSEKey(bytes: record.publicKey)
        _ = try f.authenticate(try f.assertion(), e)
        // A pre-parsed key takes the place of the stored bytes: another credential's key fails the signature.
        let v = try W3CVector.load("w3c-none-es256-long-credential-id.json")
        let other = try await v.relyingParty().verifyRegistration(
            response: try v.registrationResponse(), expected: try v.registrationExpectation, now: vectorTime)
        e.publicKey = try COSEKey(bytes: other.credential.publicKey)
        let r = try f.assertion()
        expectError(.invalidSignature, step: "7.2 step 21") { _ = try f.authenticate(r, e) }
    }

    @Test func step22CounterRegressionRejected() async throws {
        var stored = record
        stored.signCount = 10
        let r = try f.assertion(authData: Fixture.withCounter(f.authenticationAuthData, 10))
        expectError(.signCountRegression, step: "7.2 step 22") {
            _ = try f.authenticate(r, f.authenticationExpectation(record: stored))
        }
        let zero = try f.assertion()  // counter 0 after 10: also a regression
        expectError(.signCountRegression, step: "7.2 step 22") {
            _ = try f.authenticate(zero, f.authenticationExpectation(record: stored))
        }
        let higher = try f.assertion(authData: Fixture.withCounter(f.authenticationAuthData, 11))
        let result = try f.authenticate(higher, f.authenticationExpectation(record: stored))
        #expect(result.signCount == 11)
        #expect(!result.cloneWarning)
    }

    @Test func step22CloneWarningPolicy() async throws {
        var config = f.rp.configuration
        config.signCount = .reportCloneWarning
        let rp = RelyingParty(configuration: config)
        var stored = record
        stored.signCount = 10
        let r = try f.assertion(authData: Fixture.withCounter(f.authenticationAuthData, 3))
        let result = try f.authenticate(r, f.authenticationExpectation(record: stored), rp: rp)
        #expect(result.cloneWarning)
        #expect(result.reportedSignCount == 3)
        #expect(result.signCount == 10)  // never lowered
    }

    @Test func step22ZeroAndZeroIsFine() async throws {
        let result = try f.authenticate(try f.assertion(), f.authenticationExpectation(record: record))
        #expect(!result.cloneWarning)
        #expect(result.signCount == 0)
    }

    @Test func expiredChallenge() async throws {
        var e = f.authenticationExpectation(record: record)
        e.expires = vectorTime.addingTimeInterval(-60)
        let r = try f.assertion()
        expectError(.challengeExpired) { _ = try f.authenticate(r, e) }
    }
}
