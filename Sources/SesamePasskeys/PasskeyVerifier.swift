import Foundation
import WebAuthn
import SesameCore
import SesameMetadata

/// The passkey rules every feature shares: verifying a registration or an assertion with the WebAuthn library (and
/// auditing a failure), turning a verified registration into a stored credential, and a stored credential into what
/// the library and the options need.
package struct PasskeyVerifier: Sendable {
    package let relyingParty: RelyingParty
    package let store: any Store
    package let audit: AuditLog
    package let clock: ServerClock
    package let providers: AuthenticatorProviders
    /// The imported FIDO metadata, consulted at every registration (anchors, status reports, the policy).
    package let metadata: MetadataService

    package init(
        relyingParty: RelyingParty, store: any Store, audit: AuditLog, clock: ServerClock,
        providers: AuthenticatorProviders, metadata: MetadataService
    ) {
        self.relyingParty = relyingParty
        self.store = store
        self.audit = audit
        self.clock = clock
        self.providers = providers
        self.metadata = metadata
    }

    /// Verifies a registration response (W3C WebAuthn L3 §7.1) for a challenge that expires at `expires`; a
    /// challenge issued for a conditional create (`mediation`) may come back without user presence (step 15).
    package func verifyRegistration(
        _ response: RegistrationResponseJSON, challenge: [UInt8], expires: Date, username: String,
        mediation: CredentialMediationRequirement? = nil, context: some ClientContext
    ) async throws -> RegistrationResult {
        let expectation = RegistrationExpectation(
            challenge: challenge, userVerification: relyingParty.configuration.userVerification, mediation: mediation,
            allowedAlgorithms: relyingParty.configuration.algorithms, expires: expires
        )
        var verifier = relyingParty
        if let index = await metadata.current() {
            var configuration = relyingParty.configuration
            configuration.attestationTrust.metadata = index
            verifier = RelyingParty(configuration: configuration)
        }
        do {
            return try await verifier.verifyRegistration(
                response: response, expected: expectation, now: clock.now())
        } catch {
            await audit.record(
                .passkeyRegistration, .failure, user: nil, username: username, context: context, detail: "\(error.code)"
            )
            throw APIError(.badRequest, .registrationFailed, "Passkey check failed: \(error.code).")
        }
    }

    /// Verifies an assertion (§7.2) against a stored credential of `user`; `allowCredentials` are the IDs the options
    /// listed (empty for discoverable sign-in). A failure is audited as `kind` and rethrown as the library's error.
    package func verifyAssertion(
        _ response: AuthenticationResponseJSON, credential: CredentialRecord, userHandle: [UInt8], challenge: [UInt8],
        allowCredentials: [[UInt8]], expires: Date
    ) throws(WebAuthnError) -> AuthenticationResult {
        let expectation = AuthenticationExpectation(
            challenge: challenge, credential: credential, userHandle: userHandle, allowCredentials: allowCredentials,
            userVerification: relyingParty.configuration.userVerification, expires: expires
        )
        return try relyingParty.verifyAuthentication(response: response, expected: expectation, now: clock.now())
    }

    /// The stored form of a verified registration; its name is the one given, else the provider's (the provider list,
    /// then the metadata statement's description), else "Passkey".
    package func storedCredential(_ result: RegistrationResult, user: User, name: String?) throws -> StoredCredential {
        let record = result.credential
        let aaguid = record.aaguid?.bytes
        let provider = aaguid.flatMap(ProviderNames.uuidString).flatMap {
            ProviderNames.provider(for: $0, in: providers)?.name
        }
        let chosen = try name.map(ShownNames.passkeyName) ?? provider ?? result.metadata?.name ?? "Passkey"
        return StoredCredential(
            id: record.id, userID: user.id, publicKey: record.publicKey, signCount: record.signCount,
            transports: record.transports.map(\.rawValue), aaguid: aaguid, backupEligible: record.backupEligible,
            backedUp: record.backupState, userVerified: record.uvInitialized,
            attestationFormat: record.attestationFormat,
            name: chosen, createdAt: clock.now(), lastUsedAt: nil
        )
    }

    /// What the WebAuthn library checks an assertion against.
    package static func record(_ c: StoredCredential) -> CredentialRecord {
        CredentialRecord(
            id: c.id, publicKey: c.publicKey, signCount: c.signCount,
            transports: c.transports.map(AuthenticatorTransport.init(rawValue:)),
            backupEligible: c.backupEligible, backupState: c.backedUp, uvInitialized: c.userVerified,
            aaguid: c.aaguid.flatMap { AAGUID(bytes: $0) }, attestationFormat: c.attestationFormat
        )
    }

    /// The descriptors options list for stored credentials (`allowCredentials`, `excludeCredentials`).
    package static func descriptors(_ credentials: [StoredCredential]) -> [PublicKeyCredentialDescriptorJSON] {
        credentials.map {
            PublicKeyCredentialDescriptorJSON(
                id: $0.id, transports: $0.transports.map(AuthenticatorTransport.init(rawValue:)))
        }
    }
}

/// Names people see (display names, passkey names): trimmed, 1 to 64 characters, no control characters.
package enum ShownNames {
    /// The name, or nil when it breaks a rule.
    package static func check(_ raw: String) -> String? {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(name.count),
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            return nil
        }
        return name
    }

    /// A display name as sign-up and `PATCH /api/account` accept it.
    package static func displayName(_ raw: String) throws -> String {
        guard let name = check(raw) else { throw APIError.invalidField(.invalidDisplayName, "Use 1 to 64 characters.") }
        return name
    }

    /// A passkey's name as adding and renaming accept it.
    package static func passkeyName(_ raw: String) throws -> String {
        guard let name = check(raw) else {
            throw APIError.invalidField(.invalidName, "Give a name of 1 to 64 characters.")
        }
        return name
    }
}
