import AuthenticatorSigning
import CBOR
import Foundation
import SesameBytes
import Synchronization
import WebAuthn

/// A software authenticator together with the WebAuthn client (browser) in front of it.
///
/// Given the options JSON a relying party sends and the calling page's origin, it produces exactly the response
/// JSON a browser would resolve `navigator.credentials.create()` / `.get()` with: the client part checks the origin
/// and RP ID, picks the algorithm, honours `excludeCredentials` / `allowCredentials`, `residentKey` and
/// `userVerification`, and writes client data; the authenticator part keeps keys, counters and flags, and signs.
///
/// Options are parsed here, independently of the `WebAuthn` library's own types, so that a bug in the library's
/// option or response handling cannot be mirrored by the same bug here.
///
/// Credentials live in memory, guarded by a mutex; ``exportCredentials()`` and ``init(configuration:importing:)``
/// move them through JSON (private keys included: this is a test tool).
public final class VirtualAuthenticator: Sendable {
    public let configuration: Configuration
    private let state: Mutex<[StoredCredential]>

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        self.state = Mutex([])
    }

    /// An authenticator holding the credentials of an earlier ``exportCredentials()``.
    public convenience init(configuration: Configuration = .init(), importing json: some Collection<UInt8>)
        throws(VirtualAuthenticatorError)
    {
        let file: StoreFile
        do {
            file = try JSONDecoder().decode(StoreFile.self, from: Data(json))
        } catch {
            throw VirtualAuthenticatorError(
                .invalidStore, detail: "credential store is not valid JSON of the expected shape")
        }
        guard file.format == StoreFile.formatName else {
            throw VirtualAuthenticatorError(
                .invalidStore, detail: "credential store format is not \(StoreFile.formatName)")
        }
        var credentials: [StoredCredential] = []
        for entry in file.credentials { credentials.append(try StoredCredential(entry: entry)) }
        self.init(configuration: configuration)
        state.withLock { $0 = credentials }
    }

    /// The credentials held now, oldest first.
    public var credentials: [StoredCredential] { state.withLock { $0 } }

    /// All credentials as JSON, private keys included.
    public func exportCredentials() -> [UInt8] {
        let file = StoreFile(format: StoreFile.formatName, credentials: credentials.map(\.entry))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(file))) ?? []
    }

    // MARK: - Registration

    /// `navigator.credentials.create({publicKey})` from a page at `origin`, with options in
    /// `PublicKeyCredentialCreationOptionsJSON` form.
    public func create(optionsJSON: some Collection<UInt8>, origin: String, behaviour: Behaviour = .init())
        throws(VirtualAuthenticatorError) -> RegistrationResponse
    {
        try create(options: ClientCreationOptions(json: optionsJSON), origin: origin, behaviour: behaviour)
    }

    /// Registration: the client steps of W3C WebAuthn Level 3 §5.1.3 and the authenticator's
    /// authenticatorMakeCredential (§6.3.2).
    public func create(options: ClientCreationOptions, origin: String, behaviour: Behaviour = .init())
        throws(VirtualAuthenticatorError) -> RegistrationResponse
    {
        try checkConfiguration()
        let caller = try ClientOrigin(origin)
        let rpId = try caller.relyingPartyId(options.rpId)

        guard
            let algorithm = options.algorithms.lazy.compactMap({ Algorithm(rawValue: $0) })
                .first(where: { self.configuration.algorithms.contains($0) })
        else {
            throw VirtualAuthenticatorError(.notSupportedError, detail: "no requested algorithm is supported")
        }
        let verified = try userVerification(options.userVerification, behaviour: behaviour)
        // §6.3.2 step 4: a required discoverable credential the authenticator cannot store is refused (the
        // client reports it as NotAllowedError); "preferred" falls back to a server-side credential.
        if options.residentKey == "required" && !configuration.residentKeys {
            throw VirtualAuthenticatorError(
                .notAllowedError, detail: "a discoverable credential is required but not supported")
        }
        let discoverable = configuration.residentKeys && options.residentKey != "discouraged"

        let key = try CredentialKey.generate(algorithm)
        let credentialId = Self.randomBytes(configuration.credentialIdLength)
        let initialCount: UInt32 = configuration.signCounter ? 1 : 0
        let credential = StoredCredential(
            id: credentialId, rpId: rpId, userHandle: options.userId, userName: options.userName,
            discoverable: discoverable, signCounter: configuration.signCounter, signCount: initialCount,
            backupEligible: configuration.backupEligible, backedUp: configuration.backedUp, key: key)

        // §6.3.2 step 3 (exclude list) and step 7.4 (a new discoverable credential replaces one for the same
        // RP and user), in one critical section so concurrent calls cannot both pass the exclude check.
        try state.withLock { (stored: inout [StoredCredential]) throws(VirtualAuthenticatorError) in
            let excluded = Set(options.excludeCredentials)
            if stored.contains(where: { $0.rpId == rpId && excluded.contains($0.id) }) {
                throw VirtualAuthenticatorError(
                    .invalidStateError, detail: "an excluded credential is on this authenticator")
            }
            if discoverable {
                stored.removeAll { $0.discoverable && $0.rpId == rpId && $0.userHandle == options.userId }
            }
            stored.append(credential)
        }

        // Authenticator data with attested credential data (§6.1, §6.5.1).
        let flags = AuthenticatorOutput.flags(
            userPresent: behaviour.userPresent, userVerified: verified, backupEligible: credential.backupEligible,
            backedUp: credential.backedUp, attestedCredentialData: true)
        let authData =
            AuthenticatorOutput.authenticatorDataPrefix(
                rpId: behaviour.rpIdForHash ?? rpId, flags: flags ^ behaviour.flagsXOR,
                signCount: behaviour.signCount ?? initialCount)
            + AuthenticatorOutput.attestedCredentialData(
                aaguid: configuration.aaguid, credentialId: credentialId, publicKey: key)

        let clientDataJSON = Self.clientData(
            type: behaviour.clientDataType ?? "webauthn.create", challenge: options.challenge,
            origin: behaviour.clientDataOrigin ?? caller.serialized, behaviour: behaviour)

        // Attestation statement (§8.7 none, §8.2 packed self attestation).
        let statement: CBOR
        switch configuration.attestation {
        case .none:
            statement = .map([])
        case .packedSelf:
            var sig = try key.assertionSignature(authenticatorData: authData, clientDataJSON: clientDataJSON)
            Self.apply(behaviour.tamper, signature: &sig)
            statement = .map([
                CBORMapEntry("alg", CBOR(algorithm.rawValue)), CBORMapEntry("sig", .byteString(sig)),
            ])
        }
        var sentAuthData = authData
        var sentClientData = clientDataJSON
        Self.apply(behaviour.tamper, authenticatorData: &sentAuthData, clientDataJSON: &sentClientData)
        let attestationObject = AuthenticatorOutput.attestationObject(
            format: configuration.attestation.rawValue, statement: statement, authenticatorData: sentAuthData)

        return RegistrationResponse(
            credentialId: behaviour.responseCredentialId ?? credentialId, clientDataJSON: sentClientData,
            attestationObject: attestationObject, authenticatorData: sentAuthData,
            transports: configuration.transports.sorted(), publicKeyAlgorithm: algorithm.rawValue,
            publicKey: key.subjectPublicKeyInfo, authenticatorAttachment: configuration.attachment,
            credPropsResidentKey: options.credProps ? discoverable : nil)
    }

    // MARK: - Authentication

    /// `navigator.credentials.get({publicKey})` from a page at `origin`, with options in
    /// `PublicKeyCredentialRequestOptionsJSON` form. With several usable credentials, `credentialId` picks one (the
    /// account chooser); otherwise the first allowed one, or the newest discoverable one.
    public func get(
        optionsJSON: some Collection<UInt8>, origin: String, credentialId: [UInt8]? = nil,
        behaviour: Behaviour = .init()
    ) throws(VirtualAuthenticatorError) -> AuthenticationResponse {
        try get(
            options: ClientRequestOptions(json: optionsJSON), origin: origin, credentialId: credentialId,
            behaviour: behaviour)
    }

    /// Authentication: the client steps of §5.1.4 and the authenticator's authenticatorGetAssertion (§6.3.3).
    public func get(
        options: ClientRequestOptions, origin: String, credentialId chosen: [UInt8]? = nil,
        behaviour: Behaviour = .init()
    ) throws(VirtualAuthenticatorError) -> AuthenticationResponse {
        try checkConfiguration()
        let caller = try ClientOrigin(origin)
        let rpId = try caller.relyingPartyId(options.rpId)
        let verified = try userVerification(options.userVerification, behaviour: behaviour)

        // §6.3.3 steps 5-7: the usable credentials, then one picked; its counter moves in the same section.
        let credential = try state.withLock { (stored: inout [StoredCredential]) throws(VirtualAuthenticatorError) in
            var candidates: [Int]
            if options.allowCredentials.isEmpty {
                candidates = stored.indices.filter { stored[$0].rpId == rpId && stored[$0].discoverable }.reversed()
            } else {
                candidates = options.allowCredentials.compactMap { id in
                    stored.indices.first { stored[$0].rpId == rpId && stored[$0].id == id }
                }
            }
            if let chosen { candidates = candidates.filter { stored[$0].id == chosen } }
            guard let index = candidates.first else {
                throw VirtualAuthenticatorError(
                    .notAllowedError, detail: "no credential on this authenticator is usable")
            }
            if stored[index].signCounter && stored[index].signCount < UInt32.max {
                stored[index].signCount += 1
            }
            return stored[index]
        }

        let flags = AuthenticatorOutput.flags(
            userPresent: behaviour.userPresent, userVerified: verified, backupEligible: credential.backupEligible,
            backedUp: credential.backedUp, attestedCredentialData: false)
        let authData = AuthenticatorOutput.authenticatorDataPrefix(
            rpId: behaviour.rpIdForHash ?? rpId, flags: flags ^ behaviour.flagsXOR,
            signCount: behaviour.signCount ?? credential.signCount)
        let clientDataJSON = Self.clientData(
            type: behaviour.clientDataType ?? "webauthn.get", challenge: options.challenge,
            origin: behaviour.clientDataOrigin ?? caller.serialized, behaviour: behaviour)
        // §6.3.3 step 11: the assertion signature covers authenticatorData || SHA-256(clientDataJSON).
        var signature = try credential.key.assertionSignature(
            authenticatorData: authData, clientDataJSON: clientDataJSON)
        var sentAuthData = authData
        var sentClientData = clientDataJSON
        Self.apply(behaviour.tamper, signature: &signature)
        Self.apply(behaviour.tamper, authenticatorData: &sentAuthData, clientDataJSON: &sentClientData)

        let userHandle: [UInt8]?
        switch behaviour.userHandle {
        case .automatic: userHandle = credential.discoverable ? credential.userHandle : nil
        case .omitted: userHandle = nil
        case .bytes(let b): userHandle = b
        }
        return AuthenticationResponse(
            credentialId: behaviour.responseCredentialId ?? credential.id, clientDataJSON: sentClientData,
            authenticatorData: sentAuthData, signature: signature, userHandle: userHandle,
            authenticatorAttachment: configuration.attachment)
    }

    // MARK: - Pieces

    private func checkConfiguration() throws(VirtualAuthenticatorError) {
        guard configuration.aaguid.count == 16, (16...1023).contains(configuration.credentialIdLength),
            !configuration.algorithms.isEmpty
        else {
            throw VirtualAuthenticatorError(
                .invalidConfiguration, detail: "AAGUID must be 16 bytes, credential IDs 16 to 1023")
        }
    }

    /// §5.1.3 / §5.1.4: `required` with an authenticator that cannot verify is refused; otherwise the user is
    /// verified unless the relying party discouraged it or the authenticator cannot.
    private func userVerification(_ requirement: String, behaviour: Behaviour) throws(VirtualAuthenticatorError) -> Bool
    {
        if requirement == "required" && !configuration.userVerification {
            throw VirtualAuthenticatorError(.notAllowedError, detail: "user verification required but not available")
        }
        return behaviour.userVerified ?? (configuration.userVerification && requirement != "discouraged")
    }

    /// Client data JSON in the member order §5.8.1.1 prescribes: type, challenge, origin, crossOrigin, then
    /// topOrigin when cross-origin.
    static func clientData(type: String, challenge: [UInt8], origin: String, behaviour: Behaviour) -> [UInt8] {
        var challenge = challenge
        if behaviour.tamperChallenge {
            if challenge.isEmpty { challenge = [1] } else { challenge[challenge.count - 1] ^= 0x01 }
        }
        return AuthenticatorOutput.clientDataJSON(
            type: type, challenge: ClientEncoding.base64url(challenge), origin: origin,
            crossOrigin: behaviour.crossOrigin, topOrigin: behaviour.topOrigin)
    }

    private static func apply(_ tamper: [Tamper], signature: inout [UInt8]) {
        for t in tamper {
            if case .signature(let at) = t { flip(&signature, at) }
        }
    }

    private static func apply(_ tamper: [Tamper], authenticatorData: inout [UInt8], clientDataJSON: inout [UInt8]) {
        for t in tamper {
            switch t {
            case .authenticatorData(let at): flip(&authenticatorData, at)
            case .clientDataJSON(let at): flip(&clientDataJSON, at)
            case .signature: break
            }
        }
    }

    private static func flip(_ bytes: inout [UInt8], _ at: Int) {
        guard !bytes.isEmpty else { return }
        let i = ((at % bytes.count) + bytes.count) % bytes.count
        bytes[i] ^= 0x01
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        SecureRandom.bytes(count)
    }
}
