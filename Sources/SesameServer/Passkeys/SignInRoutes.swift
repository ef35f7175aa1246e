import Foundation
import Hummingbird
import WebAuthn

/// Passkey sign-in: `POST /api/authentication/options {username?}` → request options bound to the ceremony token
/// (with a username: the account's passkeys, or stable decoys for a name without any); `POST /api/authentication
/// {credential}` verifies the assertion and signs in.
///
/// Username-first sign-in answers every failure alike (`authentication_failed`, "Passkey check failed.", the step
/// audited), so a response cannot tell an account from a decoy list; a decoy is checked against a decoy key so both
/// paths do one signature check. Discoverable sign-in names the failed step and answers an unknown credential with
/// `404 unknown_credential` (for the Signal API): it names no account, so it reveals nothing.
struct SignInRoutes {
    let sesame: Sesame

    struct OptionsRequest: Decodable, Sendable {
        let username: String?
    }

    struct FinishRequest: Decodable, Sendable {
        let credential: AuthenticationResponseJSON
    }

    /// Kept with a sign-in challenge: the account named in the options request, if any; whether the options were
    /// asked for with a username; and, for a name with no passkey, the decoy descriptors its options listed.
    struct PendingSignIn: Codable, Sendable {
        let userID: String?
        var usernameFirst: Bool? = nil
        var decoys: [Decoy]? = nil

        struct Decoy: Codable, Sendable {
            let id: String
            let transports: [String]
        }
    }

    /// The answer to any failed username-first passkey check: the same whatever the step and whatever the name.
    static let passkeyCheckFailed = APIError(.badRequest, .authenticationFailed, "Passkey check failed.")

    /// The answer to a discoverable passkey check that failed at `code`'s step.
    static func authenticationFailed(_ code: WebAuthnError.Code) -> APIError {
        APIError(.badRequest, .authenticationFailed, "Passkey check failed: \(code).")
    }

    func register(on router: Router<SesameRequestContext>) {
        router.post("/api/authentication/options") { request, context in
            let body = try await request.decode(as: OptionsRequest.self, context: context)
            var allow: [PublicKeyCredentialDescriptorJSON] = []
            var userID: String?
            var decoys: [PendingSignIn.Decoy]?
            if let name = body.username {
                guard name.utf8.count <= 1024 else {
                    throw APIError.invalidField(.invalidUsername, "The username is too long.")
                }
                let key = Usernames.key(name.trimmingCharacters(in: .whitespacesAndNewlines))
                // The same one query whether or not the account exists (no early return on an unknown name).
                let credentials = try await sesame.store.credentials(usernameKey: key)
                if let first = credentials.first {
                    userID = first.userID
                    allow = PasskeyVerifier.descriptors(credentials)
                } else {
                    // No such account (or no passkey): a stable decoy list shaped like a real one (FakeCredentials).
                    allow = FakeCredentials(serverSecret: sesame.serverSecret).allowList(key)
                    decoys = allow.map {
                        PendingSignIn.Decoy(
                            id: Base64URL.encode($0.id.bytes), transports: ($0.transports ?? []).map(\.rawValue))
                    }
                }
            }
            let options = sesame.passkeys.relyingParty.makeRequestOptions(allowCredentials: allow)
            let (token, binding) = sesame.ceremonies.ceremonyToken(request)
            // The ceremony count and the challenge together (one statement on PostgreSQL): over the address's budget,
            // nothing is stored.
            try await sesame.ceremonies.begin(
                .authentication, challenge: options.challenge.bytes, binding: binding, userID: userID,
                payload: PendingSignIn(userID: userID, usernameFirst: body.username != nil, decoys: decoys),
                countedFor: context.clientAddress
            )
            return sesame.ceremonies.options(options, ceremonyToken: token)
        }

        router.post("/api/authentication") { request, context in
            let credential = try await request.decode(as: FinishRequest.self, context: context).credential
            let (_, binding) = sesame.ceremonies.ceremonyToken(request)
            // Consumed first and on its own: a failed assertion uses its challenge up.
            let (challenge, record) = try await sesame.ceremonies.finish(
                .authentication, clientDataJSON: credential.response.clientDataJSON.bytes, binding: binding
            )
            let pending = try? sesame.ceremonies.payload(record, as: PendingSignIn.self)
            let found = try await sesame.store.credentialWithUser(id: credential.rawId.bytes)
            let usernameFirst = pending?.usernameFirst == true || record.userID != nil
            func failed(_ code: WebAuthnError.Code) -> APIError {
                usernameFirst ? Self.passkeyCheckFailed : Self.authenticationFailed(code)
            }

            let stored: StoredCredential, user: User
            if usernameFirst {
                guard let (candidate, account) = found, let owner = account, let expected = record.userID,
                    owner.id == expected
                else {
                    throw await refusalOutsideAccount(
                        credential, challenge: challenge, record: record, decoys: pending?.decoys ?? [],
                        context: context)
                }
                stored = candidate
                user = owner
            } else {
                guard let (candidate, account) = found else {
                    await sesame.audit.record(
                        .signInPasskey, .failure, user: nil, context: context,
                        detail: APIErrorCode.unknownCredential.rawValue)
                    var error = APIError(
                        .notFound, .unknownCredential,
                        "This passkey is not registered here; the page can signal it as unknown.")
                    error.extra = [
                        "credentialId": Base64URL.encode(credential.rawId.bytes), "rpId": sesame.configuration.rpID,
                    ]
                    throw error
                }
                guard let owner = account else { throw APIError.challengeInvalid }
                stored = candidate
                user = owner
            }
            let allowed = record.userID == nil ? [] : try await sesame.store.credentials(userID: user.id).map(\.id)
            let result: AuthenticationResult
            do {
                result = try sesame.passkeys.verifyAssertion(
                    credential, credential: PasskeyVerifier.record(stored), userHandle: user.userHandle,
                    challenge: challenge,
                    allowCredentials: allowed, expires: record.expiresAt
                )
            } catch let error as WebAuthnError {
                await sesame.audit.record(
                    .signInPasskey, .failure, user: user, context: context, detail: "\(error.code)")
                throw failed(error.code)
            }
            guard !user.disabled else {
                await sesame.audit.record(
                    .signInPasskey, .refused, user: user, context: context,
                    detail: APIErrorCode.accountDisabled.rawValue)
                throw APIError.accountDisabled
            }
            // The sign count, the audit event and the session in one statement, all or nothing, and only while the
            // stored count is below the reported one. Of two assertions carrying one counter, one gets a session.
            let issued = sesame.sessions.prepare(
                user: user, method: .passkey(userVerified: result.flags.contains(.userVerified)),
                passkeyBackupEligible: result.flags.contains(.backupEligible), request: request)
            let event = sesame.audit.event(.signInPasskey, .success, user: user, clientAddress: context.clientAddress)
            guard
                try await sesame.store.recordPasskeySignIn(
                    credentialID: stored.id, signCount: result.reportedSignCount, backedUp: result.backupState,
                    at: issued.record.createdAt,
                    audit: event, sessionTokenHash: issued.tokenHash, session: issued.record
                )
            else {
                await sesame.audit.record(
                    .signInPasskey, .failure, user: user, context: context,
                    detail: "\(WebAuthnError.Code.signCountRegression)")
                throw failed(.signCountRegression)
            }
            sesame.audit.counted(event)
            return sesame.sessions.signedIn(issued, user: user, request: request)
        }
    }

    /// A username-first assertion whose credential is not one of the named account's: it always fails, with the
    /// answer every username-first failure gets. A decoy the options listed is verified against its decoy record
    /// first (the same steps and one signature check, as for a real passkey); the step that failed is audited.
    private func refusalOutsideAccount(
        _ credential: AuthenticationResponseJSON, challenge: [UInt8], record: ChallengeRecord,
        decoys: [PendingSignIn.Decoy],
        context: SesameRequestContext
    ) async -> APIError {
        var code = WebAuthnError.Code.credentialNotAllowed
        let id = Base64URL.encode(credential.rawId.bytes)
        if record.userID == nil, let decoy = decoys.first(where: { $0.id == id }) {
            let fake = FakeCredentials(serverSecret: sesame.serverSecret)
            do {
                _ = try sesame.passkeys.verifyAssertion(
                    credential,
                    credential: fake.decoyRecord(
                        id: credential.rawId.bytes,
                        transports: decoy.transports.map(AuthenticatorTransport.init(rawValue:))),
                    userHandle: Secrets.hmac(key: sesame.serverSecret, Array("decoy user handle".utf8)),
                    challenge: challenge,
                    allowCredentials: decoys.compactMap { try? Base64URL.decode($0.id) }, expires: record.expiresAt
                )
            } catch {
                code = error.code
            }
        }
        await sesame.audit.record(.signInPasskey, .failure, user: nil, context: context, detail: "\(code)")
        return Self.passkeyCheckFailed
    }
}
