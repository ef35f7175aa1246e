import Foundation
import HTTPTypes
import Hummingbird
import WebAuthn

/// Passkey ceremonies over the WebAuthn library: sign-up, sign-in (with or without a username), and adding a
/// passkey to a signed-in account.
///
/// Challenges are rows keyed by SHA-256 of the challenge, consumed atomically when the response comes back, so a
/// ceremony started on one node finishes on any other, exactly once, before it expires. Each is bound to whoever
/// asked: sign-up and sign-in challenges to a ceremony token (HttpOnly cookie `sesame_ceremony`, or the
/// `Sesame-Ceremony` header for native apps), add-passkey challenges to the session.
struct PasskeyRoutes {
    let sesame: Sesame
    let relyingParty: RelyingParty

    static let ceremonyCookie = "sesame_ceremony"
    static let ceremonyHeader = HTTPField.Name("Sesame-Ceremony")!

    struct RegistrationOptionsRequest: Decodable, Sendable {
        let username: String
        let displayName: String?
    }

    struct AuthenticationOptionsRequest: Decodable, Sendable {
        let username: String?
    }

    struct RegistrationRequest: Decodable, Sendable {
        let credential: RegistrationResponseJSON
        /// Optional name for the passkey (add-passkey only).
        let name: String?
    }

    struct AuthenticationRequest: Decodable, Sendable {
        let credential: AuthenticationResponseJSON
    }

    /// `POST /api/account/passkeys/options` body, optional: `{"kind": "passkey" | "security-key",
    /// "mediation": "conditional"}`. `mediation` says the page will pass the options to a conditional create
    /// (the automatic upgrade after a password sign-in), whose response may come without the UP flag.
    struct AddPasskeyOptionsRequest: Decodable, Sendable {
        let kind: String?
        let mediation: String?
    }

    /// Kept with an add-passkey challenge: the account, and whether the options were for a conditional create.
    struct PendingPasskey: Codable, Sendable {
        let userID: String
        let conditional: Bool
    }

    /// What the add-passkey options ask the browser for. A passkey (the default) is a discoverable credential,
    /// so it can sign in without a username. A security key is asked for a server-side credential
    /// (`residentKey: "discouraged"`, cross-platform, hint `security-key`): keys without resident-key storage
    /// (CTAP2 keys that keep none, U2F keys) can register it, and it signs in after the username is typed.
    enum AddPasskeyKind: Equatable, Sendable {
        case passkey, securityKey

        init(_ body: AddPasskeyOptionsRequest?) throws {
            switch body?.kind {
            case nil, "passkey": self = .passkey
            case "security-key": self = .securityKey
            default: throw APIError.invalidField("kind", "Use \"passkey\" or \"security-key\".")
            }
        }

        var residentKey: ResidentKeyRequirement { self == .passkey ? .required : .discouraged }
        var attachment: AuthenticatorAttachment? { self == .passkey ? nil : .crossPlatform }
        var hints: [PublicKeyCredentialHint] { self == .passkey ? [] : [.securityKey] }
    }

    /// Kept with a sign-up challenge: the account to create when the response verifies.
    struct PendingAccount: Codable, Sendable {
        let username: String
        let displayName: String
        let userHandle: String
    }

    /// Kept with a sign-in challenge: the account named in the options request, if any; whether the options were
    /// asked for with a username (then every failure answers alike, account or not); and, for a name with no
    /// passkey, the decoy descriptors its options listed.
    struct PendingSignIn: Codable, Sendable {
        let userID: String?
        var usernameFirst: Bool? = nil
        var decoys: [Decoy]? = nil

        struct Decoy: Codable, Sendable {
            let id: String
            let transports: [String]
        }
    }

    /// The session method of a passkey ceremony: `passkey` when the authenticator verified the user (two factors:
    /// the device and a PIN or biometric), `passkey-up` when it only tested presence (one factor, like a password).
    static func sessionMethod(userVerified: Bool) -> String { userVerified ? "passkey" : "passkey-up" }

    func register(on router: Router<SesameRequestContext>) {
        router.post("/api/registration/options") { request, context -> Response in
            let body = try await JSONBody.decode(RegistrationOptionsRequest.self, from: request, context: context)
            try await sesame.rateLimiter.countCeremony(address: context.clientAddress)
            guard let username = Usernames.validate(body.username) else {
                throw APIError.invalidField("username", "Use 1 to 64 characters without spaces or control characters.")
            }
            let displayName = try Self.displayName(body.displayName ?? username)
            if try await sesame.store.user(usernameKey: Usernames.key(username)) != nil {
                throw APIError(.conflict, "username_taken", "That username is taken.")
            }
            let handle = Secrets.random(64)
            let options = relyingParty.makeCreationOptions(
                user: PublicKeyCredentialUserEntityJSON(id: handle, name: username, displayName: displayName),
                excludeCredentials: [], residentKey: .required
            )
            let (token, binding) = ceremonyToken(request)
            try await storeChallenge(
                options.challenge.bytes, purpose: "registration", binding: binding, userID: nil,
                payload: PendingAccount(username: username, displayName: displayName, userHandle: Base64URL.encode(handle))
            )
            return try optionsResponse(options, ceremonyToken: token, request: request, context: context)
        }

        router.post("/api/registration") { request, context -> Response in
            let body = try await JSONBody.decode(RegistrationRequest.self, from: request, context: context)
            let (_, binding) = ceremonyToken(request)
            let (challenge, record) = try await consume(body.credential.response.clientDataJSON.bytes, purpose: "registration", binding: binding)
            guard let pending = try? JSONDecoder().decode(PendingAccount.self, from: Data(record.payload.utf8)),
                let handle = try? Base64URL.decode(pending.userHandle)
            else { throw APIError.challengeInvalid }
            let result = try await verifyRegistration(body.credential, challenge: challenge, expires: record.expiresAt, username: pending.username, context: context)

            let user = User(
                id: UUID().uuidString.lowercased(), username: pending.username, displayName: pending.displayName, userHandle: handle,
                disabled: false, createdAt: sesame.now
            )
            do {
                try await sesame.store.createUser(user)
            } catch StoreError.conflict {
                throw APIError(.conflict, "username_taken", "That username is taken.")
            }
            do {
                try await sesame.store.addCredential(stored(result, user: user, name: body.name))
            } catch StoreError.conflict {
                _ = try? await sesame.store.deleteUser(id: user.id)
                throw APIError(.conflict, "credential_exists", "This passkey is already registered.")
            }
            await sesame.audit("sign_up.passkey", "success", user: user, context: context)
            let issued = try await Sessions.issue(
                user: user, method: Self.sessionMethod(userVerified: result.credential.uvInitialized), request: request, sesame: sesame
            )
            return try Sessions.signedIn(issued, user: user, request: request, status: .created).response(from: request, context: context)
        }

        router.post("/api/authentication/options") { request, context -> Response in
            let body = try await JSONBody.decode(AuthenticationOptionsRequest.self, from: request, context: context)
            var allow: [PublicKeyCredentialDescriptorJSON] = []
            var userID: String?
            var decoys: [PendingSignIn.Decoy]?
            if let name = body.username {
                guard name.utf8.count <= 1024 else { throw APIError.invalidField("username", "The username is too long.") }
                let key = Usernames.key(name.trimmingCharacters(in: .whitespacesAndNewlines))
                // The same one query whether or not the account exists (no early return on an unknown name).
                let credentials = try await sesame.store.credentials(usernameKey: key)
                if let first = credentials.first {
                    userID = first.userID
                    allow = credentials.map {
                        PublicKeyCredentialDescriptorJSON(id: $0.id, transports: $0.transports.map(AuthenticatorTransport.init(rawValue:)))
                    }
                } else {
                    // No such account (or no passkey): a stable fake allow list shaped like a real one (FakeCredentials).
                    allow = FakeCredentials(serverSecret: sesame.serverSecret).allowList(key)
                    decoys = allow.map { PendingSignIn.Decoy(id: Base64URL.encode($0.id.bytes), transports: ($0.transports ?? []).map(\.rawValue)) }
                }
            }
            let options = relyingParty.makeRequestOptions(allowCredentials: allow)
            let (token, binding) = ceremonyToken(request)
            // The ceremony count and the challenge together (one statement on PostgreSQL): over the address's budget,
            // nothing is stored.
            try await sesame.rateLimiter.startCeremony(
                address: context.clientAddress, challengeID: Secrets.sha256(options.challenge.bytes), binding: binding,
                try challengeRecord(
                    purpose: "authentication", userID: userID,
                    payload: PendingSignIn(userID: userID, usernameFirst: body.username != nil, decoys: decoys)
                )
            )
            return try optionsResponse(options, ceremonyToken: token, request: request, context: context)
        }

        router.post("/api/authentication") { request, context -> Response in
            let body = try await JSONBody.decode(AuthenticationRequest.self, from: request, context: context)
            let credential = body.credential
            let (_, binding) = ceremonyToken(request)
            let (challenge, record) = try await consume(credential.response.clientDataJSON.bytes, purpose: "authentication", binding: binding)
            let pending = try? JSONDecoder().decode(PendingSignIn.self, from: Data(record.payload.utf8))
            let found = try await sesame.store.credentialWithUser(id: credential.rawId.bytes)

            let stored: StoredCredential, user: User
            // Username-first: the options listed the account's passkeys, or decoys for a name without any. Every
            // failure then gets the same answer, `authentication_failed` without the step (which is audited), so a
            // response cannot tell an account from a decoy list; a decoy is still checked against a decoy key, so
            // both do the same work. Discoverable sign-in names the failed step: it reveals nothing about accounts.
            let usernameFirst = pending?.usernameFirst == true || record.userID != nil
            func failed(_ code: WebAuthnError.Code) -> APIError { usernameFirst ? Self.passkeyCheckFailed : Self.authenticationFailed(code) }
            if usernameFirst {
                guard let (candidate, account) = found, let owner = account, let expected = record.userID, owner.id == expected else {
                    throw await refusalOutsideAccount(credential, challenge: challenge, record: record, decoys: pending?.decoys ?? [], context: context)
                }
                stored = candidate
                user = owner
            } else {
                // Discoverable sign-in: an unknown credential is answered as such, so the page can tell the
                // credential manager (Signal API); the response names no account, so this reveals nothing.
                guard let (candidate, account) = found else {
                    await sesame.audit("sign_in.passkey", "failure", user: nil, context: context, detail: "unknown_credential")
                    var error = APIError(.notFound, "unknown_credential", "This passkey is not registered here; the page can signal it as unknown.")
                    error.extra = ["credentialId": Base64URL.encode(credential.rawId.bytes), "rpId": sesame.configuration.rpID]
                    throw error
                }
                guard let owner = account else { throw APIError.challengeInvalid }
                stored = candidate
                user = owner
            }
            let allowed = record.userID == nil ? [] : try await sesame.store.credentials(userID: user.id).map(\.id)
            let expectation = AuthenticationExpectation(
                challenge: challenge, credential: Self.record(stored), userHandle: user.userHandle, allowCredentials: allowed,
                userVerification: relyingParty.configuration.userVerification, expires: record.expiresAt
            )
            let result: AuthenticationResult
            do {
                result = try relyingParty.verifyAuthentication(response: credential, expected: expectation, now: sesame.now)
            } catch let error as WebAuthnError {
                await sesame.audit("sign_in.passkey", "failure", user: user, context: context, detail: "\(error.code)")
                throw failed(error.code)
            }
            guard !user.disabled else {
                await sesame.audit("sign_in.passkey", "refused", user: user, context: context, detail: "account_disabled")
                throw APIError.accountDisabled
            }
            // The sign count, the audit event and the session in one statement, all or nothing, and only while the
            // stored count is below the reported one (the challenge was consumed on its own above, so it stays used
            // whatever happens). Of two assertions carrying one counter, sent together, one gets a session.
            let issued = Sessions.prepare(user: user, method: Self.sessionMethod(userVerified: result.flags.contains(.userVerified)), request: request, sesame: sesame)
            let event = sesame.auditEvent("sign_in.passkey", "success", user: user, context: context)
            guard
                try await sesame.store.recordPasskeySignIn(
                    credentialID: stored.id, signCount: result.reportedSignCount, backedUp: result.backupState, at: issued.record.createdAt,
                    audit: event, sessionTokenHash: issued.tokenHash, session: issued.record
                )
            else {
                await sesame.audit("sign_in.passkey", "failure", user: user, context: context, detail: "\(WebAuthnError.Code.signCountRegression)")
                throw failed(.signCountRegression)
            }
            sesame.metrics.auditEvent(kind: event.kind, outcome: event.outcome)
            return try Sessions.signedIn(issued, user: user, request: request).response(from: request, context: context)
        }

        router.post("/api/account/passkeys/options") { request, context -> Response in
            // Adding a way in is sensitive; the finish step is bound to this options request (session, expiry).
            let auth = try context.requireRecentAuthentication(sesame)
            let body = try await JSONBody.decodeIfPresent(AddPasskeyOptionsRequest.self, from: request, context: context)
            let kind = try AddPasskeyKind(body)
            // Conditional create saves a passkey in the browser's credential manager without a prompt; a security
            // key is never made that way.
            let conditional: Bool
            switch body?.mediation {
            case nil: conditional = false
            case "conditional" where kind == .passkey: conditional = true
            default: throw APIError.invalidField("mediation", "Leave mediation out, or use \"conditional\" for a passkey.")
            }
            let user = auth.user
            let existing = try await sesame.store.credentials(userID: user.id)
            let options = relyingParty.makeCreationOptions(
                user: PublicKeyCredentialUserEntityJSON(id: user.userHandle, name: user.username, displayName: user.displayName),
                excludeCredentials: existing.map {
                    PublicKeyCredentialDescriptorJSON(id: $0.id, transports: $0.transports.map(AuthenticatorTransport.init(rawValue:)))
                },
                residentKey: kind.residentKey, authenticatorAttachment: kind.attachment, hints: kind.hints
            )
            try await storeChallenge(
                options.challenge.bytes, purpose: "add_passkey", binding: sessionBinding(auth), userID: user.id, payload: PendingPasskey(userID: user.id, conditional: conditional)
            )
            return try optionsResponse(options, ceremonyToken: nil, request: request, context: context)
        }

        router.post("/api/account/passkeys") { request, context -> JSONResponse<PasskeyManagementRoutes.PasskeyBody> in
            let auth = try context.requireAuthentication()
            let body = try await JSONBody.decode(RegistrationRequest.self, from: request, context: context)
            let (challenge, record) = try await consume(body.credential.response.clientDataJSON.bytes, purpose: "add_passkey", binding: sessionBinding(auth))
            guard record.userID == auth.user.id,
                let pending = try? JSONDecoder().decode(PendingPasskey.self, from: Data(record.payload.utf8)), pending.userID == auth.user.id
            else { throw APIError.challengeInvalid }
            // Only a challenge issued for a conditional create may come back without user presence (WebAuthn L3
            // §7.1 step 15); every other one must have the UP flag.
            let result = try await verifyRegistration(
                body.credential, challenge: challenge, expires: record.expiresAt, username: auth.user.username,
                mediation: pending.conditional ? .conditional : nil, context: context
            )
            let credential = try stored(result, user: auth.user, name: body.name)
            do {
                try await sesame.store.addCredential(credential)
            } catch StoreError.conflict {
                throw APIError(.conflict, "credential_exists", "This passkey is already registered.")
            }
            await sesame.audit("passkey.added", "success", user: auth.user, context: context)
            return JSONResponse(PasskeyManagementRoutes.PasskeyBody(credential, providers: sesame.providers), status: .created)
        }
    }

    // MARK: Helpers

    /// The answer to a passkey check that failed at `code`'s step.
    static func authenticationFailed(_ code: WebAuthnError.Code) -> APIError {
        APIError(.badRequest, "authentication_failed", "Passkey check failed: \(code).")
    }

    /// The answer to any failed username-first passkey check: the same whatever the step and whatever the name.
    static let passkeyCheckFailed = APIError(.badRequest, "authentication_failed", "Passkey check failed.")

    /// A username-first assertion whose credential is not one of the named account's: always fails, with the answer
    /// every username-first failure gets. A decoy the options listed is verified against its decoy record first (the
    /// same steps and one signature check, as for a real passkey); the step that failed is audited.
    private func refusalOutsideAccount(
        _ credential: AuthenticationResponseJSON, challenge: [UInt8], record: ChallengeRecord, decoys: [PendingSignIn.Decoy],
        context: SesameRequestContext
    ) async -> APIError {
        let id = Base64URL.encode(credential.rawId.bytes)
        if record.userID == nil, let decoy = decoys.first(where: { $0.id == id }) {
            let fake = FakeCredentials(serverSecret: sesame.serverSecret)
            let expectation = AuthenticationExpectation(
                challenge: challenge,
                credential: fake.decoyRecord(id: credential.rawId.bytes, transports: decoy.transports.map(AuthenticatorTransport.init(rawValue:))),
                userHandle: Secrets.hmac(key: sesame.serverSecret, Array("decoy user handle".utf8)),
                allowCredentials: decoys.compactMap { try? Base64URL.decode($0.id) },
                userVerification: relyingParty.configuration.userVerification, expires: record.expiresAt
            )
            do {
                _ = try relyingParty.verifyAuthentication(response: credential, expected: expectation, now: sesame.now)
            } catch {
                await sesame.audit("sign_in.passkey", "failure", user: nil, context: context, detail: "\(error.code)")
                return Self.passkeyCheckFailed
            }
        }
        await sesame.audit("sign_in.passkey", "failure", user: nil, context: context, detail: "\(WebAuthnError.Code.credentialNotAllowed)")
        return Self.passkeyCheckFailed
    }

    /// A display name as sign-up and `PATCH /api/account` accept it: trimmed, 1 to 64 characters, no controls.
    static func displayName(_ raw: String) throws -> String {
        guard let name = shownName(raw) else { throw APIError.invalidField("display_name", "Use 1 to 64 characters.") }
        return name
    }

    /// A name people see (display name, passkey name): trimmed, 1 to 64 characters, no control characters; nil
    /// when it breaks a rule.
    static func shownName(_ raw: String) -> String? {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return nil
        }
        return name
    }

    /// The client's ceremony token (cookie or header) if it sent a well-formed one, else a new one; and its hash,
    /// which binds challenges.
    private func ceremonyToken(_ request: Request) -> (token: String, binding: [UInt8]) {
        let sent = request.headers[Self.ceremonyHeader] ?? request.cookies[Sessions.secureName(Self.ceremonyCookie, sesame.configuration)]?.value
        if let sent, Sessions.isWellFormed(sent) { return (sent, Secrets.sha256(sent)) }
        let (token, hash) = Secrets.token()
        return (token, hash)
    }

    func sessionBinding(_ auth: Authentication) -> [UInt8] {
        Secrets.sha256(Array("session:".utf8) + auth.tokenHash)
    }

    func storeChallenge(_ challenge: [UInt8], purpose: String, binding: [UInt8], userID: String?, payload: some Encodable) async throws {
        try await sesame.store.insertChallenge(
            id: Secrets.sha256(challenge), binding: binding, try challengeRecord(purpose: purpose, userID: userID, payload: payload)
        )
    }

    /// The stored form of a new challenge: its purpose, account, payload (JSON) and expiry.
    func challengeRecord(purpose: String, userID: String?, payload: some Encodable) throws -> ChallengeRecord {
        ChallengeRecord(
            purpose: purpose, userID: userID, payload: String(decoding: try JSONEncoder().encode(payload), as: UTF8.self),
            expiresAt: sesame.now.addingTimeInterval(TimeInterval(sesame.configuration.challengeTimeout))
        )
    }

    /// Finds the challenge the client data names and consumes it: unknown, expired, used, or bound to someone
    /// else all give the same `challenge_invalid`.
    func consume(_ clientDataJSON: [UInt8], purpose: String, binding: [UInt8]) async throws -> ([UInt8], ChallengeRecord) {
        guard let clientData = try? CollectedClientData(bytes: clientDataJSON),
            let challenge = try? Base64URL.decode(clientData.challenge), (16...64).contains(challenge.count)
        else { throw APIError(.badRequest, "invalid_client_data", "clientDataJSON is not valid client data.") }
        guard let record = try await sesame.store.consumeChallenge(id: Secrets.sha256(challenge), purpose: purpose, binding: binding, now: sesame.now)
        else { throw APIError.challengeInvalid }
        return (challenge, record)
    }

    private func verifyRegistration(
        _ response: RegistrationResponseJSON, challenge: [UInt8], expires: Date, username: String,
        mediation: CredentialMediationRequirement? = nil, context: SesameRequestContext
    ) async throws -> RegistrationResult {
        let expectation = RegistrationExpectation(
            challenge: challenge, userVerification: relyingParty.configuration.userVerification, mediation: mediation,
            allowedAlgorithms: relyingParty.configuration.algorithms, expires: expires
        )
        do {
            return try await relyingParty.verifyRegistration(response: response, expected: expectation, now: sesame.now)
        } catch {
            await sesame.audit("passkey.registration", "failure", user: nil, username: username, context: context, detail: "\(error.code)")
            throw APIError(.badRequest, "registration_failed", "Passkey check failed: \(error.code).")
        }
    }

    private func stored(_ result: RegistrationResult, user: User, name: String?) throws -> StoredCredential {
        let record = result.credential
        let aaguid = record.aaguid?.bytes
        let provider = aaguid.flatMap(ProviderNames.uuidString).flatMap { ProviderNames.provider(for: $0, in: sesame.providers)?.name }
        let chosen = try name.map(Self.displayName) ?? provider ?? "Passkey"
        return StoredCredential(
            id: record.id, userID: user.id, publicKey: record.publicKey, signCount: record.signCount,
            transports: record.transports.map(\.rawValue), aaguid: aaguid, backupEligible: record.backupEligible,
            backedUp: record.backupState, userVerified: record.uvInitialized, attestationFormat: record.attestationFormat,
            name: chosen, createdAt: sesame.now, lastUsedAt: nil
        )
    }

    static func record(_ c: StoredCredential) -> CredentialRecord {
        CredentialRecord(
            id: c.id, publicKey: c.publicKey, signCount: c.signCount, transports: c.transports.map(AuthenticatorTransport.init(rawValue:)),
            backupEligible: c.backupEligible, backupState: c.backedUp, uvInitialized: c.userVerified,
            aaguid: c.aaguid.flatMap { AAGUID(bytes: $0) }, attestationFormat: c.attestationFormat
        )
    }

    /// Options JSON as the page passes it to `PublicKeyCredential.parse…OptionsFromJSON`, plus the ceremony token
    /// (cookie for pages, header for apps).
    private func optionsResponse(
        _ options: some Encodable & Sendable, ceremonyToken: String?, request: Request, context: SesameRequestContext
    ) throws -> Response {
        var headers: HTTPFields = [:]
        if let ceremonyToken {
            headers[Self.ceremonyHeader] = ceremonyToken
            var cookie = ["\(Sessions.secureName(Self.ceremonyCookie, sesame.configuration))=\(ceremonyToken)", "Path=/api", "Max-Age=\(sesame.configuration.challengeTimeout)", "HttpOnly", "SameSite=Strict"]
            if sesame.configuration.isSecureOrigin { cookie.append("Secure") }
            headers[.setCookie] = cookie.joined(separator: "; ")
        }
        return try JSONResponse(options, headers: headers).response(from: request, context: context)
    }
}
