import Foundation
import Hummingbird
import WebAuthn

/// Re-authentication inside a session, before sensitive account changes.
///
/// Changing, setting or removing the password, adding or deleting a passkey, setting or removing the phone
/// number, disabling TOTP and making new recovery codes need a session whose holder signed in or re-authenticated
/// within `reauthenticationWindow` seconds; otherwise they answer 403 `reauthentication_required`. The holder proves
/// it again here, and the session's `authenticatedAt` moves to now (the session token stays the same):
///
/// - passkey: `POST /api/session/reauthenticate/options` → request options listing the account's passkeys, with
///   a challenge bound to this session; `POST /api/session/reauthenticate {credential}`. The passkey must belong to
///   the signed-in account.
/// - password: `POST /api/session/reauthenticate {password, factor?, code?}`; an account with TOTP or SMS set up
///   also gives a second factor (`totp`, `sms` or `recovery`) in the same request. For `sms`,
///   `POST /api/session/reauthenticate/sms` first sends a code bound to this session.
///
/// Every guess is rate limited in the same buckets as sign-in (password, TOTP, SMS and recovery codes).
struct ReauthenticationRoutes {
    let sesame: Sesame
    let relyingParty: RelyingParty

    static let purpose = "reauthentication"
    static let smsPurpose = "sms_reauthentication"

    struct ReauthenticationRequest: Decodable, Sendable {
        let credential: AuthenticationResponseJSON?
        let password: String?
        let factor: String?
        let code: String?
    }

    struct ReauthenticatedBody: Codable, Sendable {
        let status: String
        let method: String
        let authenticatedAt: Date
        /// Sensitive changes are allowed until `authenticatedAt` + this many seconds.
        let maxAgeSeconds: Int
    }

    struct Status: Codable, Sendable { let status: String }

    private var passkeys: PasskeyRoutes { PasskeyRoutes(sesame: sesame, relyingParty: relyingParty) }
    private var factors: SecondFactorRoutes { SecondFactorRoutes(sesame: sesame) }

    func register(on router: Router<SesameRequestContext>) {
        router.post("/api/session/reauthenticate/options") { request, context -> Response in
            let auth = try context.requireAuthentication()
            try await sesame.rateLimiter.countCeremony(address: context.clientAddress)
            let credentials = try await sesame.store.credentials(userID: auth.user.id)
            guard !credentials.isEmpty else {
                throw APIError(.conflict, "no_passkey", "This account has no passkey; re-authenticate with the password.")
            }
            let options = relyingParty.makeRequestOptions(
                allowCredentials: credentials.map {
                    PublicKeyCredentialDescriptorJSON(id: $0.id, transports: $0.transports.map(AuthenticatorTransport.init(rawValue:)))
                }
            )
            try await passkeys.storeChallenge(
                options.challenge.bytes, purpose: Self.purpose, binding: passkeys.sessionBinding(auth), userID: auth.user.id,
                payload: PasskeyRoutes.PendingSignIn(userID: auth.user.id)
            )
            return try JSONResponse(options).response(from: request, context: context)
        }

        router.post("/api/session/reauthenticate/sms") { _, context -> JSONResponse<Status> in
            let auth = try context.requireAuthentication()
            guard let sms = try await sesame.store.sms(userID: auth.user.id), sms.confirmed else {
                throw APIError(.conflict, "sms_not_enabled", "This account has no confirmed phone number.")
            }
            try await factors.sendCode(purpose: Self.smsPurpose, key: auth.tokenHash, user: auth.user, phone: sms.phone, context: context)
            return JSONResponse(Status(status: "code_sent"), status: .accepted)
        }

        router.post("/api/session/reauthenticate") { request, context -> JSONResponse<ReauthenticatedBody> in
            let auth = try context.requireAuthentication()
            let body = try await JSONBody.decode(ReauthenticationRequest.self, from: request, context: context)
            let method: String
            if let credential = body.credential {
                let result = try await verifyPasskey(credential, auth: auth, context: context)
                method = PasskeyRoutes.sessionMethod(userVerified: result.flags.contains(.userVerified))
            } else if let password = body.password {
                method = try await verifyPassword(password, factor: body.factor, code: body.code, auth: auth, context: context)
            } else {
                throw APIError(.badRequest, "malformed_json", "Give either credential or password.")
            }
            let now = sesame.now
            guard try await sesame.store.markReauthenticated(tokenHash: auth.tokenHash, method: method, at: now) else {
                throw APIError.unauthenticated
            }
            await sesame.audit("session.reauthenticated", "success", user: auth.user, context: context, detail: method)
            return JSONResponse(
                ReauthenticatedBody(
                    status: "reauthenticated", method: method, authenticatedAt: now, maxAgeSeconds: sesame.configuration.reauthenticationWindow
                )
            )
        }
    }

    private func failed(_ auth: Authentication, _ context: SesameRequestContext, _ detail: String) async {
        await sesame.audit("session.reauthenticated", "failure", user: auth.user, context: context, detail: detail)
    }

    private func verifyPasskey(
        _ credential: AuthenticationResponseJSON, auth: Authentication, context: SesameRequestContext
    ) async throws -> AuthenticationResult {
        let (challenge, record) = try await passkeys.consume(
            credential.response.clientDataJSON.bytes, purpose: Self.purpose, binding: passkeys.sessionBinding(auth)
        )
        guard record.userID == auth.user.id else { throw APIError.challengeInvalid }
        let credentials = try await sesame.store.credentials(userID: auth.user.id)
        // Only the signed-in account's own passkeys count.
        guard let stored = credentials.first(where: { Secrets.constantTimeEqual($0.id, credential.rawId.bytes) }) else {
            await failed(auth, context, "credentialNotAllowed")
            throw APIError(.badRequest, "authentication_failed", "Passkey check failed: credentialNotAllowed.")
        }
        let expectation = AuthenticationExpectation(
            challenge: challenge, credential: PasskeyRoutes.record(stored), userHandle: auth.user.userHandle,
            allowCredentials: credentials.map(\.id), userVerification: relyingParty.configuration.userVerification,
            expires: record.expiresAt
        )
        let result: AuthenticationResult
        do {
            result = try relyingParty.verifyAuthentication(response: credential, expected: expectation, now: sesame.now)
        } catch {
            await failed(auth, context, "\(error.code)")
            throw APIError(.badRequest, "authentication_failed", "Passkey check failed: \(error.code).")
        }
        // The same sign count guard as sign-in: two re-authentications carrying one counter do not both count.
        guard
            try await sesame.store.recordCredentialUse(
                id: stored.id, signCount: result.reportedSignCount, backedUp: result.backupState, at: sesame.now
            )
        else {
            await failed(auth, context, "\(WebAuthnError.Code.signCountRegression)")
            throw APIError(.badRequest, "authentication_failed", "Passkey check failed: \(WebAuthnError.Code.signCountRegression).")
        }
        return result
    }

    /// The password, then (if the account has TOTP or SMS) a second factor; returns the method name.
    private func verifyPassword(
        _ password: String, factor: String?, code: String?, auth: Authentication, context: SesameRequestContext
    ) async throws -> String {
        let user = auth.user
        guard password.utf8.count <= 4 * PasswordHasher.maximumLength else { throw wrongPassword }
        let limit = sesame.rateLimiter.key(secret: "password", account: Usernames.key(user.username), address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        guard let record = try await sesame.store.password(userID: user.id) else {
            throw APIError(.conflict, "no_password", "This account has no password; re-authenticate with a passkey.")
        }
        let hasher = sesame.passwords
        guard try await sesame.offload({ try hasher.verify(password, against: record) }) else {
            await failed(auth, context, "wrong password")
            throw wrongPassword
        }
        try await sesame.rateLimiter.succeeded(limit)

        let available = try await SecondFactors.available(for: user, store: sesame.store)
        guard available.contains("totp") || available.contains("sms") else { return "password" }
        guard let factor, let code else {
            var error = APIError(.forbidden, "second_factor_required", "Give a second factor (factor and code) with the password.")
            error.extra = ["factors": available.joined(separator: ",")]
            throw error
        }
        guard code.utf8.count <= 64 else { throw APIError.invalidCode }
        switch factor {
        case "totp":
            guard let totp = try await sesame.store.totp(userID: user.id), totp.confirmed else { throw factorUnavailable }
            try await factors.checkTOTP(code, record: totp, user: user, confirming: false, context: context)
        case "sms":
            guard let sms = try await sesame.store.sms(userID: user.id), sms.confirmed else { throw factorUnavailable }
            try await factors.checkSMSCode(code, purpose: Self.smsPurpose, key: auth.tokenHash, user: user, context: context)
        case "recovery":
            try await factors.checkRecoveryCode(code, user: user, context: context)
        default:
            throw APIError.invalidField("factor", "factor is one of totp, sms, recovery.")
        }
        return "password+\(factor)"
    }

    private var wrongPassword: APIError { APIError(.forbidden, "wrong_password", "The password is wrong.") }
    private var factorUnavailable: APIError { APIError(.conflict, "factor_not_enabled", "This account has not set up that factor.") }
}
