import Foundation
import Hummingbird
import WebAuthn

/// `POST /api/sessions/password`: password sign-in, answered with a session or with a pending second step.
struct PasswordRoutes {
    let sesame: Sesame

    struct SignInRequest: Decodable, Sendable {
        let username: String
        let password: String
    }

    /// The answer when a second factor is needed.
    struct SecondStepBody: Codable, Sendable {
        let status: String
        /// Send back in `POST /api/sessions/second-factor` (also set as an HttpOnly cookie for pages).
        let pendingToken: String
        /// Factors the account can use: `totp`, `sms`, `recovery`.
        let factors: [String]
        let expiresAt: Date
    }

    /// Purpose of the challenge row that represents a pending second step.
    static let pendingPurpose = "second_factor"
    static let pendingCookie = "sesame_pending"

    func register(on router: Router<SesameRequestContext>) {
        router.post("/api/sessions/password") { request, context -> Response in
            let body = try await JSONBody.decode(SignInRequest.self, from: request, context: context)
            return try await signIn(body, request: request, context: context)
        }
    }

    func signIn(_ body: SignInRequest, request: Request, context: SesameRequestContext) async throws -> Response {
        // Bound the work before hashing: scrypt's cost does not depend on length, but JSON parsing and
        // normalisation do. The limit is far above the accepted maximum length.
        guard body.password.utf8.count <= 4 * PasswordHasher.maximumLength, body.username.utf8.count <= 1024 else {
            throw APIError.invalidCredentials
        }
        let key = Usernames.key(body.username.trimmingCharacters(in: .whitespacesAndNewlines))
        let limit = sesame.rateLimiter.key(secret: "password", account: key, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)

        let user = try await sesame.store.user(usernameKey: key)
        let record: PasswordRecord? = if let user { try await sesame.store.password(userID: user.id) } else { nil }
        let hasher = sesame.passwords
        let password = body.password
        let matches: Bool = try await sesame.offload {
            if let record { return try hasher.verify(password, against: record) }
            // Unknown user or no password: the same work and the same answer as a wrong password.
            try hasher.verifyDummy(password)
            return false
        }
        guard matches, let user, let record else {
            // An unknown account's attempted username is not kept: people type passwords into username fields.
            await sesame.audit("sign_in.password", "failure", user: user, context: context, detail: user == nil ? "unknown account" : "invalid_credentials")
            throw APIError.invalidCredentials
        }
        try await sesame.rateLimiter.succeeded(limit)
        guard !user.disabled else {
            await sesame.audit("sign_in.password", "refused", user: user, context: context, detail: "account_disabled")
            throw APIError.accountDisabled
        }
        if hasher.needsUpgrade(record) {
            let upgraded = try await sesame.offload { try hasher.hash(password) }
            try await sesame.store.setPassword(userID: user.id, upgraded, at: sesame.now)
            await sesame.audit("password.rehashed", "success", user: user, context: context, detail: "log_n \(record.logN) -> \(hasher.logN)")
        }

        let factors = try await SecondFactors.available(for: user, store: sesame.store)
        if factors.contains("totp") || factors.contains("sms") {
            let (pending, pendingHash) = Secrets.token()
            let expires = sesame.now.addingTimeInterval(TimeInterval(sesame.configuration.challengeTimeout))
            try await sesame.store.insertChallenge(
                id: pendingHash, binding: [],
                ChallengeRecord(purpose: Self.pendingPurpose, userID: user.id, payload: "{}", expiresAt: expires)
            )
            await sesame.audit("sign_in.password", "pending_second_factor", user: user, context: context)
            var cookie = ["\(Sessions.secureName(Self.pendingCookie, sesame.configuration))=\(pending)", "Path=/api/sessions", "Max-Age=\(sesame.configuration.challengeTimeout)", "HttpOnly", "SameSite=Strict"]
            if sesame.configuration.isSecureOrigin { cookie.append("Secure") }
            return try JSONResponse(
                SecondStepBody(status: "second_factor_required", pendingToken: pending, factors: factors, expiresAt: expires),
                headers: [.setCookie: cookie.joined(separator: "; ")]
            ).response(from: request, context: context)
        }
        let issued = try await Sessions.issue(user: user, method: "password", request: request, sesame: sesame)
        await sesame.audit("sign_in.password", "success", user: user, context: context)
        return try Sessions.signedIn(issued, user: user, request: request).response(from: request, context: context)
    }
}

enum SecondFactors {
    /// Second factors the account has set up, in the order a page should offer them.
    static func available(for user: User, store: any Store) async throws -> [String] {
        var factors: [String] = []
        if let totp = try await store.totp(userID: user.id), totp.confirmed { factors.append("totp") }
        if let sms = try await store.sms(userID: user.id), sms.confirmed { factors.append("sms") }
        if try await store.unusedRecoveryCodeCount(userID: user.id) > 0 { factors.append("recovery") }
        return factors
    }
}
