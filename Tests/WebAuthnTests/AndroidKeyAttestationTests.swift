import CBOR
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import WebAuthn

// The `android-key` format (W3C WebAuthn §8.4): real captures (a Galaxy S9 and Pixels, chains to Google's RSA and
// P-384 roots) and statements built here with a test CA so each rule can be broken alone.

// MARK: - DER for key descriptions

/// Minimal DER writer for building key descriptions in tests.
enum TestDER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var value = count
        while value > 0 {
            bytes.insert(UInt8(value & 0xFF), at: 0)
            value >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
    static func tlv(_ tag: [UInt8], _ content: [UInt8]) -> [UInt8] { tag + length(content.count) + content }
    static func sequence(_ items: [[UInt8]]) -> [UInt8] { tlv([0x30], items.flatMap { $0 }) }
    static func set(_ items: [[UInt8]]) -> [UInt8] { tlv([0x31], items.flatMap { $0 }) }
    static func integer(_ value: Int) -> [UInt8] {
        precondition(value >= 0 && value < 0x8000)
        return value < 0x80 ? tlv([0x02], [UInt8(value)]) : tlv([0x02], [UInt8(value >> 8), UInt8(value & 0xFF)])
    }
    static func enumerated(_ value: Int) -> [UInt8] { tlv([0x0A], [UInt8(value)]) }
    static func octets(_ bytes: [UInt8]) -> [UInt8] { tlv([0x04], bytes) }
    static let null: [UInt8] = [0x05, 0x00]
    /// `[n] EXPLICIT` (context-specific, constructed), with the high-tag-number form for n ≥ 31.
    static func explicit(_ number: UInt, _ content: [UInt8]) -> [UInt8] {
        if number < 31 { return tlv([0xA0 | UInt8(number)], content) }
        var digits: [UInt8] = []
        var value = number
        repeat {
            digits.insert(UInt8(value & 0x7F), at: 0)
            value >>= 7
        } while value > 0
        for index in digits.indices.dropLast() { digits[index] |= 0x80 }
        return tlv([0xBF] + digits, content)
    }
}

/// One AuthorizationList for a test key description.
struct TestAuthorizations {
    var purpose: [Int]? = [2]
    var origin: Int? = 0
    var allApplications = false

    var der: [UInt8] {
        var members: [[UInt8]] = []
        if let purpose { members.append(TestDER.explicit(1, TestDER.set(purpose.map(TestDER.integer)))) }
        members.append(TestDER.explicit(2, TestDER.integer(3)))  // algorithm EC
        if allApplications { members.append(TestDER.explicit(600, TestDER.null)) }
        if let origin { members.append(TestDER.explicit(702, TestDER.integer(origin))) }
        return TestDER.sequence(members)
    }
}

struct AndroidKeyStatementBuilder {
    var registration = TestRegistration()
    let ca: TestCA
    var challenge: [UInt8]? = nil
    var securityLevel = 1
    var software = TestAuthorizations(purpose: nil, origin: nil)
    var tee = TestAuthorizations()
    var includeExtension = true
    var rawExtension: [UInt8]? = nil
    /// The key credCert certifies; nil: the credential key.
    var certifiedKey: P256.Signing.PublicKey? = nil

    init(ca: TestCA) { self.ca = ca }

    var keyDescription: [UInt8] {
        TestDER.sequence([
            TestDER.integer(300), TestDER.enumerated(securityLevel), TestDER.integer(300),
            TestDER.enumerated(securityLevel),
            TestDER.octets(challenge ?? registration.clientDataHash), TestDER.octets([]), software.der, tee.der,
        ])
    }

    func object() throws -> AttestationObject {
        var extensions = [try TestExtension.notCA()]
        if includeExtension {
            extensions.append(
                Certificate.Extension(
                    oid: AndroidKeyDescription.oid, critical: false, value: ArraySlice(rawExtension ?? keyDescription)))
        }
        let credCert = try ca.issue(
            subject: try DistinguishedName { CommonName("Android Keystore Key") },
            key: certifiedKey ?? registration.credentialKey.publicKey, extensions: extensions)
        // The credential key signs (android-key statements are made with the credential private key).
        let signature = Array(try registration.credentialKey.signature(for: registration.signedData).derRepresentation)
        return try registration.object(
            format: "android-key",
            statement: [
                CBORMapEntry("alg", -7), CBORMapEntry("sig", .byteString(signature)),
                CBORMapEntry("x5c", .array([.byteString(try der(credCert)), .byteString(try der(ca.certificate))])),
            ])
    }

    func failure(_ trust: AttestationTrust = AttestationTrust()) async -> WebAuthnError? {
        do {
            _ = try await registration.verify(try object(), trust: trust)
            return nil
        } catch let error as WebAuthnError {
            return error
        } catch {
            return WebAuthnError(.custom("fixture"))
        }
    }
}

// MARK: - Rules

@Suite struct AndroidKeyAttestationTests {
    let ca: TestCA
    init() throws { ca = try TestCA.root("Sesame Test Android Root") }

    @Test func validStatementIsBasic() async throws {
        let builder = AndroidKeyStatementBuilder(ca: ca)
        let result = try await builder.registration.verify(try builder.object(), anchors: [ca.certificate])
        #expect(result.format == "android-key" && result.type == .basic && result.chainVerified)
        #expect(result.trustAnchor == ca.certificate)
    }

    @Test func allApplicationsIsRefused() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.tee.allApplications = true
        let error = await builder.failure()
        #expect(
            error?.code == .androidKeyAuthorizationInvalid
                && error?.step == "§8.4 android-key: step 5a: allApplications")
        // In softwareEnforced too, whatever the policy.
        builder = AndroidKeyStatementBuilder(ca: ca)
        builder.software.allApplications = true
        #expect((await builder.failure())?.step == "§8.4 android-key: step 5a: allApplications")
        #expect(
            (await builder.failure(AttestationTrust(androidKey: .init(acceptSoftwareEnforced: true))))?.code
                == .androidKeyAuthorizationInvalid)
    }

    @Test func attestationChallengeMustBeTheClientDataHash() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.challenge = Array(repeating: 9, count: 32)
        let error = await builder.failure()
        #expect(
            error?.code == .attestationNonceMismatch && error?.step == "§8.4 android-key: step 4: attestationChallenge")
    }

    @Test func originMustBeGenerated() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.tee.origin = 2  // KM_ORIGIN_IMPORTED
        let error = await builder.failure()
        #expect(error?.code == .androidKeyAuthorizationInvalid && error?.step == "§8.4 android-key: step 5b: origin")
    }

    @Test func purposeMustBeSignOnly() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.tee.purpose = [0, 2]  // ENCRYPT and SIGN
        #expect((await builder.failure())?.step == "§8.4 android-key: step 5c: purpose")
        builder.tee.purpose = [3]  // VERIFY
        #expect((await builder.failure())?.step == "§8.4 android-key: step 5c: purpose")
    }

    /// Origin and purpose only in softwareEnforced: refused by default (TEE only), accepted when the policy takes
    /// the union of both lists.
    @Test func softwareEnforcedNeedsThePolicy() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.tee = TestAuthorizations(purpose: nil, origin: nil)
        builder.software = TestAuthorizations()
        #expect((await builder.failure())?.step == "§8.4 android-key: step 5b: origin")
        builder.securityLevel = 0
        #expect((await builder.failure())?.step == "§8.4 android-key: step 5: attestationSecurityLevel")
        #expect(await builder.failure(AttestationTrust(androidKey: .init(acceptSoftwareEnforced: true))) == nil)
    }

    @Test func originAndPurposeAreRequiredUnlessThePolicySaysOtherwise() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.tee = TestAuthorizations(purpose: nil, origin: nil)
        #expect((await builder.failure())?.code == .androidKeyAuthorizationInvalid)
        #expect(await builder.failure(AttestationTrust(androidKey: .init(requireOriginAndPurpose: false))) == nil)
        // Present values are still checked.
        builder.tee.origin = 1
        #expect(
            (await builder.failure(AttestationTrust(androidKey: .init(requireOriginAndPurpose: false))))?.code
                == .androidKeyAuthorizationInvalid)
    }

    @Test func credCertMustCertifyTheCredentialKey() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.certifiedKey = P256.Signing.PrivateKey().publicKey
        // The signature is the credential key's, so step 2 (sig with credCert's key) fails first.
        #expect((await builder.failure())?.code == .attestationSignatureInvalid)
    }

    @Test func keyDescriptionMustBePresentAndWellFormed() async {
        var builder = AndroidKeyStatementBuilder(ca: ca)
        builder.includeExtension = false
        #expect((await builder.failure())?.code == .androidKeyDescriptionInvalid)
        builder = AndroidKeyStatementBuilder(ca: ca)
        builder.rawExtension = Array(builder.keyDescription.dropLast())
        #expect((await builder.failure())?.code == .androidKeyDescriptionInvalid)
        // A repeated authorization tag.
        builder = AndroidKeyStatementBuilder(ca: ca)
        let repeated = TestDER.sequence([
            TestDER.explicit(1, TestDER.set([TestDER.integer(2)])),
            TestDER.explicit(1, TestDER.set([TestDER.integer(2)])),
        ])
        builder.rawExtension = TestDER.sequence([
            TestDER.integer(3), TestDER.enumerated(1), TestDER.integer(4), TestDER.enumerated(1),
            TestDER.octets(builder.registration.clientDataHash), TestDER.octets([]), TestDER.sequence([]), repeated,
        ])
        #expect((await builder.failure())?.code == .androidKeyDescriptionInvalid)
        // An unknown security level.
        builder = AndroidKeyStatementBuilder(ca: ca)
        builder.securityLevel = 7
        #expect((await builder.failure())?.code == .androidKeyDescriptionInvalid)
    }

    @Test func keyDescriptionParsesEveryCorpusCapture() throws {
        for testCase in AndroidKeyCorpusTests.androidCases {
            let object = try AttestationObject(
                bytes: try Base64URL.decode(testCase.response.response.attestationObject))
            let x5c = try AttestationCertificateChain.parse(object.statement[text: "x5c"], format: "android-key")
            let description = try AndroidKeyAttestationVerifier.keyDescription(in: x5c[0], step: "test")
            #expect(description.attestationChallenge.count == 32)
            #expect(description.teeEnforced.tags == description.teeEnforced.tags.sorted())
        }
    }
}

// MARK: - Real captures

@Suite struct AndroidKeyCorpusTests {
    static let androidCases: [CorpusCase] = ((try? CorpusCase.all(formats: ["android-key"])) ?? [])

    static func run(_ testCase: CorpusCase, x5c: [[UInt8]]? = nil, trust: AttestationTrust) async throws
        -> AttestationResult
    {
        var bytes = try Base64URL.decode(testCase.response.response.attestationObject)
        if let x5c {
            // Re-encode the attestation object with another x5c (the signature covers authData ‖ clientDataHash only).
            let item = try CBORDecoder(options: .lenientMapOrder).decode(bytes)
            let statement = try #require(item[text: "attStmt"]?.mapEntries).map {
                $0.key == "x5c" ? CBORMapEntry("x5c", .array(x5c.map(CBOR.byteString))) : $0
            }
            bytes = CBOREncoder.encode(
                .map([
                    CBORMapEntry("fmt", "android-key"), CBORMapEntry("attStmt", .map(statement)),
                    CBORMapEntry("authData", try #require(item[text: "authData"])),
                ]))
        }
        let object = try AttestationObject(bytes: bytes)
        let clientDataHash = Array(SHA256.hash(data: try Base64URL.decode(testCase.response.response.clientDataJSON)))
        return try await AttestationFormatRegistry.standard.verify(
            object, clientDataHash: clientDataHash, trust: trust, now: Date())
    }

    static func time(_ testCase: CorpusCase) throws -> Date {
        try #require(testCase.verificationTime.flatMap { ISO8601DateFormatter().date(from: $0) })
    }

    /// The hardware captures verify against the bundled Google roots (RSA, and the P-384 Key Attestation CA1).
    @Test(arguments: [
        "go-webauthn-android-key-tee-reg", "py-webauthn-pixel-key-attestation-ca1-android-key-reg",
        "simplewebauthn-galaxy-s9-android-key-reg",
    ])
    func hardwareCapturesChainToTheBundledGoogleRoots(_ name: String) async throws {
        let testCase = try #require(Self.androidCases.first { $0.name == name })
        let anchors = try TrustAnchors.bundled()
        let trust = AttestationTrust(formatAnchors: anchors.formatAnchors, verificationTime: try Self.time(testCase))
        let result = try await Self.run(testCase, trust: trust)
        #expect(result.type == .basic && result.chainVerified)
        let root = try #require(result.trustAnchor)
        #expect(anchors["android-key"].contains(root))
        if name.contains("ca1") {
            #expect(P384.Signing.PublicKey(root.publicKey) != nil, "the P-384 Key Attestation CA1 root")
        }
    }

    /// x5c may end with the root or stop below it: both verify.
    @Test func x5cWithoutTheRootVerifies() async throws {
        let testCase = try #require(Self.androidCases.first { $0.name == "simplewebauthn-galaxy-s9-android-key-reg" })
        let object = try AttestationObject(bytes: try Base64URL.decode(testCase.response.response.attestationObject))
        let full = try #require(object.statement[text: "x5c"]?.array?.compactMap { $0.bytes })
        let last = try Certificate(derEncoded: try #require(full.last))
        #expect(last.subject == last.issuer, "the capture's x5c ends with the self-signed root")
        let trust = AttestationTrust(
            formatAnchors: try TrustAnchors.bundled().formatAnchors, verificationTime: try Self.time(testCase))
        let result = try await Self.run(testCase, x5c: Array(full.dropLast()), trust: trust)
        #expect(result.chainVerified && result.trustPath.count == full.count - 1)
    }

    /// A chain whose root is self-signed inside x5c is not anchored by it: with only the RSA roots as anchors,
    /// the Key Attestation CA1 chain is refused (the corpus's derived negative).
    @Test func selfSignedRootInsideX5CIsNeverAnAnchor() async throws {
        let testCase = try #require(
            Self.androidCases.first { $0.name == "py-webauthn-pixel-key-attestation-ca1-untrusted-root-reg" })
        #expect(!testCase.expected.ok)
        let anchors = try testCase.trustAnchorsPEM.map { try Certificate(pemEncoded: $0) }
        let trust = AttestationTrust(trustAnchors: anchors, verificationTime: try Self.time(testCase))
        await #expect(throws: WebAuthnError(.attestationUntrusted)) { _ = try await Self.run(testCase, trust: trust) }
    }

    /// webauthn-rs's capture from Android's software keystore (attestationSecurityLevel Software, although its
    /// teeEnforced list holds origin and purpose): refused by default; with software-enforced lists accepted and the software attestation root (which Sesame does not ship) as
    /// the anchor, it verifies.
    @Test func softwareKeystoreCaptureNeedsThePolicy() async throws {
        let testCase = try #require(Self.androidCases.first { $0.name == "webauthn-rs-android-key-reg" })
        let anchors = try testCase.trustAnchorsPEM.map { try Certificate(pemEncoded: $0) }
        let time = try Self.time(testCase)
        let strict = AttestationTrust(trustAnchors: anchors, verificationTime: time)
        await #expect(throws: WebAuthnError(.androidKeyAuthorizationInvalid)) {
            _ = try await Self.run(testCase, trust: strict)
        }
        let lenient = AttestationTrust(
            trustAnchors: anchors, verificationTime: time, androidKey: .init(acceptSoftwareEnforced: true))
        let result = try await Self.run(testCase, trust: lenient)
        #expect(result.chainVerified)
    }
}
