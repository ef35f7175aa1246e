import Foundation
import SesameBytes

/// What a relying party is and which policies its ceremonies apply. A value: build it once at start-up.
public struct RelyingPartyConfiguration: Sendable {
    /// The RP ID: the origins' host or a parent domain of it, e.g. `example.org` (checked when the configuration
    /// is made; Android app origins are not checked).
    public var id: String
    /// Human-palatable name shown by some authenticators.
    public var name: String
    /// Origins accepted in client data. See ``AllowedOrigins`` for the matching rules.
    public var origins: AllowedOrigins
    /// Whether ceremonies from cross-origin iframes are accepted. Default: rejected.
    public var crossOrigin: CrossOriginPolicy = .reject
    /// The user verification requirement put in options (and so enforced by the expectations built from them).
    public var userVerification: UserVerificationRequirement = .preferred
    /// What to do when an authenticator's signature counter did not increase.
    public var signCount: SignCountPolicy = .reject
    /// Credential algorithms offered in `pubKeyCredParams`, most preferred first.
    public var algorithms: [COSEAlgorithm] = RelyingPartyConfiguration.defaultAlgorithms
    /// Attestation conveyance requested in creation options.
    public var attestation: AttestationConveyancePreference = .none
    /// Attestation statement formats requested, most preferred first (empty = no preference).
    public var attestationFormats: [String] = []
    /// Trust anchors and verification time for attestation certificate chains.
    public var attestationTrust: AttestationTrust
    /// The attestation statement formats understood.
    public var attestationRegistry: AttestationFormatRegistry = .standard
    /// Attestation types accepted at registration; nil accepts every type the registry verifies.
    public var acceptedAttestationTypes: Set<AttestationType>? = nil
    /// Which authenticators are admitted once the attestation is verified: metadata status reports, attestation
    /// required, AAGUID allow- and deny-lists, certification level, backup eligibility. FIDO metadata itself goes
    /// in ``AttestationTrust/metadata`` (``attestationTrust``).
    public var registrationPolicy: RegistrationPolicy = .acceptAny
    /// Accept credentials and attestation signatures using RSASSA-PKCS1-v1_5 with SHA-1 (COSE -65535). Off by
    /// default. On, it also sets ``AttestationTrust/allowSHA1Signatures`` for registrations: Windows Hello `tpm`
    /// statements are signed with RS1.
    public var allowRS1: Bool = false
    /// The `timeout` put in options, in milliseconds.
    public var timeoutMilliseconds: UInt32 = 300_000
    /// Length of generated challenges in bytes (at least 16).
    public var challengeLength: Int = 32

    /// The default `pubKeyCredParams`, in order of preference:
    /// - EdDSA (-8, Ed25519): deterministic signatures, no nonce to get wrong;
    /// - ES256 (-7, P-256): what nearly every authenticator supports;
    /// - RS256 (-257): Windows Hello and older TPM-backed platform authenticators.
    /// This is the list W3C WebAuthn Level 3 suggests in its examples; other algorithms the library verifies
    /// (ES384, ES512, PS256…) can be added by setting ``algorithms``.
    public static let defaultAlgorithms: [COSEAlgorithm] = [.edDSA, .es256, .rs256]

    /// The post-quantum credential algorithms the library verifies: ML-DSA-65 (-49) and ML-DSA-87 (-50), FIPS 204
    /// with RFC 9964 AKP keys. They are never offered unless a relying party opts in by adding them to
    /// ``algorithms`` (e.g. `algorithms = RelyingPartyConfiguration.postQuantumAlgorithms + defaultAlgorithms`):
    /// few authenticators make such keys yet, and their public keys (2–2.6 kB) and signatures (3.3–4.6 kB) are
    /// large. ML-DSA-44 (-48) is not available (see ``COSEAlgorithm/mldsa44``).
    public static let postQuantumAlgorithms: [COSEAlgorithm] = [.mldsa65, .mldsa87]

    public init(id: String, name: String, origins: [String]) throws(WebAuthnError) {
        guard !id.isEmpty, !id.contains("/"), !id.contains(":") else {
            throw WebAuthnError(.invalidConfiguration, detail: "RP ID must be a domain name")
        }
        self.id = id
        self.name = name
        self.origins = try AllowedOrigins(origins)
        self.attestationTrust = AttestationTrust(trustAnchors: [])
        // A browser only uses an RP ID that is the page's host or a parent domain of it (§5.1.3 step 8, §5.1.4):
        // an origin outside the RP ID could never produce a valid response, so it is a configuration mistake.
        let rpId = id.lowercased()
        for host in self.origins.webHosts where host != rpId && !host.hasSuffix("." + rpId) {
            throw WebAuthnError(
                .invalidConfiguration, detail: "origin host \(host) is not the RP ID \(id) or a subdomain of it")
        }
    }
}

/// What verification does when an authenticator's signature counter did not grow (§6.1.1): a signal that the
/// credential private key may have been cloned. When both the stored and the new counter are 0, the
/// authenticator has no counter and nothing is reported.
public enum SignCountPolicy: Sendable, Hashable {
    /// Fail authentication with ``WebAuthnError/Code/signCountRegression``.
    case reject
    /// Succeed, with ``AuthenticationResult/cloneWarning`` set, so the caller can apply its own risk policy.
    case reportCloneWarning
}

/// Builds ceremony options and verifies ceremony responses for one relying party.
///
/// ```swift
/// let rp = RelyingParty(configuration: config)
/// let options = rp.makeCreationOptions(user: user)   // send to the page; keep options.challenge server-side
/// let result = try await rp.verifyRegistration(response: response,
///                                        expected: RegistrationExpectation(options: options), now: Date())
/// ```
public struct RelyingParty: Sendable {
    public let configuration: RelyingPartyConfiguration

    public init(configuration: RelyingPartyConfiguration) {
        self.configuration = configuration
    }

    /// A new random challenge from the system CSPRNG, `configuration.challengeLength` bytes (at least 16).
    public func makeChallenge() -> [UInt8] {
        SecureRandom.bytes(max(16, configuration.challengeLength))
    }

    /// A new user handle for an account: 32 random bytes from the system CSPRNG. A user handle identifies the
    /// account to authenticators and must not contain personal data (§14.6.1); WebAuthn allows at most 64 bytes.
    public func makeUserHandle() -> [UInt8] {
        SecureRandom.bytes(32)
    }

    /// Options for `navigator.credentials.create()`, with a fresh challenge. Store the returned options (or at
    /// least their challenge) with the user's session: verification needs them.
    ///
    /// `user.id` is the user handle: random bytes (at most 64) that identify the account and nothing else.
    public func makeCreationOptions(
        user: PublicKeyCredentialUserEntityJSON,
        excludeCredentials: [PublicKeyCredentialDescriptorJSON] = [],
        residentKey: ResidentKeyRequirement = .preferred,
        authenticatorAttachment: AuthenticatorAttachment? = nil,
        hints: [PublicKeyCredentialHint] = [],
        extensions: AuthenticationExtensionsClientInputsJSON? = AuthenticationExtensionsClientInputsJSON(
            credProps: true)
    ) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: PublicKeyCredentialRpEntity(id: configuration.id, name: configuration.name),
            user: user,
            challenge: makeChallenge(),
            pubKeyCredParams: configuration.algorithms.map(PublicKeyCredentialParameters.init(alg:)),
            timeout: configuration.timeoutMilliseconds,
            excludeCredentials: excludeCredentials,
            authenticatorSelection: AuthenticatorSelectionCriteria(
                authenticatorAttachment: authenticatorAttachment, residentKey: residentKey,
                userVerification: configuration.userVerification),
            hints: hints,
            attestation: configuration.attestation,
            attestationFormats: configuration.attestationFormats,
            extensions: extensions
        )
    }

    /// Options for `navigator.credentials.get()`, with a fresh challenge. An empty `allowCredentials` asks for a
    /// discoverable credential (the user is identified by the response's user handle).
    public func makeRequestOptions(
        allowCredentials: [PublicKeyCredentialDescriptorJSON] = [],
        userVerification: UserVerificationRequirement? = nil,
        hints: [PublicKeyCredentialHint] = [],
        extensions: AuthenticationExtensionsClientInputsJSON? = nil
    ) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: makeChallenge(),
            timeout: configuration.timeoutMilliseconds,
            rpId: configuration.id,
            allowCredentials: allowCredentials,
            userVerification: userVerification ?? configuration.userVerification,
            hints: hints,
            extensions: extensions
        )
    }
}

extension WebAuthnError {
    /// The same error, labelled with the ceremony step in which it happened.
    func at(_ step: String) -> WebAuthnError {
        WebAuthnError(code, step: step, detail: detail, file: file, line: line)
    }
}
