import Foundation
import Hummingbird
import WebAuthn
import SesameCore

/// Passkey sign-in: `POST /api/authentication/options {username?}` → request options bound to the ceremony token
/// (with a username: the account's passkeys, or stable decoys for a name without any); `POST /api/authentication
/// {credential}` verifies the assertion and signs in.
///
/// Username-first sign-in answers every failure alike (`authentication_failed`, "Passkey check failed.", the step
/// audited), so a response cannot tell an account from a decoy list; a decoy is checked against a decoy key so both
/// paths do one signature check. Discoverable sign-in names the failed step and answers an unknown credential with
/// `404 unknown_credential` (for the Signal API): it names no account, so it reveals nothing.
///
/// The challenge is sealed (`SealedSignInChallenge`: the options step writes nothing, and the verify step spends
/// it in the sign-in statement, or on its own when the check fails) or stored (a row written with the options and
/// consumed before the check), as `ServerConfiguration.signInChallenges` says; the verify step finishes both.
package struct SignInRoutes {
    package let sesame: ServerCore
    package let store: any PasskeyStorage
    package let passkeyVerifier: PasskeyVerifier

    package init(sesame: ServerCore, store: any PasskeyStorage, passkeyVerifier: PasskeyVerifier) {
        self.sesame = sesame
        self.store = store
        self.passkeyVerifier = passkeyVerifier
    }

    package struct OptionsRequest: FastPathDecodable, Sendable {
        package let username: String?

        package init?(fastPath value: JSONValue) {
            guard case .object(let members) = value else { return nil }
            var username: String?
            for member in members where member.key == "username" {
                switch member.value {
                case .string(let text): username = text
                case .null: username = nil
                default: return nil
                }
            }
            self.username = username
        }
    }

    package struct FinishRequest: FastPathDecodable, Sendable {
        package let credential: AuthenticationResponseJSON

        package init?(fastPath value: JSONValue) {
            guard let credential = value["credential"].flatMap(AuthenticationResponseJSON.init(fastPath:)) else {
                return nil
            }
            self.credential = credential
        }
    }

    /// Kept with a sign-in challenge: the account named in the options request, if any; whether the options were
    /// asked for with a username; and, for a name with no passkey, the decoy descriptors its options listed.
    package struct PendingSignIn: Codable, Sendable {
        package let userID: String?
        package var usernameFirst: Bool? = nil
        package var decoys: [Decoy]? = nil

        package struct Decoy: Codable, Sendable {
            package let id: String
            package let transports: [String]
        }
    }

    /// The answer to any failed username-first passkey check: the same whatever the step and whatever the name.
    package static let passkeyCheckFailed = APIError(.badRequest, .authenticationFailed, "Passkey check failed.")

    /// The answer to a discoverable passkey check that failed at `code`'s step.
    package static func authenticationFailed(_ code: WebAuthnError.Code) -> APIError {
        APIError(.badRequest, .authenticationFailed, "Passkey check failed: \(code).")
    }

    package func register(on router: Router<SesameRequestContext>) {
        router.post("/api/authentication/options") { request, context in
            let body = try await request.decode(as: OptionsRequest.self, context: context)
            if sesame.sealsSignIn {
                // Nothing is stored for a sealed challenge: the start is counted in this node's memory.
                try sesame.signInStarts.start(address: context.clientAddress, now: sesame.now)
            }
            var allow: [PublicKeyCredentialDescriptorJSON] = []
            var userID: String?
            var decoys: [PendingSignIn.Decoy]?
            if let name = body.username {
                guard name.utf8.count <= 1024 else {
                    throw APIError.invalidField(.invalidUsername, "The username is too long.")
                }
                let key = Usernames.key(name.trimmingCharacters(in: .whitespacesAndNewlines))
                // The same one query whether or not the account exists (no early return on an unknown name).
                let credentials = try await store.credentials(usernameKey: key)
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
            var options = passkeyVerifier.relyingParty.makeRequestOptions(allowCredentials: allow)
            let (token, binding) = sesame.ceremonies.ceremonyToken(request)
            if sesame.sealsSignIn {
                options.challenge = Base64URLBytes(
                    sesame.sealedSignIn.make(
                        binding: binding, accountID: userID, usernameFirst: body.username != nil,
                        expires: sesame.now.addingTimeInterval(TimeInterval(sesame.configuration.challengeTimeout))))
            } else {
                // The ceremony count and the challenge together (one statement on PostgreSQL): over the address's
                // budget, nothing is stored.
                try await sesame.ceremonies.begin(
                    .authentication, challenge: options.challenge.bytes, binding: binding, userID: userID,
                    payload: PendingSignIn(userID: userID, usernameFirst: body.username != nil, decoys: decoys),
                    countedFor: context.clientAddress
                )
            }
            return sesame.ceremonies.options(options, ceremonyToken: token)
        }

        router.post("/api/authentication") { request, context in
            let credential = try await request.decode(as: FinishRequest.self, context: context).credential
            let begun = try await begun(credential, request: request)
            let checked: (stored: StoredCredential, user: User, result: AuthenticationResult)
            do {
                checked = try await check(credential, begun, context: context)
            } catch {
                // A failed assertion uses its challenge up: a sealed one is spent now (a stored one was consumed when
                // it was read). Spent already (a replay, or a concurrent verify): the challenge is what failed.
                if let spending = begun.spending, !(try await store.spendChallenge(spending)) {
                    throw APIError.challengeInvalid
                }
                throw error
            }
            let (stored, user, result) = checked
            // The sign count, the audit event, the session and (sealed) the spent challenge in one statement, all or
            // nothing, and only while the stored count is below the reported one. Of two assertions carrying one
            // counter, or one challenge, one gets a session.
            let issued = sesame.sessions.prepare(
                user: user, method: .passkey(userVerified: result.flags.contains(.userVerified)),
                passkeyBackupEligible: result.flags.contains(.backupEligible), request: request)
            let event = sesame.audit.event(.signInPasskey, .success, user: user, clientAddress: context.clientAddress)
            switch try await store.recordPasskeySignIn(
                credentialID: stored.id, signCount: result.reportedSignCount, backedUp: result.backupState,
                at: issued.record.createdAt, audit: event, sessionTokenHash: issued.tokenHash, session: issued.record,
                spending: begun.spending)
            {
            case .signedIn:
                break
            case .challengeSpent:
                await sesame.audit.record(
                    .signInPasskey, .failure, user: user, context: context,
                    detail: APIErrorCode.challengeInvalid.rawValue)
                throw APIError.challengeInvalid
            case .signCountRegression:
                await sesame.audit.record(
                    .signInPasskey, .failure, user: user, context: context,
                    detail: "\(WebAuthnError.Code.signCountRegression)")
                throw begun.usernameFirst
                    ? Self.passkeyCheckFailed : Self.authenticationFailed(.signCountRegression)
            }
            sesame.audit.counted(event)
            var response = sesame.sessions.signedIn(issued, user: user, request: request)
            if let remember = await sesame.signedInFromDevice(user: user, request: request, context: context) {
                response.headers.append(remember)
            }
            return response
        }
    }

    /// The challenge an assertion signed and what its options step knew.
    package struct Begun: Sendable {
        package let challenge: [UInt8]
        package let expires: Date
        package let usernameFirst: Bool
        /// Whether the options named this account (a stored challenge's account, a sealed one's account tag).
        package let names: @Sendable (_ accountID: String) -> Bool
        /// The descriptors a decoy allow list offered, to check an assertion against a decoy record as for a real
        /// passkey (a sealed challenge: the credential presented, whatever it is).
        package let decoys: [PendingSignIn.Decoy]
        /// A sealed challenge, still to be spent; nil for a stored one (consumed when it was read).
        package let spending: SpentChallenge?
    }

    /// Reads the challenge the client data names: a sealed one is opened (it stays unspent until the check is
    /// over), a stored one consumed on its own, so a failed assertion uses it up.
    private func begun(_ credential: AuthenticationResponseJSON, request: Request) async throws -> Begun {
        let (_, binding) = sesame.ceremonies.ceremonyToken(request)
        let challenge = try Ceremonies.challenge(clientDataJSON: credential.response.clientDataJSON.bytes)
        let sealed = sesame.sealedSignIn
        if let opened = sealed.open(challenge, binding: binding) {
            guard opened.expires > sesame.now else { throw APIError.challengeInvalid }
            return Begun(
                challenge: challenge, expires: opened.expires, usernameFirst: opened.usernameFirst,
                names: { sealed.names(opened, accountID: $0) },
                decoys: [PendingSignIn.Decoy(id: Base64URL.encode(credential.rawId.bytes), transports: [])],
                spending: SpentChallenge(id: Secrets.sha256(challenge), expiresAt: opened.expires))
        }
        let record = try await sesame.ceremonies.finish(
            .authentication, id: Secrets.sha256(challenge), binding: binding)
        let pending = try? sesame.ceremonies.payload(record, as: PendingSignIn.self)
        let expected = record.userID
        return Begun(
            challenge: challenge, expires: record.expiresAt,
            usernameFirst: pending?.usernameFirst == true || expected != nil,
            names: { $0 == expected }, decoys: expected == nil ? pending?.decoys ?? [] : [], spending: nil)
    }

    /// Finds the credential and its account and verifies the assertion (§7.2); every refusal is audited and thrown.
    private func check(
        _ credential: AuthenticationResponseJSON, _ begun: Begun, context: SesameRequestContext
    ) async throws -> (stored: StoredCredential, user: User, result: AuthenticationResult) {
        let found = try await store.credentialWithUser(id: credential.rawId.bytes)
        let stored: StoredCredential, user: User
        if begun.usernameFirst {
            guard let (candidate, account) = found, let owner = account, begun.names(owner.id) else {
                throw await refusalOutsideAccount(credential, begun, context: context)
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
        let allowed = begun.usernameFirst ? try await store.credentials(userID: user.id).map(\.id) : []
        let result: AuthenticationResult
        do {
            result = try passkeyVerifier.verifyAssertion(
                credential, credential: PasskeyVerifier.record(stored), userHandle: user.userHandle,
                challenge: begun.challenge, allowCredentials: allowed, expires: begun.expires
            )
        } catch {
            await sesame.audit.record(.signInPasskey, .failure, user: user, context: context, detail: "\(error.code)")
            throw begun.usernameFirst ? Self.passkeyCheckFailed : Self.authenticationFailed(error.code)
        }
        guard !user.disabled else {
            await sesame.audit.record(
                .signInPasskey, .refused, user: user, context: context, detail: APIErrorCode.accountDisabled.rawValue)
            throw APIError.accountDisabled
        }
        return (stored, user, result)
    }

    /// A username-first assertion whose credential is not one of the named account's: it always fails, with the
    /// answer every username-first failure gets. A decoy the options listed is verified against its decoy record
    /// first (the same steps and one signature check, as for a real passkey); the step that failed is audited.
    private func refusalOutsideAccount(
        _ credential: AuthenticationResponseJSON, _ begun: Begun, context: SesameRequestContext
    ) async -> APIError {
        var code = WebAuthnError.Code.credentialNotAllowed
        let id = Base64URL.encode(credential.rawId.bytes)
        if let decoy = begun.decoys.first(where: { $0.id == id }) {
            let fake = FakeCredentials(serverSecret: sesame.serverSecret)
            do {
                _ = try passkeyVerifier.verifyAssertion(
                    credential,
                    credential: fake.decoyRecord(
                        id: credential.rawId.bytes,
                        transports: decoy.transports.map(AuthenticatorTransport.init(rawValue:))),
                    userHandle: Secrets.hmac(key: sesame.serverSecret, Array("decoy user handle".utf8)),
                    challenge: begun.challenge,
                    allowCredentials: begun.decoys.compactMap { try? Base64URL.decode($0.id) }, expires: begun.expires
                )
            } catch {
                code = error.code
            }
        }
        await sesame.audit.record(.signInPasskey, .failure, user: nil, context: context, detail: "\(code)")
        return Self.passkeyCheckFailed
    }
}
