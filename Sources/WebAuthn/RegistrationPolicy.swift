import Foundation
import X509

/// Which authenticators a relying party admits at registration (W3C WebAuthn §7.1 step 24: "assess the
/// attestation trustworthiness"). The default, ``acceptAny``, admits every format and attestation type the registry
/// verifies and refuses only authenticators whose FIDO metadata reports an undesired status.
///
/// Two switches widen what the format verifiers accept, and are applied to the ``AttestationTrust`` before the
/// statement is verified (``attestationTrust(from:)``): ``safetyNet`` enables the deprecated `android-safetynet`
/// format with its freshness and integrity rules, and ``allowSHA1Attestation`` accepts RS1 attestation signatures
/// and SHA-1 TPM names (every Windows Hello `tpm` statement is RS1).
///
/// The other rules are checked once the statement has been verified, in this order; a refusal's code names the rule
/// (and its step, `7.1 step 24: policy <member>`):
///
/// | rule | refuses when | code |
/// |---|---|---|
/// | ``allowedFormats`` | `fmt` (or, for `compound`, a sub-statement's) is not listed | `policyFormatNotAllowed` |
/// | ``allowedAttestationTypes`` | the attestation type (or a sub-statement's) is not listed; list `none` and `self` to admit them | `attestationTypeNotAllowed` |
/// | ``refusedStatuses`` | the model's metadata has a status report in the set (by default REVOKED, USER_VERIFICATION_BYPASS, ATTESTATION_KEY_COMPROMISE, USER_KEY_REMOTE_COMPROMISE, USER_KEY_PHYSICAL_COMPROMISE) | `metadataStatusRefused` |
/// | ``requireAttestation`` | the attestation did not chain to a trust anchor (`none`, `self`, or no anchor applied) | `policyAttestationRequired` |
/// | ``allowedAAGUIDs`` | the AAGUID is not listed, or is not attested (see below) | `policyAAGUIDNotAllowed` |
/// | ``deniedAAGUIDs`` | the AAGUID is listed | `policyAAGUIDDenied` |
/// | ``minimumCertificationLevel`` | the AAGUID is not attested, the model has no metadata, or its highest certification is lower | `policyCertificationLevel` |
/// | ``refuseBackupEligible`` | the credential is backup eligible (BE, a synced passkey) | `policyBackupEligible` |
///
/// **Attested AAGUID.** The AAGUID in authenticator data is the authenticator's word; a chain to *some* anchor does
/// not make it true (a vendor root shared by many models, or a global anchor, would vouch for any AAGUID the device
/// claims). An AAGUID counts as attested only when the chain was verified and either ends at one of the roots of
/// that AAGUID's own metadata statement, or the verified attestation certificate carries the id-fido-gen-ce-aaguid
/// extension with that AAGUID. Allow-lists and certification levels need an attested AAGUID; deny-lists and status
/// reports do not (refusing on the client's word only refuses more).
///
/// As a JSON document (``init(json:)``; `sesame verify registration --policy FILE`):
/// ```json
/// { "formats": ["packed", "tpm", "android-key", "apple", "fido-u2f", "none"],
///   "attestationTypes": ["basic", "attca", "anonca", "self", "none"],
///   "requireAttestation": true,
///   "allowAAGUIDs": ["cb69481e-8ff7-4039-93ec-0a2729a154a8"],
///   "denyAAGUIDs": [],
///   "minimumCertificationLevel": "FIDO_CERTIFIED_L1",
///   "refuseBackupEligible": false,
///   "refusedStatuses": ["REVOKED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE",
///                       "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE"],
///   "safetyNet": { "maximumAgeSeconds": 60, "requireCTSProfileMatch": true },
///   "allowSHA1Attestation": true }
/// ```
/// Every member is optional (`{}` is ``acceptAny``); an unknown member is an error, so a misspelt rule is never
/// silently ignored.
public struct RegistrationPolicy: Sendable, Hashable {
    /// Attestation statement formats admitted; nil admits every format the registry verifies.
    public var allowedFormats: Set<String>?
    /// Attestation types admitted; nil admits every type.
    public var allowedAttestationTypes: Set<AttestationType>?
    /// Status reports that refuse a model (only when its metadata is known).
    public var refusedStatuses: Set<AuthenticatorStatus>
    public var requireAttestation: Bool
    /// nil: no allow-list.
    public var allowedAAGUIDs: Set<AAGUID>?
    public var deniedAAGUIDs: Set<AAGUID>
    public var minimumCertificationLevel: CertificationLevel?
    public var refuseBackupEligible: Bool
    /// Enables `android-safetynet` with these rules (sets ``AttestationTrust/safetyNet``); nil leaves the trust's
    /// setting, which by default refuses the format.
    public var safetyNet: SafetyNetPolicy?
    /// Accept SHA-1 in attestation statements (sets ``AttestationTrust/allowSHA1Signatures``); false leaves the
    /// trust's setting, which by default refuses it.
    public var allowSHA1Attestation: Bool

    public init(
        allowedFormats: Set<String>? = nil, allowedAttestationTypes: Set<AttestationType>? = nil,
        refusedStatuses: Set<AuthenticatorStatus> = AuthenticatorStatus.undesired, requireAttestation: Bool = false,
        allowedAAGUIDs: Set<AAGUID>? = nil, deniedAAGUIDs: Set<AAGUID> = [],
        minimumCertificationLevel: CertificationLevel? = nil, refuseBackupEligible: Bool = false,
        safetyNet: SafetyNetPolicy? = nil, allowSHA1Attestation: Bool = false
    ) {
        self.allowedFormats = allowedFormats
        self.allowedAttestationTypes = allowedAttestationTypes
        self.refusedStatuses = refusedStatuses
        self.requireAttestation = requireAttestation
        self.allowedAAGUIDs = allowedAAGUIDs
        self.deniedAAGUIDs = deniedAAGUIDs
        self.minimumCertificationLevel = minimumCertificationLevel
        self.refuseBackupEligible = refuseBackupEligible
        self.safetyNet = safetyNet
        self.allowSHA1Attestation = allowSHA1Attestation
    }

    /// Admits every authenticator whose metadata, if known, has no undesired status.
    public static let acceptAny = RegistrationPolicy()

    /// `base` with this policy's format switches applied (SafetyNet, SHA-1); used before the statement is verified.
    public func attestationTrust(from base: AttestationTrust) -> AttestationTrust {
        var trust = base
        if let safetyNet { trust.safetyNet = safetyNet }
        if allowSHA1Attestation { trust.allowSHA1Signatures = true }
        return trust
    }

    /// Checks a verified registration.
    ///
    /// - Parameters:
    ///   - metadata: the entry for the model, when the relying party has metadata and the model is in it.
    ///   - metadataRoots: the roots that entry's statement lists (``MetadataIndex/attestationRoots(aaguid:attestationCertificate:)``).
    public func evaluate(
        attestation: AttestationResult, authenticatorData: AuthenticatorData, metadata: MetadataEntry?,
        metadataRoots: [Certificate] = []
    ) throws(WebAuthnError) {
        let aaguid = authenticatorData.attestedCredentialData?.aaguid ?? .zero
        let results = [attestation] + attestation.components
        if let allowed = allowedFormats, let refused = results.first(where: { !allowed.contains($0.format) }) {
            let name =
                AttestationFormatRegistry.registeredFormats.contains(refused.format)
                ? refused.format : "an unregistered format"
            throw WebAuthnError(
                .policyFormatNotAllowed, step: "policy formats", detail: "attestation format \(name) is not admitted")
        }
        if let allowed = allowedAttestationTypes, let refused = results.first(where: { !allowed.contains($0.type) }) {
            throw WebAuthnError(
                .attestationTypeNotAllowed, step: "policy attestationTypes",
                detail: "attestation type \(refused.type.rawValue) is not admitted")
        }
        if let metadata, let report = metadata.reports(in: refusedStatuses).first {
            throw WebAuthnError(
                .metadataStatusRefused, step: "policy refusedStatuses",
                detail: "the authenticator's metadata reports \(report.status.rawValue)")
        }
        if requireAttestation, !attestation.chainVerified {
            throw WebAuthnError(
                .policyAttestationRequired, step: "policy requireAttestation",
                detail: "a \(attestation.type.rawValue) attestation that does not chain to a trust anchor")
        }
        let attested = Self.aaguidIsAttested(aaguid, attestation: attestation, metadataRoots: metadataRoots)
        if let allowed = allowedAAGUIDs {
            guard attested else {
                throw WebAuthnError(
                    .policyAAGUIDNotAllowed, step: "policy allowAAGUIDs",
                    detail:
                        "an allow-list needs an attested AAGUID (a chain to the model's metadata roots, or an AAGUID certificate extension)"
                )
            }
            guard allowed.contains(aaguid) else {
                throw WebAuthnError(
                    .policyAAGUIDNotAllowed, step: "policy allowAAGUIDs",
                    detail: "AAGUID \(aaguid) is not on the allow-list")
            }
        }
        if deniedAAGUIDs.contains(aaguid) {
            throw WebAuthnError(
                .policyAAGUIDDenied, step: "policy denyAAGUIDs", detail: "AAGUID \(aaguid) is on the deny-list")
        }
        if let minimum = minimumCertificationLevel {
            guard let metadata else {
                throw WebAuthnError(
                    .policyCertificationLevel, step: "policy minimumCertificationLevel",
                    detail: "the authenticator has no metadata statement")
            }
            guard attested else {
                throw WebAuthnError(
                    .policyCertificationLevel, step: "policy minimumCertificationLevel",
                    detail:
                        "a certification level needs an attested AAGUID (a chain to the model's metadata roots, or an AAGUID certificate extension)"
                )
            }
            guard let level = metadata.certificationLevel, level >= minimum else {
                throw WebAuthnError(
                    .policyCertificationLevel, step: "policy minimumCertificationLevel",
                    detail:
                        "certified \(metadata.certificationLevel?.description ?? "at no level"), \(minimum) required")
            }
        }
        if refuseBackupEligible, authenticatorData.flags.contains(.backupEligible) {
            throw WebAuthnError(
                .policyBackupEligible, step: "policy refuseBackupEligible", detail: "the credential is backup eligible")
        }
    }

    /// Whether the attestation vouches for `aaguid` itself (see the type's documentation). U2F models (zero AAGUID)
    /// are attested through their key identifier: a chain to the roots of the statement found by it.
    static func aaguidIsAttested(_ aaguid: AAGUID, attestation: AttestationResult, metadataRoots: [Certificate]) -> Bool
    {
        guard attestation.chainVerified, let anchor = attestation.trustAnchor else { return false }
        if metadataRoots.contains(anchor) { return true }
        guard aaguid != .zero, let leaf = attestation.verifiedChain.first,
            let ext = try? AttestationExtensions.aaguid(in: leaf, step: "")
        else { return false }
        return ext.value == aaguid.bytes
    }

    /// Reads the JSON document described above. Errors are `.invalidConfiguration` naming the member.
    public init(json: [UInt8]) throws(WebAuthnError) {
        struct SafetyNet: Decodable {
            let maximumAgeSeconds: Double?
            let maximumClockSkewSeconds: Double?
            let requireCTSProfileMatch: Bool?
        }
        struct Document: Decodable {
            let formats: [String]?
            let attestationTypes: [String]?
            let safetyNet: SafetyNet?
            let allowSHA1Attestation: Bool?
            let requireAttestation: Bool?
            let allowAAGUIDs: [String]?
            let denyAAGUIDs: [String]?
            let minimumCertificationLevel: String?
            let refuseBackupEligible: Bool?
            let refusedStatuses: [String]?
        }
        let known: Set<String> = [
            "formats", "attestationTypes", "safetyNet", "allowSHA1Attestation", "requireAttestation", "allowAAGUIDs",
            "denyAAGUIDs", "minimumCertificationLevel", "refuseBackupEligible",
            "refusedStatuses",
        ]
        guard let names = JSONMemberNames.topLevel(json) else {
            throw WebAuthnError(.invalidConfiguration, detail: "the policy is not a JSON object")
        }
        var seen: Set<String> = []
        for raw in names {
            let name = String(decoding: raw, as: UTF8.self)
            guard known.contains(name) else {
                throw WebAuthnError(.invalidConfiguration, detail: "the policy has an unknown member \(name)")
            }
            guard seen.insert(name).inserted else {
                throw WebAuthnError(.invalidConfiguration, detail: "the policy repeats member \(name)")
            }
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(json))
        } catch let DecodingError.typeMismatch(_, context) {
            throw WebAuthnError(
                .invalidConfiguration, detail: "policy member \(Self.member(context)) has the wrong type")
        } catch {
            throw WebAuthnError(
                .invalidConfiguration, detail: "the policy is not a JSON object of the documented members")
        }
        func aaguids(_ list: [String]?, _ name: String) throws(WebAuthnError) -> Set<AAGUID>? {
            guard let list else { return nil }
            var set: Set<AAGUID> = []
            for text in list {
                guard let aaguid = AAGUID(uuidString: text) else {
                    throw WebAuthnError(.invalidConfiguration, detail: "policy member \(name) has a malformed AAGUID")
                }
                set.insert(aaguid)
            }
            return set
        }
        self.init()
        requireAttestation = document.requireAttestation ?? false
        refuseBackupEligible = document.refuseBackupEligible ?? false
        allowedAAGUIDs = try aaguids(document.allowAAGUIDs, "allowAAGUIDs")
        deniedAAGUIDs = try aaguids(document.denyAAGUIDs, "denyAAGUIDs") ?? []
        if let text = document.minimumCertificationLevel {
            guard let level = CertificationLevel(status: text) else {
                throw WebAuthnError(
                    .invalidConfiguration,
                    detail: "policy member minimumCertificationLevel must be FIDO_CERTIFIED_L1 … FIDO_CERTIFIED_L3plus")
            }
            minimumCertificationLevel = level
        }
        if let formats = document.formats {
            guard formats.allSatisfy({ !$0.isEmpty }) else {
                throw WebAuthnError(.invalidConfiguration, detail: "policy member formats has an empty name")
            }
            allowedFormats = Set(formats)
        }
        if let types = document.attestationTypes {
            var set: Set<AttestationType> = []
            for name in types {
                guard let type = AttestationType(rawValue: name) else {
                    throw WebAuthnError(
                        .invalidConfiguration,
                        detail: "policy member attestationTypes takes none, self, basic, attca and anonca")
                }
                set.insert(type)
            }
            allowedAttestationTypes = set
        }
        if let options = document.safetyNet {
            var policy = SafetyNetPolicy()
            if let age = options.maximumAgeSeconds {
                guard age.isFinite, age > 0, age <= 86_400 * 366 else {
                    throw WebAuthnError(
                        .invalidConfiguration, detail: "policy member safetyNet.maximumAgeSeconds must be positive")
                }
                policy.maximumAge = age
            }
            if let skew = options.maximumClockSkewSeconds {
                guard skew.isFinite, skew >= 0, skew <= 3600 else {
                    throw WebAuthnError(
                        .invalidConfiguration, detail: "policy member safetyNet.maximumClockSkewSeconds must be 0…3600")
                }
                policy.maximumClockSkew = skew
            }
            if let cts = options.requireCTSProfileMatch { policy.requireCTSProfileMatch = cts }
            safetyNet = policy
        }
        allowSHA1Attestation = document.allowSHA1Attestation ?? false
        if let list = document.refusedStatuses {
            guard list.allSatisfy({ !$0.isEmpty }) else {
                throw WebAuthnError(.invalidConfiguration, detail: "policy member refusedStatuses has an empty name")
            }
            refusedStatuses = Set(list.map(AuthenticatorStatus.init(rawValue:)))
        }
    }

    private static func member(_ context: DecodingError.Context) -> String {
        context.codingPath.first?.stringValue ?? "?"
    }
}
