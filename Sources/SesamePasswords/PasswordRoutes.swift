import Foundation
import Hummingbird
import WebAuthn
import SesameCore
import SesameIdentityProvider
import SesameSecondFactors

/// Passwords: `POST /api/sessions/password` signs in (answered with a session, or with a pending second step when
/// the account has a factor that makes a second step, `Factor.secondStepNeeded`); `PUT /api/account/password` sets or changes it and `DELETE` removes it (both
/// sensitive: a recent sign-in). A wrong password, an unknown user and an account without a password get the same
/// answer after the same scrypt work.
package struct PasswordRoutes {
    package let sesame: ServerCore
    package let store: any PasswordStore & NoticedPasswordChanges & Store
    package let passwordHasher: PasswordHasher
    package let factorVerifier: FactorVerifier
    package let backChannelLogout: BackChannelLogout

    package init(
        sesame: ServerCore, store: any PasswordStore & NoticedPasswordChanges & Store, passwordHasher: PasswordHasher,
        factorVerifier: FactorVerifier,
        backChannelLogout: BackChannelLogout
    ) {
        self.sesame = sesame
        self.store = store
        self.passwordHasher = passwordHasher
        self.factorVerifier = factorVerifier
        self.backChannelLogout = backChannelLogout
    }

    package struct SignInRequest: Decodable, Sendable {
        package let username: String
        package let password: String
    }

    /// The answer when a second factor is needed.
    package struct SecondStepBody: ResponseEncodable, Sendable {
        package let status: String
        /// Send back in `POST /api/sessions/second-factor` (also set as an HttpOnly cookie for pages).
        package let pendingToken: String
        /// Factors the account can use (declared `Factor`s, e.g. `totp`).
        package let factors: [Factor]
        package let expiresAt: Date
    }

    package struct ChangeRequest: Decodable, Sendable {
        /// Required when the account already has a password.
        package let currentPassword: String?
        package let newPassword: String
    }

    /// A pending second step stores nothing but its account.
    package struct PendingSecondStep: Codable, Sendable {}

    package func register(on router: Router<SesameRequestContext>) {
        router.post("/api/sessions/password") { request, context -> Response in
            let body = try await request.decode(as: SignInRequest.self, context: context)
            return try await signIn(body, request: request, context: context)
        }

        let sensitive = router.group("/api/account", context: RecentlySignedInRequestContext.self)
        sensitive.put("/password") { request, context in
            try await change(
                try await request.decode(as: ChangeRequest.self, context: context), request: request, context: context)
        }
        sensitive.delete("/password") { request, context in
            let notice = await sesame.notice(.passwordRemoved, user: context.user, request: request, context: context)
            switch try await store.deletePassword(userID: context.user.id, notice: notice) {
            case .removed:
                await sesame.audit.record(.passwordRemoved, .success, user: context.user, context: context)
                return Status(status: "removed")
            case .notFound: throw APIError.notFound
            case .lastWayIn: throw APIError.lastWayIn
            }
        }
    }

    package func signIn(_ body: SignInRequest, request: Request, context: SesameRequestContext) async throws -> Response
    {
        // Bound the work before hashing: scrypt's cost does not depend on length, but JSON parsing and
        // normalisation do. The limit is far above the accepted maximum length.
        guard body.password.utf8.count <= 4 * PasswordHasher.maximumLength, body.username.utf8.count <= 1024 else {
            throw APIError.invalidCredentials
        }
        let key = Usernames.key(body.username.trimmingCharacters(in: .whitespacesAndNewlines))
        let limit = sesame.rateLimiter.key(.password, account: key, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)

        let user = try await store.user(usernameKey: key)
        let record: PasswordRecord? = if let user { try await store.password(userID: user.id) } else { nil }
        let hasher = passwordHasher
        let password = body.password
        let matches: Bool = try await sesame.offload {
            if let record { return try hasher.verify(password, against: record) }
            // Unknown user or no password: the same work and the same answer as a wrong password.
            try hasher.verifyDummy(password)
            return false
        }
        guard matches, let user, let record else {
            // An unknown account's attempted username is not kept: people type passwords into username fields.
            await sesame.audit.record(
                .signInPassword, .failure, user: user, context: context,
                detail: user == nil ? "unknown account" : APIErrorCode.invalidCredentials.rawValue
            )
            throw APIError.invalidCredentials
        }
        try await sesame.rateLimiter.succeeded(limit)
        guard !user.disabled else {
            await sesame.audit.record(
                .signInPassword, .refused, user: user, context: context, detail: APIErrorCode.accountDisabled.rawValue)
            throw APIError.accountDisabled
        }
        if hasher.needsUpgrade(record) {
            let upgraded = try await sesame.offload { try hasher.hash(password) }
            try await store.setPassword(userID: user.id, upgraded, at: sesame.now)
            await sesame.audit.record(
                .passwordRehashed, .success, user: user, context: context,
                detail: "log_n \(record.logN) -> \(hasher.logN)")
        }

        let factors = try await factorVerifier.available(for: user)
        if Factor.secondStepNeeded(factors) {
            let (pending, pendingHash) = Secrets.token()
            let expires = try await sesame.ceremonies.begin(
                .pendingSecondFactor, id: pendingHash, userID: user.id, payload: PendingSecondStep())
            await sesame.audit.record(.signInPassword, .pendingSecondFactor, user: user, context: context)
            return try EditedResponse(
                headers: [.setCookie: sesame.cookies.set(.pending, pending)],
                response: SecondStepBody(
                    status: "second_factor_required", pendingToken: pending, factors: factors, expiresAt: expires)
            ).response(from: request, context: context)
        }
        let issued = try await sesame.sessions.issue(user: user, method: .password, request: request)
        await sesame.audit.record(.signInPassword, .success, user: user, context: context)
        var response = sesame.sessions.signedIn(issued, user: user, request: request)
        if let remember = await sesame.signedInFromDevice(user: user, request: request, context: context) {
            response.headers.append(remember)
        }
        return try response.response(from: request, context: context)
    }

    /// `invalid_password` with the length limits (`minimum`, `maximum`), from which the pages write their sentence in
    /// the person's language.
    package static func invalidPassword(_ why: String) -> APIError {
        var error = APIError.invalidField(.invalidPassword, why)
        error.extra = [
            "minimum": String(PasswordHasher.minimumLength), "maximum": String(PasswordHasher.maximumLength),
        ]
        return error
    }

    /// Sets the first password, or changes it after checking the current one (rate limited like sign-in); other
    /// sessions are signed out, since they may belong to whoever knew the old password.
    package func change(_ body: ChangeRequest, request: Request? = nil, context: RecentlySignedInRequestContext)
        async throws -> Status
    {
        switch PasswordHasher.check(body.newPassword) {
        case .tooShort: throw Self.invalidPassword("Use at least \(PasswordHasher.minimumLength) characters.")
        case .tooLong: throw Self.invalidPassword("Use at most \(PasswordHasher.maximumLength) characters.")
        case nil: break
        }
        let user = context.user
        let hasher = passwordHasher
        let existing = try await store.password(userID: user.id)
        if let existing {
            let limit = sesame.rateLimiter.key(
                .password, account: Usernames.key(user.username), address: context.clientAddress)
            try await sesame.rateLimiter.attempt(limit)
            guard let current = body.currentPassword, current.utf8.count <= 4 * PasswordHasher.maximumLength else {
                throw APIError.invalidField(.invalidCurrentPassword, "Give the current password to change it.")
            }
            guard try await sesame.offload({ try hasher.verify(current, against: existing) }) else {
                await sesame.audit.record(
                    .passwordChanged, .failure, user: user, context: context, detail: "wrong current password")
                throw APIError(.forbidden, .wrongPassword, "The current password is wrong.")
            }
            try await sesame.rateLimiter.succeeded(limit)
        }
        let newPassword = body.newPassword
        let record = try await sesame.offload { try hasher.hash(newPassword) }
        // The other sessions and every app's grant end with the old password; the apps that registered for it are
        // told (found first, while their grants are live).
        let apps = try await backChannelLogout.clients(of: user.id)
        let revoked = try await store.replacePassword(
            userID: user.id, record, at: sesame.now, keepingSession: context.authentication.session.id,
            notice: sesame.notice(
                existing == nil ? .passwordSet : .passwordChanged, user: user, request: request, context: context))
        backChannelLogout.send(to: apps, userID: user.id)
        await sesame.audit.record(
            existing == nil ? .passwordSet : .passwordChanged, .success, user: user, context: context,
            detail: "\(revoked) other sessions signed out"
        )
        return Status(status: existing == nil ? "set" : "changed", count: revoked)
    }
}
