import Foundation
import Testing
import X509

@testable import WebAuthn

// FIDO metadata in the registration ceremony, on a real Windows Hello capture (yubico-windows-hello-tpm-reg, RS1,
// AAGUID 08987058-cadc-4b81-b6e1-30de50dcbe96): the statement's attestation roots are the only anchors given, the
// policy's rules read the statement, and the result carries it.

struct MetadataCeremony {
    let entry: CorpusEntry
    let time: Date
    let response: RegistrationResponseJSON

    init() throws {
        entry = try #require(CorpusEntry.all.first { $0.file == "yubico-windows-hello-tpm-reg.json" })
        time = try #require(entry.corpus.verificationTime.flatMap { ISO8601DateFormatter().date(from: $0) })
        response = try RegistrationResponseJSON.decode(Array(entry.responseJSON))
    }

    static let helloAAGUID = "08987058-CADC-4B81-B6E1-30DE50DCBE96"

    /// Registers the capture with no anchors but the metadata's, and the RS1 opt-in of the policy.
    func register(metadata: MetadataIndex?, policy: RegistrationPolicy) async throws(WebAuthnError)
        -> RegistrationResult
    {
        var policy = policy
        policy.allowSHA1Attestation = true
        let c = entry.corpus
        var config = try RelyingPartyConfiguration(id: c.rpId, name: "metadata", origins: [c.origin])
        config.attestationTrust = AttestationTrust(trustAnchors: [], verificationTime: time, metadata: metadata)
        config.registrationPolicy = policy
        let challenge: [UInt8]
        do { challenge = try b64(c.challenge) } catch { throw WebAuthnError(.invalidBase64URL) }
        return try await RelyingParty(configuration: config).verifyRegistration(
            response: response,
            expected: RegistrationExpectation(challenge: challenge, allowedAlgorithms: allAlgorithms),
            now: time)
    }

    /// An index signed here with one entry for Windows Hello: the Microsoft TPM root and `statuses`.
    static func index(statuses: [String], roots: [Certificate]? = nil) async throws -> MetadataIndex {
        let mds = try TestMDS()
        let microsoft = try TrustAnchors.bundled()["tpm"]
        #expect(microsoft.count == 1)
        let text = try mds.blob(entries: [
            try TestMDS.entry(
                aaguid: helloAAGUID.lowercased(), roots: roots ?? microsoft, statuses: statuses,
                description: "Windows Hello Hardware Authenticator")
        ])
        return try MetadataIndex(try await mds.verify(text))
    }
}

@Suite struct MetadataCeremonyTests {
    let ceremony: MetadataCeremony
    init() throws { ceremony = try MetadataCeremony() }

    @Test func theStatementsRootsAreTheAnchorsAndTheResultNamesTheModel() async throws {
        let index = try await MetadataCeremony.index(statuses: ["FIDO_CERTIFIED_L1"])
        let policy = RegistrationPolicy(requireAttestation: true, minimumCertificationLevel: .l1)
        let result = try await ceremony.register(metadata: index, policy: policy)
        #expect(result.attestation.chainVerified)
        #expect(result.attestation.trustAnchor == (try TrustAnchors.bundled()["tpm"]).first)
        #expect(result.metadata?.name == "Windows Hello Hardware Authenticator")
        // Without metadata there is no anchor at all: the same policy refuses, naming its rule.
        let error = await expectError(.policyAttestationRequired, step: "7.1 step 24: policy requireAttestation") {
            _ = try await ceremony.register(metadata: nil, policy: policy)
        }
        #expect(error != nil)
    }

    @Test func aRevokedModelIsRefusedByDefault() async throws {
        let index = try await MetadataCeremony.index(statuses: ["FIDO_CERTIFIED_L1", "REVOKED"])
        await expectError(.metadataStatusRefused, step: "7.1 step 24: policy refusedStatuses") {
            _ = try await ceremony.register(metadata: index, policy: .acceptAny)
        }
    }

    @Test func aStatementWithOtherRootsRefusesTheChain() async throws {
        // The statement lists another vendor's root: anchors now apply to this model and the Microsoft chain
        // reaches none of them, so the attestation is untrusted whatever the policy.
        let other = try TestCA.root("Another Vendor Root")
        let index = try await MetadataCeremony.index(statuses: ["FIDO_CERTIFIED_L2"], roots: [other.certificate])
        await expectError(.attestationUntrusted, step: "7.1 step 22") {
            _ = try await ceremony.register(metadata: index, policy: .acceptAny)
        }
    }

    @Test func certificationBelowTheMinimumIsRefused() async throws {
        let index = try await MetadataCeremony.index(statuses: ["FIDO_CERTIFIED_L1"])
        await expectError(.policyCertificationLevel, step: "7.1 step 24: policy minimumCertificationLevel") {
            _ = try await ceremony.register(metadata: index, policy: RegistrationPolicy(minimumCertificationLevel: .l2))
        }
    }

    /// The production BLOB (no 31, read in place) lists Windows Hello as FIDO_CERTIFIED_L1 with the Microsoft TPM
    /// root: verified at its own time, it anchors and admits the capture.
    @Test(.enabled(if: SharedCorpus.available, "needs ../shared/corpus/mds (the production BLOB is read in place)"))
    func productionMetadata() async throws {
        let testCase = try #require(MDSCase.all.first { $0.name == "production-valid" })
        let blob = try await MetadataBLOB.verify(
            try testCase.text(testCase.blob), roots: try testCase.rootCertificates(), time: testCase.time)
        let index = try MetadataIndex(blob)
        let result = try await ceremony.register(
            metadata: index, policy: RegistrationPolicy(requireAttestation: true, minimumCertificationLevel: .l1))
        #expect(result.metadata?.name == "Windows Hello Hardware Authenticator")
        #expect(result.attestation.chainVerified)
    }
}
