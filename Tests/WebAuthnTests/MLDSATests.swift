import CBOR
import Crypto
import Foundation
import Testing
import VirtualAuthenticator

@testable import WebAuthn

/// ML-DSA credential keys (FIPS 204; COSE AKP keys, RFC 9964): ML-DSA-65 (-49) and ML-DSA-87 (-50) verify,
/// ML-DSA-44 (-48) is refused because swift-crypto 4.5.2 does not expose it.
@Suite struct MLDSATests {
    static let origin = "https://sesame.example"

    static func relyingParty(postQuantum: Bool) throws -> RelyingParty {
        var config = try RelyingPartyConfiguration(id: "sesame.example", name: "Sesame", origins: [origin])
        if postQuantum { config.algorithms = RelyingPartyConfiguration.postQuantumAlgorithms + config.algorithms }
        return RelyingParty(configuration: config)
    }

    static let user = PublicKeyCredentialUserEntityJSON(id: [1, 2, 3], name: "ada", displayName: "Ada")

    @Test func optionsListMLDSAOnlyWhenTheRelyingPartyOptsIn() throws {
        let plain = try Self.relyingParty(postQuantum: false).makeCreationOptions(user: Self.user)
        #expect(!plain.pubKeyCredParams.contains { [-48, -49, -50].contains($0.alg.rawValue) })
        let opted = try Self.relyingParty(postQuantum: true).makeCreationOptions(user: Self.user)
        #expect(opted.pubKeyCredParams.prefix(2).map(\.alg) == [.mldsa65, .mldsa87])
    }

    @Test(arguments: [VirtualAuthenticator.Algorithm.mldsa65, .mldsa87], VirtualAuthenticator.Attestation.allCases)
    func registersAndSignsIn(
        _ algorithm: VirtualAuthenticator.Algorithm, _ attestation: VirtualAuthenticator.Attestation
    )
        async throws
    {
        let rp = try Self.relyingParty(postQuantum: true)
        let authenticator = VirtualAuthenticator(
            configuration: .init(algorithms: [algorithm], attestation: attestation))
        let options = rp.makeCreationOptions(user: Self.user)
        let created = try authenticator.create(optionsJSON: Array(JSONEncoder().encode(options)), origin: Self.origin)
        let registered = try await rp.verifyRegistration(
            response: try RegistrationResponseJSON.decode(created.json),
            expected: RegistrationExpectation(options: options),
            now: Date())
        #expect(registered.publicKey.algorithm.rawValue == algorithm.rawValue)
        // Packed self attestation is an ML-DSA signature verified at registration.
        #expect(registered.attestation.type == (attestation == .none ? .none : .self))
        #expect(
            registered.publicKey.subjectPublicKeyInfoDER == authenticator.credentials[0].publicKeySPKI,
            "the library's SPKI and the authenticator's, written independently, agree")

        let request = rp.makeRequestOptions(allowCredentials: [
            PublicKeyCredentialDescriptorJSON(id: registered.credential.id)
        ])
        let asserted = try authenticator.get(optionsJSON: Array(JSONEncoder().encode(request)), origin: Self.origin)
        let response = try AuthenticationResponseJSON.decode(asserted.json)
        let expectation = AuthenticationExpectation(
            options: request, credential: registered.credential, userHandle: Self.user.id.bytes)
        _ = try rp.verifyAuthentication(response: response, expected: expectation, now: Date())

        // One changed signature byte is refused.
        var tampered = asserted.signature
        tampered[tampered.count / 2] ^= 1
        #expect(
            !registered.publicKey.isValidSignature(
                tampered, over: asserted.authenticatorData + Array(SHA256.hash(data: asserted.clientDataJSON))))
    }

    /// A registration with an ML-DSA key is refused when the options did not offer ML-DSA (§7.1 step 20).
    @Test func notOfferedIsNotAllowed() async throws {
        let optedIn = try Self.relyingParty(postQuantum: true)
        let authenticator = VirtualAuthenticator(configuration: .init(algorithms: [.mldsa65]))
        let options = optedIn.makeCreationOptions(user: Self.user)
        let created = try authenticator.create(optionsJSON: Array(JSONEncoder().encode(options)), origin: Self.origin)
        var expectation = RegistrationExpectation(options: options)
        expectation.allowedAlgorithms = RelyingPartyConfiguration.defaultAlgorithms
        await expectError(.algorithmNotAllowed, step: "7.1 step 20") {
            _ = try await optedIn.verifyRegistration(
                response: try RegistrationResponseJSON.decode(created.json), expected: expectation, now: Date())
        }
    }

    static func akp(_ alg: Int, pub: [UInt8]?, extra: [CBORMapEntry] = []) -> [UInt8] {
        var entries = [CBORMapEntry(1, 7), CBORMapEntry(3, CBOR(alg))]
        if let pub { entries.append(CBORMapEntry(-1, .byteString(pub))) }
        return CBOREncoder.encode(.map(entries + extra))
    }

    @Test func mldsa44IsRefusedAndSaysWhy() {
        let error = expectError(.unsupportedAlgorithm) {
            _ = try COSEKey(bytes: Self.akp(-48, pub: Array(repeating: 1, count: 1312)))
        }
        #expect(error?.detail.contains("swift-crypto") == true)
    }

    @Test func malformedAKPKeysAreRefused() {
        expectError(.invalidCOSEKey) { _ = try COSEKey(bytes: Self.akp(-49, pub: Array(repeating: 1, count: 2592))) }
        expectError(.invalidCOSEKey) { _ = try COSEKey(bytes: Self.akp(-50, pub: Array(repeating: 1, count: 1952))) }
        expectError(.invalidCOSEKey) { _ = try COSEKey(bytes: Self.akp(-49, pub: nil)) }
        expectError(.unsupportedAlgorithm) {
            _ = try COSEKey(bytes: Self.akp(-7, pub: Array(repeating: 1, count: 1952)))
        }
    }

    /// The Yubico preview firmware's ML-DSA-65 and -87 captures: registration and sign-in verify (CorpusTests runs
    /// them through the ceremonies); their keys parse with the right names.
    @Test(arguments: ["yubico-mldsa65-reg", "yubico-mldsa87-reg"])
    func corpusKeysParse(_ name: String) throws {
        let testCase = try #require(AttestationCorpusTests.cases.first { $0.name == name })
        let object = try AttestationObject(bytes: try Base64URL.decode(testCase.response.response.attestationObject))
        let key = try #require(object.authenticatorData.attestedCredentialData?.publicKey)
        #expect(key.algorithm.name == (name.contains("65") ? "ML-DSA-65" : "ML-DSA-87"))
    }
}
