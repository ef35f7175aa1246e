import CBOR
import Crypto
import Foundation
import Testing
import X509

@testable import WebAuthn

// The `android-safetynet` format (W3C WebAuthn §8.5, deprecated): real responses from 2019 to 2025 (both root
// generations) and responses signed here by a test CA, so each rule can be broken alone.

@Suite struct SafetyNetCorpusTests {
    static let cases: [CorpusCase] = (try? CorpusCase.all(formats: ["android-safetynet"])) ?? []

    static func run(_ testCase: CorpusCase, trust: AttestationTrust, clientDataHash: [UInt8]? = nil) async throws
        -> AttestationResult
    {
        let object = try AttestationObject(bytes: try Base64URL.decode(testCase.response.response.attestationObject))
        let hash: [UInt8]
        if let clientDataHash {
            hash = clientDataHash
        } else {
            hash = Array(SHA256.hash(data: try Base64URL.decode(testCase.response.response.clientDataJSON)))
        }
        return try await AttestationFormatRegistry.standard.verify(
            object, clientDataHash: hash, trust: trust, now: Date(timeIntervalSince1970: 0))
    }

    static func time(_ testCase: CorpusCase) throws -> Date {
        try #require(testCase.verificationTime.flatMap { ISO8601DateFormatter().date(from: $0) })
    }

    @Test(.enabled(if: RealCorpus.sharedDirectory != nil, RealCorpus.absentReason)) func corpusHasBothRootGenerations()
    {
        #expect(Self.cases.count == 11)
        #expect(Self.cases.filter(\.expected.ok).count == 8)
    }

    /// Deprecated: without a SafetyNet policy every response is refused, whatever else is right.
    @Test(arguments: cases)
    func refusedUnlessEnabled(_ testCase: CorpusCase) async throws {
        let trust = AttestationTrust(verificationTime: try Self.time(testCase))
        await #expect(throws: WebAuthnError(.safetyNetNotEnabled)) { _ = try await Self.run(testCase, trust: trust) }
    }

    /// Enabled, the real responses verify against the bundled GlobalSign roots at their own time (the
    /// verification time is the injected clock, never the system's).
    @Test(arguments: cases.filter(\.expected.ok))
    func verifiesAgainstTheBundledRoots(_ testCase: CorpusCase) async throws {
        let trust = AttestationTrust(
            formatAnchors: try TrustAnchors.bundled().formatAnchors, verificationTime: try Self.time(testCase),
            safetyNet: SafetyNetPolicy())
        let result = try await Self.run(testCase, trust: trust)
        #expect(result.type == .basic && result.chainVerified)
        #expect(try TrustAnchors.bundled()["android-safetynet"].contains(try #require(result.trustAnchor)))
    }

    /// timestampMs is checked against the injected clock: 61 s later the response is stale; 11 s before it was
    /// made, it comes from the future.
    @Test func freshnessFollowsTheInjectedClock() async throws {
        let testCase = try #require(Self.cases.first { $0.name == "py-webauthn-safetynet-reg" })
        let time = try Self.time(testCase)
        for (offset, ok) in [(0.0, true), (59, true), (61, false), (-11, false)] {
            let trust = AttestationTrust(
                verificationTime: time.addingTimeInterval(offset), safetyNet: SafetyNetPolicy())
            if ok {
                _ = try await Self.run(testCase, trust: trust)
            } else {
                await #expect(throws: WebAuthnError(.safetyNetTimestampInvalid), "offset \(offset)") {
                    _ = try await Self.run(testCase, trust: trust)
                }
            }
        }
        // A longer window accepts the day-old response of the stale corpus case.
        let stale = try #require(Self.cases.first { $0.name == "simplewebauthn-safetynet-stale-timestamp-reg" })
        let lenient = AttestationTrust(
            verificationTime: try Self.time(stale), safetyNet: SafetyNetPolicy(maximumAge: 2 * 86400))
        _ = try await Self.run(stale, trust: lenient)
    }

    @Test func ctsProfileMatchIsRequiredByDefault() async throws {
        let testCase = try #require(Self.cases.first { $0.name == "simplewebauthn-safetynet-cts-false-reg" })
        let time = try Self.time(testCase)
        await #expect(throws: WebAuthnError(.safetyNetCTSProfileMismatch)) {
            _ = try await Self.run(
                testCase, trust: AttestationTrust(verificationTime: time, safetyNet: SafetyNetPolicy()))
        }
        // basicIntegrity is true: a policy that asks only for it accepts.
        let basic = AttestationTrust(verificationTime: time, safetyNet: SafetyNetPolicy(requireCTSProfileMatch: false))
        #expect(try await Self.run(testCase, trust: basic).type == .basic)
    }

    @Test func nonceBindsTheResponseToThisRegistration() async throws {
        let testCase = try #require(Self.cases.first { $0.name == "py-webauthn-safetynet-reg" })
        let trust = AttestationTrust(verificationTime: try Self.time(testCase), safetyNet: SafetyNetPolicy())
        await #expect(throws: WebAuthnError(.attestationNonceMismatch)) {
            _ = try await Self.run(testCase, trust: trust, clientDataHash: Array(repeating: 1, count: 32))
        }
    }
}

@Suite struct SafetyNetAttestationTests {
    let registration = TestRegistration()
    let ca: TestCA
    let signingKey = P256.Signing.PrivateKey()

    init() throws { ca = try TestCA.root("Sesame Test SafetyNet Root") }

    func leaf(hostname: String = "attest.android.com") throws -> Certificate {
        try ca.issue(
            subject: try DistinguishedName { CommonName(hostname) }, key: signingKey.publicKey,
            extensions: [try Certificate.Extension(SubjectAlternativeNames([.dnsName(hostname)]), critical: false)])
    }

    func object(payload: [String: Any], leaf: Certificate? = nil, ver: CBOR = "12345") throws -> AttestationObject {
        let json = try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])
        let jws = try TestJWS.es256(
            signingKey, certificates: [try leaf ?? self.leaf(), ca.certificate], payload: Array(json))
        return try registration.object(
            format: "android-safetynet",
            statement: [CBORMapEntry("ver", ver), CBORMapEntry("response", .byteString(Array(jws.utf8)))])
    }

    var goodPayload: [String: Any] {
        [
            "nonce": Data(SHA256.hash(data: registration.signedData)).base64EncodedString(),
            "timestampMs": Int64(TestTime.now.timeIntervalSince1970 * 1000) - 2000,
            "ctsProfileMatch": true, "basicIntegrity": true, "apkPackageName": "com.google.android.gms",
        ]
    }

    var trust: AttestationTrust {
        AttestationTrust(trustAnchors: [ca.certificate], verificationTime: TestTime.now, safetyNet: SafetyNetPolicy())
    }

    @Test func validResponseIsBasic() async throws {
        let result = try await registration.verify(try object(payload: goodPayload), trust: trust)
        #expect(result.format == "android-safetynet" && result.type == .basic && result.chainVerified)
        #expect(result.trustPath.count == 2)
    }

    @Test func leafMustBeAttestAndroidCom() async throws {
        let object = try object(payload: goodPayload, leaf: try leaf(hostname: "attest.android.com.evil.example"))
        let error = await #expect(throws: WebAuthnError.self) { try await registration.verify(object, trust: trust) }
        #expect(
            error?.code == .attestationCertificateInvalid
                && error?.step == "§8.5 android-safetynet: step 4: attestation certificate")
    }

    @Test func nonceMustMatch() async throws {
        var payload = goodPayload
        payload["nonce"] = Data(SHA256.hash(data: registration.signedData + [0])).base64EncodedString()
        let object = try object(payload: payload)
        #expect(await failure { try await registration.verify(object, trust: trust) } == .attestationNonceMismatch)
        // The base64url spelling of the right nonce is not the base64 SafetyNet uses.
        payload["nonce"] = Base64URL.encode(Array(SHA256.hash(data: registration.signedData)))
        let url = try self.object(payload: payload)
        #expect(await failure { try await registration.verify(url, trust: trust) } == .attestationNonceMismatch)
    }

    @Test func payloadMustHaveNonceAndTimestamp() async throws {
        var payload = goodPayload
        payload["timestampMs"] = nil
        let object = try object(payload: payload)
        #expect(await failure { try await registration.verify(object, trust: trust) } == .safetyNetResponseInvalid)
    }

    @Test func chainMustReachTheAnchor() async throws {
        let other = try TestCA.root("Other Root")
        let object = try object(payload: goodPayload)
        let wrongAnchor = AttestationTrust(
            trustAnchors: [other.certificate], verificationTime: TestTime.now, safetyNet: SafetyNetPolicy())
        #expect(await failure { try await registration.verify(object, trust: wrongAnchor) } == .attestationUntrusted)
    }

    @Test func syntaxRules() async throws {
        let noVersion = try object(payload: goodPayload, ver: "")
        #expect(
            await failure { try await registration.verify(noVersion, trust: trust) } == .invalidAttestationStatement)
        let notJWS = try registration.object(
            format: "android-safetynet",
            statement: [CBORMapEntry("ver", "1"), CBORMapEntry("response", .byteString(Array("a.b".utf8)))])
        #expect(await failure { try await registration.verify(notJWS, trust: trust) } == .invalidJWS)
    }
}
