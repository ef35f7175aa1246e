import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import WebAuthn

// Registration cases of the real-authenticator corpus (Vectors/webauthn-real, sources in each file's `source`
// field and in Vectors/attestation/README.md) whose format is none, packed, fido-u2f or apple, verified with
// `AttestationObject` + `AttestationFormatRegistry.standard`.

struct CorpusCase: Decodable, Sendable, CustomTestStringConvertible {
    struct Response: Decodable, Sendable {
        struct Inner: Decodable, Sendable {
            let clientDataJSON: String
            let attestationObject: String
        }
        let response: Inner
    }
    struct Expected: Decodable, Sendable {
        let ok: Bool
        let fmt: String?
        let attestationType: String?
        let aaguid: String?
        let errorKind: String?
    }
    let name: String
    let source: String
    let response: Response
    let trustAnchorsPEM: [String]
    let verificationTime: String?
    let expected: Expected

    var testDescription: String { name }

    /// The attestation object's `fmt`, read without the library's key parsers.
    var format: String? {
        guard let bytes = try? Base64URL.decode(response.response.attestationObject) else { return nil }
        return try? CBORDecoderShim.decode(bytes)
    }

    enum CodingKeys: String, CodingKey {
        case source, response, trustAnchorsPEM, verificationTime, expected
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = ""
        source = try container.decode(String.self, forKey: .source)
        response = try container.decode(Response.self, forKey: .response)
        trustAnchorsPEM = try container.decode([String].self, forKey: .trustAnchorsPEM)
        verificationTime = try container.decodeIfPresent(String.self, forKey: .verificationTime)
        expected = try container.decode(Expected.self, forKey: .expected)
    }

    /// The registration cases, all formats or only `formats` (the copies here and, when present, the cases read in
    /// place from the shared corpus: `RealCorpus`).
    static func all(formats: Set<String>? = nil) throws -> [CorpusCase] {
        let files = RealCorpus.names.filter { $0.hasSuffix("-reg.json") }
        return try files.compactMap { file in
            let data = try RealCorpus.data(file)
            let decoded = try JSONDecoder().decode(CorpusCase.self, from: data)
            let testCase = CorpusCase(named: String(file.dropLast(5)), decoded)
            guard let formats else { return testCase }
            return formats.contains(testCase.format ?? "") ? testCase : nil
        }
    }
}

/// Negative cases and the error each must produce. Every negative corpus case must be listed here, so a new case
/// cannot pass by failing for an unrelated reason.
private let expectedFailures: [String: WebAuthnError.Code?] = [
    // authData ends inside the AAGUID: the attestation object does not parse (any parser error is right).
    "webauthn-rs-firefox98-hello-truncated-aaguid-reg": nil,
    // The COSE key map declares 3 entries and holds 4: the attestation object does not parse.
    "webauthn-rs-solokey-v2-invalid-ed25519-cbor-reg": nil,
    "webauthn-rs-solokey-v2-packed-eddsa-reg": nil,
    "webauthn-rs-yubikey-aaguid-ext-mismatch-reg": .attestationAAGUIDMismatch,
    "webauthn-rs-ipados-5ci-untrusted-root-reg": .attestationUntrusted,
    "webauthn-rs-touchid-apple-bad-nonce-reg": .attestationNonceMismatch,
    "yubico-apple-ios-clientdata-mismatch-reg": .attestationNonceMismatch,
    // The real STMicro capture evaluated after its AIK certificate and AIK CA expired (2025-03-21).
    "py-webauthn-lenovo-carbon-x1-stm-tpm-expired-aik-reg": .attestationUntrusted,
    // The Key Attestation CA1 chain with only Google's RSA roots as anchors: its self-signed root inside x5c is not
    // an anchor.
    "py-webauthn-pixel-key-attestation-ca1-untrusted-root-reg": .attestationUntrusted,
    // go-webauthn's copy of a SafetyNet response with one character of the leaf certificate changed: the JWS
    // signature no longer verifies with the changed leaf.
    "go-webauthn-safetynet-corrupted-cert-reg": .attestationSignatureInvalid,
    "simplewebauthn-safetynet-cts-false-reg": .safetyNetCTSProfileMismatch,
    // Evaluated a day after the response was made.
    "simplewebauthn-safetynet-stale-timestamp-reg": .safetyNetTimestampInvalid,
]

/// Positive corpus cases this library cannot verify, and the error that says so: the ML-DSA-44 credential key
/// (COSE -48) of the Yubico preview firmware. swift-crypto 4.5.2 exposes only ML-DSA-65 and ML-DSA-87, so the
/// attestation object parser refuses the key with `.unsupportedAlgorithm` before any attestation check.
private let unsupportedYet: [String: WebAuthnError.Code] = [
    "yubico-mldsa44-reg": .unsupportedAlgorithm
]

/// Positive corpus cases that Sesame's default policy refuses, and the error: the peers' verifiers accept them, and
/// the format's own tests show each verifying under the opt-in policy.
private let refusedByDefaultPolicy: [String: WebAuthnError.Code] = [
    // Android's software keystore (attestationSecurityLevel Software): AndroidKeyCorpusTests shows it verifying with
    // AndroidKeyPolicy.acceptSoftwareEnforced.
    "webauthn-rs-android-key-reg": .androidKeyAuthorizationInvalid
]

/// Negative corpus cases whose fault is outside the attestation statement: the ceremony refuses them, and the
/// attestation verifier must accept them (so the ceremony's own check is what the corpus tests there).
private let ceremonyLevelFailures: Set<String> = [
    // The credential uses ES256 but the RP offered only RS256/EdDSA/RS1 (a pubKeyCredParams check, §7.1).
    "webauthn-rs-pixel3a-wrong-alg-reg"
]

/// The time used as "now" when a case pins none (its certificates are valid well past this date).
private let corpusNow = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18

private func run(_ testCase: CorpusCase) async throws(WebAuthnError) -> AttestationResult {
    guard let clientDataJSON = try? Base64URL.decode(testCase.response.response.clientDataJSON),
        let attestationObject = try? Base64URL.decode(testCase.response.response.attestationObject)
    else { throw WebAuthnError(.invalidBase64URL) }
    let object = try AttestationObject(bytes: attestationObject)
    var anchors: [Certificate] = []
    for pem in testCase.trustAnchorsPEM {
        guard let anchor = try? Certificate(pemEncoded: pem) else { throw WebAuthnError(.invalidConfiguration) }
        anchors.append(anchor)
    }
    var time: Date?
    if let text = testCase.verificationTime {
        guard let parsed = ISO8601DateFormatter().date(from: text) else { throw WebAuthnError(.invalidConfiguration) }
        time = parsed
    }
    // Every TPM statement of the corpus is RS1; TPMAttestationTests shows the refusal without this opt-in.
    // SafetyNet is deprecated and refused unless enabled; SafetyNetAttestationTests shows the refusal.
    let trust = AttestationTrust(
        trustAnchors: anchors, verificationTime: time, allowSHA1Signatures: true, safetyNet: SafetyNetPolicy())
    return try await AttestationFormatRegistry.standard.verify(
        object, clientDataHash: Array(SHA256.hash(data: clientDataJSON)), trust: trust, now: corpusNow)
}

@Suite struct AttestationCorpusTests {
    static let formats: Set<String> = [
        "none", "packed", "tpm", "android-key", "android-safetynet", "fido-u2f", "apple",
    ]
    static let cases: [CorpusCase] = (try? CorpusCase.all(formats: formats)) ?? []

    @Test(
        .enabled(
            if: RealCorpus.sharedDirectory != nil,
            "the shared corpus is absent: its webauthn-rs cases are missing, so the count cannot be checked"))
    func corpusIsPresent() throws {
        let cases = try CorpusCase.all(formats: Self.formats)
        #expect(cases.count == 92)
        let negatives = Set(cases.filter { !$0.expected.ok }.map(\.name))
        #expect(negatives == Set(expectedFailures.keys).union(ceremonyLevelFailures))
    }

    @Test(
        arguments: cases.filter {
            ($0.expected.ok || ceremonyLevelFailures.contains($0.name)) && unsupportedYet[$0.name] == nil
                && refusedByDefaultPolicy[$0.name] == nil
        })
    func accepted(_ testCase: CorpusCase) async throws {
        let result = try await run(testCase)
        if testCase.expected.ok {
            #expect(result.format == testCase.expected.fmt)
            #expect(result.type.rawValue == testCase.expected.attestationType)
        } else {
            #expect(result.format == "none")
        }
        // A chain is reported verified exactly when the case supplies anchors (and the type has a chain).
        #expect(result.chainVerified == (!testCase.trustAnchorsPEM.isEmpty && !result.trustPath.isEmpty))
        #expect(result.trustPath.isEmpty == [.none, .`self`].contains(result.type))
        // The validated chain is reported exactly when the chain was verified, and ends at one of the anchors.
        #expect(result.verifiedChain.isEmpty != result.chainVerified)
        if let anchor = result.trustAnchor {
            #expect(testCase.trustAnchorsPEM.contains { (try? Certificate(pemEncoded: $0)) == anchor })
        }
    }

    @Test(arguments: cases.filter { !$0.expected.ok && !ceremonyLevelFailures.contains($0.name) })
    func refused(_ testCase: CorpusCase) async throws {
        let expectedCode = try #require(expectedFailures[testCase.name])
        let error = await #expect(throws: WebAuthnError.self) { try await run(testCase) }
        if let expectedCode, let error {
            #expect(error.code == expectedCode, "\(error)")
        }
    }

    @Test(arguments: cases.filter { refusedByDefaultPolicy[$0.name] != nil })
    func refusedByDefault(_ testCase: CorpusCase) async throws {
        #expect(testCase.expected.ok)
        let error = await #expect(throws: WebAuthnError.self) { try await run(testCase) }
        #expect(error?.code == refusedByDefaultPolicy[testCase.name])
    }

    @Test(arguments: cases.filter { unsupportedYet[$0.name] != nil })
    func notSupportedYet(_ testCase: CorpusCase) async throws {
        let error = await #expect(throws: WebAuthnError.self) { try await run(testCase) }
        #expect(error?.code == unsupportedYet[testCase.name])
    }

    /// The untrusted-root case is a valid statement: with no anchors it verifies, only not as a trusted chain.
    @Test(.enabled(if: RealCorpus.sharedDirectory != nil, RealCorpus.absentReason))
    func untrustedRootWithoutAnchorsIsBasicButUnverified() async throws {
        let untrusted = try #require(Self.cases.first { $0.name == "webauthn-rs-ipados-5ci-untrusted-root-reg" })
        let withoutAnchors = CorpusCase(named: untrusted.name, untrusted, anchors: [])
        let result = try await run(withoutAnchors)
        #expect(result.type == .basic)
        #expect(!result.chainVerified)
    }

    /// The Apple cases verify against the Apple WebAuthn root shipped by webauthn-rs's case, at their time; one
    /// day after the 3-day credential certificate expires they do not.
    @Test(.enabled(if: RealCorpus.sharedDirectory != nil, RealCorpus.absentReason)) func appleCertificateExpiry()
        async throws
    {
        let apple = try #require(Self.cases.first { $0.name == "webauthn-rs-touchid-apple-reg" })
        #expect(try await run(apple).chainVerified)
        let late = CorpusCase(named: apple.name, apple, verificationTime: "2020-12-15T00:00:00Z")
        let error = await #expect(throws: WebAuthnError.self) { try await run(late) }
        #expect(error?.code == .attestationUntrusted)
    }
}

extension CorpusCase {
    init(named name: String, _ other: CorpusCase, anchors: [String]? = nil, verificationTime: String? = nil) {
        self.name = name
        source = other.source
        response = other.response
        trustAnchorsPEM = anchors ?? other.trustAnchorsPEM
        self.verificationTime = verificationTime ?? other.verificationTime
        expected = other.expected
    }
}

// MARK: - py_webauthn fixtures

/// Registrations from py_webauthn's and SimpleWebAuthn's test suites (Vectors/attestation/py_webauthn.json and
/// simplewebauthn.json; each entry names its test and says which device made it). Anchors: Apple's WebAuthn root as
/// py_webauthn ships it, and the Yubico U2F root from the corpus.
struct FixtureCase: Decodable, Sendable, CustomTestStringConvertible {
    let source: String
    let description: String
    let attestationObject: String
    let clientDataJSON: String
    let trustAnchorsPEM: [String]
    let verificationTime: String?
    /// `basic`, `self`, ... or `refused` (then `expectedError` names the code).
    let expectedAttestationType: String
    let expectedError: String?

    var testDescription: String { String(source.split(separator: "#").last ?? "") }

    static func all(_ file: String) throws -> [FixtureCase] {
        guard let vectors = Bundle.module.url(forResource: "Vectors", withExtension: nil) else { return [] }
        let data = try Data(contentsOf: vectors.appendingPathComponent("attestation/\(file)"))
        return try JSONDecoder().decode([FixtureCase].self, from: data)
    }
}

@Suite struct AttestationFixtureTests {
    static let fixtures: [FixtureCase] = ["py_webauthn.json", "simplewebauthn.json", "chromium.json"].flatMap {
        (try? FixtureCase.all($0)) ?? []
    }

    @Test func fixturesArePresent() {
        #expect(Self.fixtures.count == 17)
    }

    /// Chromium's virtual authenticator signs with a self-signed batch certificate (CA false). Trusting it means
    /// pinning that very certificate, which `acceptsLeafAsTrustAnchor` allows and the default refuses.
    @Test(arguments: (try? FixtureCase.all("chromium.json")) ?? [])
    func chromiumBatchCertificatePinnedAsAnchor(_ fixture: FixtureCase) async throws {
        let clientDataJSON = try Base64URL.decode(fixture.clientDataJSON)
        let object = try AttestationObject(bytes: try Base64URL.decode(fixture.attestationObject))
        let x5c = try AttestationCertificateChain.parse(object.statement[text: "x5c"], format: object.format)
        #expect(x5c.count == 1 && x5c[0].issuer == x5c[0].subject)
        let hash = Array(SHA256.hash(data: clientDataJSON))

        let strict = AttestationTrust(trustAnchors: x5c)
        let error = await #expect(throws: WebAuthnError.self) {
            try await AttestationFormatRegistry.standard.verify(
                object, clientDataHash: hash, trust: strict, now: corpusNow)
        }
        #expect(error?.code == .attestationUntrusted)

        let pinned = AttestationTrust(trustAnchors: x5c, acceptsLeafAsTrustAnchor: true)
        let result = try await AttestationFormatRegistry.standard.verify(
            object, clientDataHash: hash, trust: pinned, now: corpusNow)
        #expect(result.type == .basic && result.chainVerified)
    }

    @Test(arguments: fixtures.filter { $0.expectedAttestationType == "refused" })
    func refused(_ fixture: FixtureCase) async throws {
        let expected = try #require(fixture.expectedError)
        let clientDataJSON = try Base64URL.decode(fixture.clientDataJSON)
        let object = try AttestationObject(bytes: try Base64URL.decode(fixture.attestationObject))
        let error = await #expect(throws: WebAuthnError.self) {
            try await AttestationFormatRegistry.standard.verify(
                object, clientDataHash: Array(SHA256.hash(data: clientDataJSON)), trust: AttestationTrust(),
                now: corpusNow)
        }
        #expect(error?.code.name == expected)
    }

    @Test(arguments: fixtures.filter { $0.expectedAttestationType != "refused" })
    func verifies(_ fixture: FixtureCase) async throws {
        let clientDataJSON = try Base64URL.decode(fixture.clientDataJSON)
        let object = try AttestationObject(bytes: try Base64URL.decode(fixture.attestationObject))
        let anchors = try fixture.trustAnchorsPEM.map { try Certificate(pemEncoded: $0) }
        let time = fixture.verificationTime.flatMap { ISO8601DateFormatter().date(from: $0) }
        let trust = AttestationTrust(trustAnchors: anchors, verificationTime: time)
        let clientDataHash = Array(SHA256.hash(data: clientDataJSON))
        let result = try await AttestationFormatRegistry.standard.verify(
            object, clientDataHash: clientDataHash, trust: trust, now: corpusNow)
        #expect(result.type.rawValue == fixture.expectedAttestationType)
        #expect(result.chainVerified == !anchors.isEmpty)

        // The same statement over other client data must fail (`none` signs nothing).
        guard result.type != .none else { return }
        var otherHash = clientDataHash
        otherHash[0] ^= 1
        await #expect(throws: WebAuthnError.self) {
            try await AttestationFormatRegistry.standard.verify(
                object, clientDataHash: otherHash, trust: trust, now: corpusNow)
        }
    }
}

// MARK: - Mutations

/// Deterministic generator so a failing mutation can be reproduced.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct AttestationMutationTests {
    /// One byte of each statement changed at a time: verification must end in a `WebAuthnError` or a result,
    /// never a crash; and a change inside the signature must always be refused.
    /// The webauthn-rs captures among them are read in place and left out when the shared corpus is absent.
    @Test(
        arguments: [
            "yubico-yubikey-5-nfc-reg", "webauthn-rs-touchid-apple-reg", "yubico-yubikey-neo-reg",
            "webauthn-rs-chrome-touchid-packed-self-reg",
        ].filter { RealCorpus.files["\($0).json"] != nil })
    func singleByteChanges(_ name: String) async throws {
        let testCase = try #require(AttestationCorpusTests.cases.first { $0.name == name })
        let bytes = try Base64URL.decode(testCase.response.response.attestationObject)
        let clientDataHash = Array(SHA256.hash(data: try Base64URL.decode(testCase.response.response.clientDataJSON)))
        let time = testCase.verificationTime.flatMap { ISO8601DateFormatter().date(from: $0) }
        let trust = AttestationTrust(
            trustAnchors: try testCase.trustAnchorsPEM.map { try Certificate(pemEncoded: $0) }, verificationTime: time)
        let original = try AttestationObject(bytes: bytes)
        let signature = original.statement[text: "sig"]?.bytes

        var generator = SplitMix64(state: UInt64(truncatingIfNeeded: name.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        var refused = 0
        for _ in 0..<150 {
            var mutated = bytes
            let index = Int.random(in: 0..<mutated.count, using: &generator)
            mutated[index] ^= UInt8.random(in: 1...255, using: &generator)
            guard let object = try? AttestationObject(bytes: mutated) else {
                refused += 1
                continue
            }
            do {
                _ = try await AttestationFormatRegistry.standard.verify(
                    object, clientDataHash: clientDataHash, trust: trust, now: corpusNow)
                if let signature, let changed = object.statement[text: "sig"]?.bytes, changed != signature {
                    Issue.record("a changed signature was accepted (byte \(index))")
                }
            } catch {
                refused += 1
            }
        }
        #expect(refused > 0)
    }
}

// MARK: - Chain rules hook, on real TPM AIK chains

@Suite struct AttestationChainRulesTests {
    /// The Microsoft AIK certificate marks certificatePolicies and subjectAltName critical; RFC 5280 processing
    /// alone must refuse the chain, and a format rule that handles both must let it verify (the `tpm` verifier
    /// brings such a rule, `TPMAttestationVerifier.tpmChainRules`).
    /// The webauthn-rs capture is read in place from the shared corpus (MPL-2.0); without it only Yubico's runs,
    /// and `RealCorpusPresenceTests` reports the skip.
    @Test(
        arguments: ["yubico-windows-hello-tpm-reg"]
            + (RealCorpus.files["webauthn-rs-windows-hello-tpm-rs1-reg.json"] == nil
                ? [] : ["webauthn-rs-windows-hello-tpm-rs1-reg"]))
    func tpmAIKChainNeedsFormatRules(_ name: String) async throws {
        let data = try RealCorpus.data("\(name).json")
        let testCase = try JSONDecoder().decode(CorpusCase.self, from: data)
        let object = try AttestationObject(bytes: try Base64URL.decode(testCase.response.response.attestationObject))
        #expect(object.format == "tpm")
        let x5c = try AttestationCertificateChain.parse(object.statement[text: "x5c"], format: "tpm")
        let time = try #require(testCase.verificationTime.flatMap { ISO8601DateFormatter().date(from: $0) })
        let trust = AttestationTrust(
            trustAnchors: try testCase.trustAnchorsPEM.map { try Certificate(pemEncoded: $0) }, verificationTime: time)

        await #expect(throws: WebAuthnError.self) {
            try await AttestationCertificateChain.evaluate(x5c, trust: trust, now: corpusNow, format: "tpm")
        }

        let certificatePolicies: ASN1ObjectIdentifier = [2, 5, 29, 32]
        let rules = AttestationChainRules(
            handledCriticalExtensions: [certificatePolicies, .X509ExtensionID.subjectAlternativeName]
        ) { chain in
            chain.first?.extensions[oid: certificatePolicies] == nil ? "AIK certificate has no policy" : nil
        }
        let verified = try await AttestationCertificateChain.evaluate(
            x5c, trust: trust, now: corpusNow, rules: rules, format: "tpm")
        #expect(verified)
    }
}

/// The cases read in place from the shared corpus (NOTICE: kanidm/webauthn-rs, MPL-2.0, kept out of this
/// repository). Without the shared corpus this suite is skipped and says so; the other corpus tests then run on the
/// copies here only.
@Suite(
    .enabled(
        if: RealCorpus.sharedDirectory != nil,
        "the shared corpus (../shared/corpus or SESAME_SHARED_CORPUS) is absent: the webauthn-rs cases it holds were not checked"
    ))
struct RealCorpusPresenceTests {
    @Test func inPlaceCasesAreRead() throws {
        let inPlace = RealCorpus.names.filter { name in RealCorpus.inPlacePrefixes.contains(where: name.hasPrefix) }
        let local = Set(
            (try? FileManager.default.contentsOfDirectory(
                atPath: Vectors.directory.appendingPathComponent("webauthn-real").path)) ?? [])
        #expect(inPlace.filter { !local.contains($0) }.count >= 28)
        #expect(RealCorpus.names.count >= 98)
    }
}
