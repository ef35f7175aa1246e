import Foundation
import Hummingbird
import WebAuthn
import SesameCore
import SesameBytes
import SesamePasskeys
import SesamePasswords
import SesameSecondFactors

/// Re-authentication inside a session, before sensitive account changes.
///
/// Setting, changing or removing the password, adding or deleting a passkey, changing or removing the phone number,
/// setting up or disabling TOTP and making new recovery codes need a session whose holder signed in or
/// re-authenticated within `reauthenticationWindow` seconds (`RecentlySignedInRequestContext`); otherwise they answer
/// 403 `reauthentication_required`. The holder proves it again here, and the session's `authenticatedAt` moves to
/// now (the session token stays the same):
///
/// - passkey: `POST /api/session/reauthenticate/options` → request options listing the account's passkeys, with
///   a challenge bound to this session; `POST /api/session/reauthenticate {credential}`. The passkey must belong to
///   the signed-in account.
/// - password: `POST /api/session/reauthenticate {password, factor?, code?}`; an account with a factor that makes a
///   second step (`Factor.secondStepNeeded`) also gives a second factor in the same request, checked by
///   `FactorVerifier` for this session's re-authentication (a factor whose code is sent on request, such as SMS,
///   sends it from its own feature's route: `POST /api/session/reauthenticate/sms`).
///
/// Every guess is rate limited in the same buckets as sign-in (the password's, and each factor's own).
package struct ReauthenticationRoutes {
    package let sesame: ServerCore
    package let store: any PasskeyStorage & PasswordStore & SecondFactorStore
    package let passwordHasher: PasswordHasher
    package let factorVerifier: FactorVerifier
    package let passkeyVerifier: PasskeyVerifier

    package init(
        sesame: ServerCore, store: any PasskeyStorage & PasswordStore & SecondFactorStore,
        passwordHasher: PasswordHasher, factorVerifier: FactorVerifier,
        passkeyVerifier: PasskeyVerifier
    ) {
        self.sesame = sesame
        self.store = store
        self.passwordHasher = passwordHasher
        self.factorVerifier = factorVerifier
        self.passkeyVerifier = passkeyVerifier
    }

    package struct ReauthenticationRequest: Decodable, Sendable {
        package let credential: AuthenticationResponseJSON?
        package let password: String?
        package let factor: String?
        package let code: String?
    }

    package struct ReauthenticatedBody: ResponseEncodable, Sendable {
        package let status: String
        package let method: SessionMethod
        package let authenticatedAt: Date
        /// Sensitive changes are allowed until `authenticatedAt` + this many seconds.
        package let maxAgeSeconds: Int
    }

    /// Kept with a re-authentication challenge: the account.
    package struct PendingReauthentication: Codable, Sendable {
        package let userID: String
    }

    package func register(on router: Router<SesameRequestContext>) {
        let signedIn = router.group("/api/session/reauthenticate", context: SignedInRequestContext.self)

        signedIn.post("/options") { _, context in
            let credentials = try await store.credentials(userID: context.user.id)
            guard !credentials.isEmpty else {
                throw APIError(.conflict, .noPasskey, "This account has no passkey; re-authenticate with the password.")
            }
            let options = passkeyVerifier.relyingParty.makeRequestOptions(
                allowCredentials: PasskeyVerifier.descriptors(credentials))
            try await sesame.ceremonies.begin(
                .reauthentication, challenge: options.challenge.bytes,
                binding: Ceremonies.sessionBinding(context.authentication),
                userID: context.user.id, payload: PendingReauthentication(userID: context.user.id),
                countedFor: context.clientAddress
            )
            return sesame.ceremonies.options(options, ceremonyToken: nil)
        }

        signedIn.post("") { request, context in
            let body = try await request.decode(as: ReauthenticationRequest.self, context: context)
            let method: SessionMethod
            var passkeyBackupEligible: Bool?
            if let credential = body.credential {
                (method, passkeyBackupEligible) = try await verifyPasskey(credential, context: context)
            } else if let password = body.password {
                method = try await verifyPassword(password, factor: body.factor, code: body.code, context: context)
            } else {
                throw APIError(.badRequest, .malformedJSON, "Give either credential or password.")
            }
            let now = sesame.now
            guard
                try await store.markReauthenticated(
                    tokenHash: context.authentication.tokenHash, method: method.rawValue,
                    passkeyBackupEligible: passkeyBackupEligible, at: now)
            else {
                throw APIError.unauthenticated
            }
            await sesame.audit.record(
                .sessionReauthenticated, .success, user: context.user, context: context, detail: method.rawValue)
            return ReauthenticatedBody(
                status: "reauthenticated", method: method, authenticatedAt: now,
                maxAgeSeconds: sesame.configuration.reauthenticationWindow
            )
        }
    }

    private func failed(_ context: SignedInRequestContext, _ detail: String) async {
        await sesame.audit.record(
            .sessionReauthenticated, .failure, user: context.user, context: context, detail: detail)
    }

    /// A passkey of the signed-in account, checked like a sign-in (with the same sign count guard).
    /// The method, and the passkey's backup eligibility (the session's `amr` says `hwk` or `swk` by it).
    private func verifyPasskey(_ credential: AuthenticationResponseJSON, context: SignedInRequestContext) async throws
        -> (SessionMethod, Bool)
    {
        let user = context.user
        let (challenge, record) = try await sesame.ceremonies.finish(
            .reauthentication, clientDataJSON: credential.response.clientDataJSON.bytes,
            binding: Ceremonies.sessionBinding(context.authentication)
        )
        guard record.userID == user.id else { throw APIError.challengeInvalid }
        let credentials = try await store.credentials(userID: user.id)
        // Only the signed-in account's own passkeys count.
        guard let stored = credentials.first(where: { ConstantTime.equal($0.id, credential.rawId.bytes) }) else {
            await failed(context, "\(WebAuthnError.Code.credentialNotAllowed)")
            throw SignInRoutes.authenticationFailed(.credentialNotAllowed)
        }
        let result: AuthenticationResult
        do {
            result = try passkeyVerifier.verifyAssertion(
                credential, credential: PasskeyVerifier.record(stored), userHandle: user.userHandle,
                challenge: challenge,
                allowCredentials: credentials.map(\.id), expires: record.expiresAt
            )
        } catch {
            await failed(context, "\(error.code)")
            throw SignInRoutes.authenticationFailed(error.code)
        }
        // The same sign count guard as sign-in: two re-authentications carrying one counter do not both count.
        guard
            try await store.recordCredentialUse(
                id: stored.id, signCount: result.reportedSignCount, backedUp: result.backupState, at: sesame.now)
        else {
            await failed(context, "\(WebAuthnError.Code.signCountRegression)")
            throw SignInRoutes.authenticationFailed(.signCountRegression)
        }
        return (.passkey(userVerified: result.flags.contains(.userVerified)), result.flags.contains(.backupEligible))
    }

    /// The password, then (if the account has a factor that makes a second step) a second factor.
    private func verifyPassword(_ password: String, factor: String?, code: String?, context: SignedInRequestContext)
        async throws -> SessionMethod
    {
        let user = context.user
        guard password.utf8.count <= 4 * PasswordHasher.maximumLength else { throw APIError.wrongPassword }
        let limit = sesame.rateLimiter.key(
            .password, account: Usernames.key(user.username), address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        guard let record = try await store.password(userID: user.id) else {
            throw APIError(.conflict, .noPassword, "This account has no password; re-authenticate with a passkey.")
        }
        let hasher = passwordHasher
        guard try await sesame.offload({ try hasher.verify(password, against: record) }) else {
            await failed(context, "wrong password")
            throw APIError.wrongPassword
        }
        try await sesame.rateLimiter.succeeded(limit)

        let available = try await factorVerifier.available(for: user)
        guard Factor.secondStepNeeded(available) else { return .password }
        guard let factor, let code else {
            var error = APIError(
                .forbidden, .secondFactorRequired, "Give a second factor (factor and code) with the password.")
            error.extra = ["factors": available.map(\.rawValue).joined(separator: ",")]
            throw error
        }
        let chosen = try FactorVerifier.factor(named: factor)
        try await factorVerifier.verify(
            chosen, code: code, user: user, in: .reauthentication(sessionTokenHash: context.authentication.tokenHash),
            kind: .signInSecondFactor, context: context)
        return .passwordAnd(chosen)
    }
}
