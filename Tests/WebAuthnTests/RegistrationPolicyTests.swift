import Crypto
import Foundation
import Testing
import X509

@testable import WebAuthn

// RegistrationPolicy: one attack (or one refusal) per rule, on attestations verified here with freshly made
// certificates; then the JSON document. Ceremony-level wiring (SafetyNet, SHA-1, metadata anchors) is in
// MetadataCeremonyTests, on real captures.

/// A packed registration and the pieces a policy looks at.
struct PolicySubject {
    let registration = TestRegistration()
    let attestationKey = P256.Signing.PrivateKey()
    let vendorRoot: TestCA

    init() throws { vendorRoot = try TestCA.root("Vendor Attestation Root") }

    var aaguid: AAGUID { AAGUID(bytes: registration.aaguid) ?? .zero }
    var authenticatorData: AuthenticatorData {
        get throws { try AuthenticatorData(bytes: registration.authenticatorData) }
    }

    /// Packed basic, leaf issued by the vendor root, with or without the AAGUID extension, verified with `anchors`.
    func packed(aaguidExtension: Bool = true, anchors: [Certificate]) async throws -> AttestationResult {
        var extensions = [try TestExtension.notCA()]
        if aaguidExtension { extensions.append(TestExtension.aaguid(registration.aaguid)) }
        let leaf = try vendorRoot.issue(key: attestationKey.publicKey, extensions: extensions)
        return try await registration.verify(
            try registration.packedBasic(attestationKey: attestationKey, chain: [leaf]), anchors: anchors)
    }

    /// Packed self attestation (signed with the credential key).
    func selfAttestation() async throws -> AttestationResult {
        let signature = Array(try registration.credentialKey.signature(for: registration.signedData).derRepresentation)
        return try await registration.verify(try registration.packed(signature: signature, x5c: nil))
    }

    func none() async throws -> AttestationResult {
        try await registration.verify(try registration.object(format: "none", statement: []))
    }

    /// A metadata entry for this AAGUID with these status reports, listing `roots`.
    func entry(_ statuses: [String], roots: [Certificate] = []) throws -> MetadataEntry {
        let json = try JSONSerialization.data(
            withJSONObject: try TestMDS.entry(aaguid: aaguid.uuidString, roots: roots, statuses: statuses))
        return try JSONDecoder().decode(MetadataEntry.self, from: json)
    }

    func evaluate(
        _ policy: RegistrationPolicy, _ attestation: AttestationResult, metadata: MetadataEntry? = nil,
        metadataRoots: [Certificate] = [], authenticatorData: AuthenticatorData? = nil
    ) throws -> WebAuthnError.Code? {
        let data = try authenticatorData ?? self.authenticatorData
        do {
            try policy.evaluate(
                attestation: attestation, authenticatorData: data, metadata: metadata, metadataRoots: metadataRoots)
            return nil
        } catch {
            return error.code
        }
    }
}

@Suite struct RegistrationPolicyTests {
    let subject: PolicySubject
    init() throws { subject = try PolicySubject() }

    @Test func acceptAnyAdmitsEveryTypeWithoutMetadata() async throws {
        for result in [
            try await subject.none(), try await subject.selfAttestation(), try await subject.packed(anchors: []),
        ] {
            #expect(try subject.evaluate(.acceptAny, result) == nil)
        }
    }

    @Test func formatsRule() async throws {
        let packed = try await subject.packed(anchors: [subject.vendorRoot.certificate])
        #expect(
            try subject.evaluate(RegistrationPolicy(allowedFormats: ["tpm", "apple"]), packed)
                == .policyFormatNotAllowed)
        #expect(try subject.evaluate(RegistrationPolicy(allowedFormats: ["packed"]), packed) == nil)
        // compound: every sub-statement's format must be admitted, not only the name "compound".
        let compound = AttestationResult(
            format: "compound", type: packed.type, trustPath: packed.trustPath, chainVerified: true,
            verifiedChain: packed.verifiedChain, components: [packed, try await subject.none()])
        #expect(
            try subject.evaluate(RegistrationPolicy(allowedFormats: ["compound", "packed"]), compound)
                == .policyFormatNotAllowed)
        #expect(
            try subject.evaluate(RegistrationPolicy(allowedFormats: ["compound", "packed", "none"]), compound) == nil)
    }

    @Test func attestationTypesRuleAdmitsSelfAndNoneOnlyWhenListed() async throws {
        let strict = RegistrationPolicy(allowedAttestationTypes: [.basic, .attCA, .anonCA])
        #expect(try subject.evaluate(strict, try await subject.none()) == .attestationTypeNotAllowed)
        #expect(try subject.evaluate(strict, try await subject.selfAttestation()) == .attestationTypeNotAllowed)
        #expect(try subject.evaluate(strict, try await subject.packed(anchors: [])) == nil)
        let open = RegistrationPolicy(allowedAttestationTypes: [.basic, .self, .none])
        #expect(try subject.evaluate(open, try await subject.none()) == nil)
        #expect(try subject.evaluate(open, try await subject.selfAttestation()) == nil)
    }

    /// Each undesired status refuses by default, even for an unattested registration: refusing on the client's
    /// word only refuses more.
    @Test(arguments: [
        "REVOKED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE",
        "USER_KEY_PHYSICAL_COMPROMISE",
    ])
    func undesiredStatusRefuses(_ status: String) async throws {
        let entry = try subject.entry(["FIDO_CERTIFIED_L2", status])
        #expect(try subject.evaluate(.acceptAny, try await subject.none(), metadata: entry) == .metadataStatusRefused)
        let attested = try await subject.packed(anchors: [subject.vendorRoot.certificate])
        #expect(try subject.evaluate(.acceptAny, attested, metadata: entry) == .metadataStatusRefused)
        // A policy that lists no refused status admits it.
        #expect(try subject.evaluate(RegistrationPolicy(refusedStatuses: []), attested, metadata: entry) == nil)
    }

    @Test func otherStatusesDoNotRefuse() async throws {
        let entry = try subject.entry([
            "FIDO_CERTIFIED_L1", "UPDATE_AVAILABLE", "SELF_ASSERTION_SUBMITTED", "SOMETHING_NEW",
        ])
        #expect(try subject.evaluate(.acceptAny, try await subject.none(), metadata: entry) == nil)
    }

    @Test func requireAttestationRefusesNoneSelfAndUnanchoredChains() async throws {
        let policy = RegistrationPolicy(requireAttestation: true)
        #expect(try subject.evaluate(policy, try await subject.none()) == .policyAttestationRequired)
        #expect(try subject.evaluate(policy, try await subject.selfAttestation()) == .policyAttestationRequired)
        #expect(try subject.evaluate(policy, try await subject.packed(anchors: [])) == .policyAttestationRequired)
        #expect(
            try subject.evaluate(policy, try await subject.packed(anchors: [subject.vendorRoot.certificate])) == nil)
    }

    @Test func allowListNeedsAnAttestedAAGUID() async throws {
        let allow = RegistrationPolicy(allowedAAGUIDs: [subject.aaguid])
        // Attested by the AAGUID extension of a verified certificate.
        #expect(try subject.evaluate(allow, try await subject.packed(anchors: [subject.vendorRoot.certificate])) == nil)
        // Attested by a chain to the model's own metadata roots (no extension).
        let noExtension = try await subject.packed(aaguidExtension: false, anchors: [subject.vendorRoot.certificate])
        #expect(
            try subject.evaluate(
                allow, noExtension, metadata: try subject.entry([]), metadataRoots: [subject.vendorRoot.certificate])
                == nil)
        // Attack: a certificate under a trusted anchor that says nothing about the model, claiming an allowed
        // AAGUID; none and self claim it too.
        #expect(try subject.evaluate(allow, noExtension) == .policyAAGUIDNotAllowed)
        #expect(try subject.evaluate(allow, try await subject.none()) == .policyAAGUIDNotAllowed)
        #expect(try subject.evaluate(allow, try await subject.selfAttestation()) == .policyAAGUIDNotAllowed)
        // An attested AAGUID that is not listed.
        let other = RegistrationPolicy(allowedAAGUIDs: [AAGUID(uuidString: "00000000-0000-0000-0000-000000000001")!])
        #expect(
            try subject.evaluate(other, try await subject.packed(anchors: [subject.vendorRoot.certificate]))
                == .policyAAGUIDNotAllowed)
    }

    @Test func denyListRefusesAttestedOrNot() async throws {
        let deny = RegistrationPolicy(deniedAAGUIDs: [subject.aaguid])
        #expect(try subject.evaluate(deny, try await subject.none()) == .policyAAGUIDDenied)
        #expect(
            try subject.evaluate(deny, try await subject.packed(anchors: [subject.vendorRoot.certificate]))
                == .policyAAGUIDDenied)
        #expect(try subject.evaluate(RegistrationPolicy(deniedAAGUIDs: [.zero]), try await subject.none()) == nil)
    }

    @Test func certificationLevelRule() async throws {
        let l1plus = RegistrationPolicy(minimumCertificationLevel: .l1plus)
        let attested = try await subject.packed(anchors: [subject.vendorRoot.certificate])
        #expect(try subject.evaluate(l1plus, attested, metadata: try subject.entry(["FIDO_CERTIFIED_L2"])) == nil)
        #expect(try subject.evaluate(l1plus, attested, metadata: try subject.entry(["FIDO_CERTIFIED_L1plus"])) == nil)
        #expect(
            try subject.evaluate(l1plus, attested, metadata: try subject.entry(["FIDO_CERTIFIED_L1"]))
                == .policyCertificationLevel)
        // Legacy FIDO_CERTIFIED is L1.
        #expect(
            try subject.evaluate(
                RegistrationPolicy(minimumCertificationLevel: .l1), attested,
                metadata: try subject.entry(["FIDO_CERTIFIED"]))
                == nil)
        #expect(
            try subject.evaluate(l1plus, attested, metadata: try subject.entry(["NOT_FIDO_CERTIFIED"]))
                == .policyCertificationLevel)
        #expect(try subject.evaluate(l1plus, attested) == .policyCertificationLevel, "no metadata")
        // Attack: a `none` registration (or an unanchored chain) claiming the AAGUID of a certified model.
        let certified = try subject.entry(["FIDO_CERTIFIED_L3"])
        #expect(
            try subject.evaluate(l1plus, try await subject.none(), metadata: certified) == .policyCertificationLevel)
        #expect(
            try subject.evaluate(l1plus, try await subject.packed(anchors: []), metadata: certified)
                == .policyCertificationLevel)
        let noExtension = try await subject.packed(aaguidExtension: false, anchors: [subject.vendorRoot.certificate])
        #expect(try subject.evaluate(l1plus, noExtension, metadata: certified) == .policyCertificationLevel)
    }

    @Test func backupEligibleRule() async throws {
        var bytes = subject.registration.authenticatorData
        bytes[32] |= 0x08  // BE
        let backupEligible = try AuthenticatorData(bytes: bytes)
        let policy = RegistrationPolicy(refuseBackupEligible: true)
        let result = try await subject.none()
        #expect(try subject.evaluate(policy, result, authenticatorData: backupEligible) == .policyBackupEligible)
        #expect(try subject.evaluate(policy, result) == nil)
        #expect(try subject.evaluate(.acceptAny, result, authenticatorData: backupEligible) == nil)
    }

    @Test func formatSwitchesWidenTheTrustOnly() {
        let base = AttestationTrust(trustAnchors: [])
        let widened = RegistrationPolicy(safetyNet: SafetyNetPolicy(maximumAge: 30), allowSHA1Attestation: true)
            .attestationTrust(from: base)
        #expect(widened.safetyNet == SafetyNetPolicy(maximumAge: 30) && widened.allowSHA1Signatures)
        let untouched = RegistrationPolicy.acceptAny.attestationTrust(
            from: AttestationTrust(trustAnchors: [], allowSHA1Signatures: true, safetyNet: SafetyNetPolicy()))
        #expect(untouched.safetyNet == SafetyNetPolicy() && untouched.allowSHA1Signatures)
        #expect(RegistrationPolicy.acceptAny.attestationTrust(from: base).safetyNet == nil)
    }
}

@Suite struct RegistrationPolicyDocumentTests {
    @Test func fullDocument() throws {
        let json = #"""
            { "formats": ["packed", "tpm"], "attestationTypes": ["basic", "attca", "self", "none"],
              "requireAttestation": true, "allowAAGUIDs": ["cb69481e-8ff7-4039-93ec-0a2729a154a8"],
              "denyAAGUIDs": ["08987058-cadc-4b81-b6e1-30de50dcbe96"], "minimumCertificationLevel": "FIDO_CERTIFIED_L1plus",
              "refuseBackupEligible": true, "refusedStatuses": ["REVOKED"],
              "safetyNet": { "maximumAgeSeconds": 120, "maximumClockSkewSeconds": 5, "requireCTSProfileMatch": false },
              "allowSHA1Attestation": true }
            """#
        let policy = try RegistrationPolicy(json: Array(json.utf8))
        #expect(policy.allowedFormats == ["packed", "tpm"])
        #expect(policy.allowedAttestationTypes == [.basic, .attCA, .self, .none])
        #expect(policy.requireAttestation && policy.refuseBackupEligible && policy.allowSHA1Attestation)
        #expect(policy.allowedAAGUIDs == [AAGUID(uuidString: "cb69481e-8ff7-4039-93ec-0a2729a154a8")!])
        #expect(policy.deniedAAGUIDs == [AAGUID(uuidString: "08987058-cadc-4b81-b6e1-30de50dcbe96")!])
        #expect(policy.minimumCertificationLevel == .l1plus)
        #expect(policy.refusedStatuses == [.revoked])
        #expect(
            policy.safetyNet == SafetyNetPolicy(maximumAge: 120, maximumClockSkew: 5, requireCTSProfileMatch: false))
        #expect(try RegistrationPolicy(json: Array("{}".utf8)) == .acceptAny)
    }

    @Test(arguments: [
        #"[]"#, #"{"requireAttestation": "yes"}"#, #"{"requireAtestation": true}"#,
        #"{"requireAttestation": true, "requireAttestation": false}"#, #"{"allowAAGUIDs": ["not-a-uuid"]}"#,
        #"{"minimumCertificationLevel": "L2"}"#, #"{"attestationTypes": ["basic_full"]}"#, #"{"formats": [""]}"#,
        #"{"refusedStatuses": [""]}"#, #"{"safetyNet": {"maximumAgeSeconds": -1}}"#,
        #"{"safetyNet": {"maximumClockSkewSeconds": 1e9}}"#, #"{"safetyNet": true}"#, "{",
    ])
    func badDocumentsAreRefused(_ json: String) {
        #expect(throws: WebAuthnError(.invalidConfiguration)) { _ = try RegistrationPolicy(json: Array(json.utf8)) }
    }
}
