import AuthenticatorSigning
import Foundation
import WebAuthn

/// What a registration produced: the JSON a browser would resolve `navigator.credentials.create()` with, and the
/// new passkey item (already added to the vault; ``Keychain/save()`` writes it).
public struct PasskeyRegistration: Sendable {
    public let responseJSON: [UInt8]
    public let item: KeychainItem
}

/// A creation request the keychain would answer: what ``Keychain/checkCreation(optionsJSON:origin:suffixes:preferredAlgorithm:)``
/// found, and what ``Keychain/createPasskey(optionsJSON:origin:suffixes:preferredAlgorithm:)`` goes on with.
public struct CheckedCreation: Sendable {
    let origin: WebOrigin
    let options: PublicKeyCredentialCreationOptionsJSON
    /// The RP ID the passkey will be scoped to, after the check against the origin.
    public let rpId: String
    let algorithm: PasskeyAlgorithm
    let userVerified: Bool
    let userHandle: [UInt8]
    let samePasskeys: [(KeychainItem, Passkey)]
    /// The account name the relying party gave (`user.name`), for the prompt.
    public var userName: String { String(options.user.name.prefix(256)) }
}

/// What an authentication produced: the `navigator.credentials.get()` JSON and the passkey used.
public struct PasskeyAssertion: Sendable {
    public let responseJSON: [UInt8]
    public let item: KeychainItem
    public let userVerified: Bool
}

extension Keychain {
    /// Registration: the client steps of W3C WebAuthn Level 3 §5.1.3 and the authenticator's
    /// authenticatorMakeCredential (§6.3.2), for a page at `origin`.
    ///
    /// The keychain makes discoverable, synced passkeys: flags UP, BE and BS always, UV when the vault was
    /// unlocked recently (``userVerified``); attestation "none" with the keychain's AAGUID; sign count 0 forever.
    /// ES256 unless the relying party does not offer it or `preferredAlgorithm` asks for EdDSA.
    public func createPasskey(
        optionsJSON: [UInt8], origin originText: String, suffixes: PublicSuffixList,
        preferredAlgorithm: PasskeyAlgorithm? = nil
    ) throws(KeychainError) -> PasskeyRegistration {
        let checked = try checkCreation(
            optionsJSON: optionsJSON, origin: originText, suffixes: suffixes, preferredAlgorithm: preferredAlgorithm)
        let (origin, options, rpId, algorithm, verified, userHandle, passkeys) = (
            checked.origin, checked.options, checked.rpId, checked.algorithm, checked.userVerified,
            checked.userHandle, checked.samePasskeys
        )

        let key = CredentialKey.generate(algorithm)
        let credentialId = SecureRandom.bytes(32)
        // Every new passkey gets its HMAC secrets, asked for or not, so a site can start using `prf` later.
        let hmacSecret = Passkey.HMACSecret.generate()
        let passkey = Passkey(
            rpId: rpId, credentialId: credentialId, userHandle: userHandle,
            userName: String(options.user.name.prefix(256)), displayName: String(options.user.displayName.prefix(256)),
            algorithm: algorithm, privateKey: key.rawPrivateKey, hmacSecret: hmacSecret)
        // `prf` at registration (§10.1.4): enabled, and evaluated at once when `eval` is given and the person was
        // verified (the PRF is the user-verified one; without verification the site asks again at sign-in).
        var uvFlag = verified
        var prf: PRFExtension.Outputs?
        if let inputs = options.extensions?.prf {
            prf = PRFExtension.Outputs(enabled: true)
            if let eval = inputs.eval, userVerified {
                uvFlag = true
                prf?.results = PRFExtension.evaluate(secret: hmacSecret.withUV, eval)
            }
        }
        // §6.3.2 step 7.4: a new discoverable credential replaces one for the same RP ID and user handle.
        for (old, p) in passkeys where p.userHandle == userHandle { try delete(old.id) }
        let item = try add(.passkey(passkey))

        // Authenticator data with attested credential data (§6.1, §6.5.1).
        let authData =
            Self.authenticatorDataPrefix(rpId: rpId, userVerified: uvFlag, attested: true)
            + AuthenticatorOutput.attestedCredentialData(
                aaguid: KeychainProvider.aaguid, credentialId: credentialId, publicKey: key)
        let clientData = Self.clientDataJSON(
            type: "webauthn.create", challenge: options.challenge.bytes, origin: origin)
        // §8.7 "none" attestation: fmt "none", empty attStmt.
        let attestationObject = AuthenticatorOutput.attestationObject(format: "none", authenticatorData: authData)

        let response = RegistrationResponseJSON(
            id: Base64URL.encode(credentialId), rawId: credentialId,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: clientData, attestationObject: attestationObject, authenticatorData: authData,
                transports: [.internal, .hybrid], publicKey: key.subjectPublicKeyInfo,
                publicKeyAlgorithm: COSEAlgorithm(algorithm.rawValue)),
            authenticatorAttachment: .platform,
            clientExtensionResults: AuthenticationExtensionsClientOutputsJSON(
                credProps: options.extensions?.credProps == true ? .init(rk: true) : nil, prf: prf,
                largeBlob: LargeBlobExtension.creationOutput(options.extensions?.largeBlob)))
        return PasskeyRegistration(responseJSON: try Self.encode(response), item: item)
    }

    /// Authentication: §5.1.4 and authenticatorGetAssertion (§6.3.3). With several usable passkeys, `credentialId`
    /// or `userName` picks one; without either, the request is `ambiguousCredential` (a browser would show an
    /// account chooser). The passkey's "last used" time is updated (``Keychain/save()`` writes it).
    public func signIn(
        optionsJSON: [UInt8], origin originText: String, suffixes: PublicSuffixList,
        credentialId chosen: [UInt8]? = nil,
        userName: String? = nil
    ) throws(KeychainError) -> PasskeyAssertion {
        let origin = try WebOrigin(originText)
        let options = try PasskeyOptions.request(optionsJSON)
        let rpId = try origin.relyingPartyId(options.rpId, suffixes: suffixes)
        guard !options.challenge.bytes.isEmpty else { throw KeychainError(.invalidOptions, reason: "empty challenge") }
        try PRFExtension.checkRequest(options.extensions?.prf, allowCredentials: options.allowCredentials)
        try LargeBlobExtension.checkRequest(options.extensions?.largeBlob, allowCredentials: options.allowCredentials)
        var verified = try userVerification(options.userVerification?.rawValue ?? "preferred")

        // §6.3.3 steps 5-7: the usable passkeys, in allowCredentials order when there is a list.
        var candidates = Self.candidates(in: items, rpId: rpId, allowCredentials: options.allowCredentials)
        if let chosen { candidates = candidates.filter { $0.1.credentialId == chosen } }
        if let userName { candidates = candidates.filter { $0.1.userName == userName } }
        guard let (item, passkey) = candidates.first else {
            throw KeychainError(.noCredential, reason: "no passkey in the keychain can answer this request")
        }
        guard candidates.count == 1 else {
            throw KeychainError(.ambiguousCredential, reason: "\(candidates.count) passkeys can answer; choose one")
        }

        // `prf` (§10.1.4): an empty output when the passkey has no HMAC secret (made before the keychain answered
        // `prf`) or no input applies; else the PRF's values, which need the person verified, whatever the site asked.
        var prf: PRFExtension.Outputs?
        if let inputs = options.extensions?.prf {
            prf = PRFExtension.Outputs()
            if let secret = passkey.hmacSecret, let values = PRFExtension.inputs(for: passkey.credentialId, in: inputs)
            {
                verified = try userVerification("required")
                prf?.results = PRFExtension.evaluate(secret: secret.withUV, values)
            }
        }

        let key = try CredentialKey(algorithm: passkey.algorithm, privateKey: passkey.privateKey)
        let authData = Self.authenticatorDataPrefix(rpId: rpId, userVerified: verified, attested: false)
        let clientData = Self.clientDataJSON(type: "webauthn.get", challenge: options.challenge.bytes, origin: origin)
        // §6.3.3 step 11: the signature covers authenticatorData || SHA-256(clientDataJSON).
        let signature = try key.assertionSignature(authenticatorData: authData, clientDataJSON: clientData)

        // `largeBlob` (§10.1.5): read from the passkey item, or written into it (saved and synced with it).
        let (largeBlob, written) = LargeBlobExtension.authenticate(options.extensions?.largeBlob, passkey: passkey)

        var used = item
        var updated = written ?? passkey
        updated.lastUsed = ItemTime.truncate(clock.now)
        used.content = .passkey(updated)
        try update(used)

        let response = AuthenticationResponseJSON(
            id: Base64URL.encode(passkey.credentialId), rawId: passkey.credentialId,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: clientData, authenticatorData: authData, signature: signature,
                userHandle: passkey.userHandle),
            authenticatorAttachment: .platform,
            clientExtensionResults: AuthenticationExtensionsClientOutputsJSON(prf: prf, largeBlob: largeBlob))
        return PasskeyAssertion(
            responseJSON: try Self.encode(response), item: self.item(id: item.id) ?? used, userVerified: verified)
    }

    /// Everything ``createPasskey(optionsJSON:origin:suffixes:preferredAlgorithm:)`` checks before it makes a key,
    /// without making one: the extension asks this before it shows its "save a passkey" prompt, so a request the
    /// keychain would refuse (an RP ID that is not a registrable suffix of the origin, an excluded credential) is
    /// refused before the person is asked anything.
    public func checkCreation(
        optionsJSON: [UInt8], origin originText: String, suffixes: PublicSuffixList,
        preferredAlgorithm: PasskeyAlgorithm? = nil
    ) throws(KeychainError) -> CheckedCreation {
        let origin = try WebOrigin(originText)
        let options = try PasskeyOptions.creation(optionsJSON)
        // §5.1.3 step 8: the RP ID against the origin.
        let rpId = try origin.relyingPartyId(options.rp.id, suffixes: suffixes)
        // §5.1.3 step 10: an empty list means ES256 and RS256.
        let offered =
            options.pubKeyCredParams.isEmpty
            ? [-7, -257]
            : options.pubKeyCredParams.filter { $0.type == PublicKeyCredentialType.publicKey }.map(\.alg.rawValue)
        let algorithm = try Self.chooseAlgorithm(offered: offered, preferred: preferredAlgorithm)
        let userHandle = options.user.id.bytes
        guard (1...64).contains(userHandle.count) else {
            throw KeychainError(.invalidOptions, reason: "user.id must be 1 to 64 bytes")
        }
        guard !options.challenge.bytes.isEmpty else { throw KeychainError(.invalidOptions, reason: "empty challenge") }
        try PRFExtension.checkCreation(options.extensions?.prf)
        try LargeBlobExtension.checkCreation(options.extensions?.largeBlob)
        let uvRequirement = options.authenticatorSelection?.userVerification?.rawValue ?? "preferred"
        let verified = try userVerification(uvRequirement)

        // §6.3.2 step 3: a credential in excludeCredentials already here is InvalidStateError.
        let excluded = Set(
            (options.excludeCredentials ?? []).filter { $0.type == PublicKeyCredentialType.publicKey }.map(\.id.bytes))
        let passkeys = items.compactMap { item -> (KeychainItem, Passkey)? in
            if case .passkey(let p) = item.content, p.rpId == rpId { return (item, p) }
            return nil
        }
        if passkeys.contains(where: { excluded.contains($0.1.credentialId) }) {
            throw KeychainError(
                .credentialExcluded, reason: "a passkey in excludeCredentials is already in the keychain")
        }
        return CheckedCreation(
            origin: origin, options: options, rpId: rpId, algorithm: algorithm, userVerified: verified,
            userHandle: userHandle, samePasskeys: passkeys)
    }

    /// The passkeys an authentication request from `origin` could use (§6.3.3 steps 5-7), in allowCredentials
    /// order when the request has a list; after the RP ID check, so a request never sees another site's passkeys.
    /// The extension shows these in its account chooser; the page itself only ever gets the one picked.
    public func passkeyCandidates(
        optionsJSON: [UInt8], origin originText: String, suffixes: PublicSuffixList
    ) throws(KeychainError) -> (rpId: String, candidates: [KeychainItem]) {
        let origin = try WebOrigin(originText)
        let options = try PasskeyOptions.request(optionsJSON)
        let rpId = try origin.relyingPartyId(options.rpId, suffixes: suffixes)
        // Extension inputs are checked before the person is asked anything, as a browser checks them.
        try PRFExtension.checkRequest(options.extensions?.prf, allowCredentials: options.allowCredentials)
        try LargeBlobExtension.checkRequest(options.extensions?.largeBlob, allowCredentials: options.allowCredentials)
        return (rpId, Self.candidates(in: items, rpId: rpId, allowCredentials: options.allowCredentials).map(\.0))
    }

    static func candidates(
        in items: [KeychainItem], rpId: String, allowCredentials: [PublicKeyCredentialDescriptorJSON]?
    ) -> [(KeychainItem, Passkey)] {
        let allowed = (allowCredentials ?? []).filter { $0.type == PublicKeyCredentialType.publicKey }.map(\.id.bytes)
        // Passkeys the site left out of its accepted list are not offered (§5.1.10.2), listed or not.
        let mine: [(KeychainItem, Passkey)] = items.compactMap { item in
            if case .passkey(let p) = item.content, p.rpId == rpId, !p.hidden { return (item, p) }
            return nil
        }
        if allowed.isEmpty { return mine }
        return allowed.compactMap { id in mine.first { $0.1.credentialId == id } }
    }

    // MARK: Pieces

    static func chooseAlgorithm(offered: [Int], preferred: PasskeyAlgorithm?) throws(KeychainError) -> PasskeyAlgorithm
    {
        if let preferred {
            guard offered.contains(preferred.rawValue) else {
                throw KeychainError(.algorithmNotSupported, reason: "the relying party does not accept \(preferred)")
            }
            return preferred
        }
        if offered.contains(PasskeyAlgorithm.es256.rawValue) { return .es256 }
        if offered.contains(PasskeyAlgorithm.edDSA.rawValue) { return .edDSA }
        throw KeychainError(.algorithmNotSupported, reason: "the relying party accepts neither ES256 nor EdDSA")
    }

    /// §5.1.3 / §5.1.4: "required" without a recent unlock is refused; otherwise UV is reported when the vault
    /// was unlocked recently, unless the relying party discouraged it.
    func userVerification(_ requirement: String) throws(KeychainError) -> Bool {
        if requirement == "required" && !userVerified {
            throw KeychainError(
                .userVerificationRequired, reason: "user verification is required: unlock the vault with the passphrase"
            )
        }
        return userVerified && requirement != "discouraged"
    }

    /// `rpIdHash (32) || flags (1) || signCount (4) = 0`. Flags: UP, UV when verified, BE and BS (a synced
    /// passkey), AT with attested credential data.
    static func authenticatorDataPrefix(rpId: String, userVerified: Bool, attested: Bool) -> [UInt8] {
        let flags = AuthenticatorOutput.flags(
            userPresent: true, userVerified: userVerified, backupEligible: true, backedUp: true,
            attestedCredentialData: attested)
        return AuthenticatorOutput.authenticatorDataPrefix(rpId: rpId, flags: flags, signCount: 0)
    }

    /// Client data JSON (§5.8.1.1): never cross-origin, since the keychain answers the page itself.
    static func clientDataJSON(type: String, challenge: [UInt8], origin: WebOrigin) -> [UInt8] {
        AuthenticatorOutput.clientDataJSON(
            type: type, challenge: Base64URL.encode(challenge), origin: origin.description)
    }

    static func encode(_ value: some Encodable) throws(KeychainError) -> [UInt8] {
        try BrowserJSON.encoded(value, failure: KeychainError(.cryptoFailure, reason: "encoding the response failed"))
    }
}
