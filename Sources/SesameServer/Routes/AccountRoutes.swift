import Foundation
import Hummingbird
import WebAuthn

/// Signed-in account basics: the account summary, password set/change/remove, sessions, own audit events.
struct AccountRoutes {
    let sesame: Sesame

    struct AccountBody: Codable, Sendable {
        let user: AccountUser
        let csrfToken: String
        let session: SessionBody
        let hasPassword: Bool
        let passkeyCount: Int
        /// Second factors set up: `totp`, `sms`, `recovery`.
        let secondFactors: [String]
        let recoveryCodesRemaining: Int
    }

    struct SessionBody: Codable, Sendable {
        let id: String
        let createdAt: Date
        let lastSeenAt: Date
        let expiresAt: Date
        let userAgent: String
        let method: String
        let current: Bool

        init(_ record: SessionRecord, current: Bool) {
            id = record.id
            createdAt = record.createdAt
            lastSeenAt = record.lastSeenAt
            expiresAt = record.expiresAt
            userAgent = record.userAgent
            method = record.method
            self.current = current
        }
    }

    struct PasswordChange: Decodable, Sendable {
        /// Required when the account already has a password.
        let currentPassword: String?
        let newPassword: String
    }

    /// `PATCH /api/account`: the fields that can change (only the display name; the username is the account's
    /// key and stays).
    struct AccountChange: Decodable, Sendable {
        let displayName: String
    }

    struct AccountChanged: Codable, Sendable {
        let status: String
        let user: AccountUser
    }

    struct AuditBody: Codable, Sendable {
        let events: [AuditEventBody]
    }

    struct AuditEventBody: Codable, Sendable {
        let at: Date
        let kind: String
        let outcome: String
        let clientAddress: String
        let detail: String
    }

    struct Status: Codable, Sendable {
        let status: String
        var count: Int? = nil
    }

    func register(on router: Router<SesameRequestContext>) {
        router.get("/api/account") { _, context -> JSONResponse<AccountBody> in
            let auth = try context.requireAuthentication()
            let user = auth.user
            return JSONResponse(
                AccountBody(
                    user: AccountUser(user),
                    csrfToken: Sessions.csrfToken(for: auth.tokenHash, sesame: sesame),
                    session: SessionBody(auth.session, current: true),
                    hasPassword: try await sesame.store.password(userID: user.id) != nil,
                    passkeyCount: try await sesame.store.credentials(userID: user.id).count,
                    secondFactors: try await SecondFactors.available(for: user, store: sesame.store),
                    recoveryCodesRemaining: try await sesame.store.unusedRecoveryCodeCount(userID: user.id)
                )
            )
        }

        // Change the display name. Not a sensitive change (it adds no way in), so no re-authentication; the page
        // then sends `signalCurrentUserDetails` so credential managers show the new name.
        router.patch("/api/account") { request, context -> JSONResponse<AccountChanged> in
            let auth = try context.requireAuthentication()
            let body = try await JSONBody.decode(AccountChange.self, from: request, context: context)
            let displayName = try PasskeyRoutes.displayName(body.displayName)
            guard try await sesame.store.setDisplayName(userID: auth.user.id, displayName) else { throw APIError.unauthenticated }
            var user = auth.user
            user.displayName = displayName
            await sesame.audit("account.renamed", "success", user: user, context: context)
            return JSONResponse(AccountChanged(status: "renamed", user: AccountUser(user)))
        }

        router.put("/api/account/password") { request, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            let body = try await JSONBody.decode(PasswordChange.self, from: request, context: context)
            return try await changePassword(body, auth: auth, context: context)
        }

        router.delete("/api/account/password") { _, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            switch try await sesame.store.deletePassword(userID: auth.user.id) {
            case .removed:
                await sesame.audit("password.removed", "success", user: auth.user, context: context)
                return JSONResponse(Status(status: "removed"))
            case .notFound: throw APIError.notFound
            case .lastWayIn: throw APIError.lastWayIn
            }
        }

        router.get("/api/account/sessions") { _, context -> JSONResponse<[SessionBody]> in
            let auth = try context.requireAuthentication()
            let sessions = try await sesame.store.sessions(userID: auth.user.id, now: sesame.now)
            return JSONResponse(sessions.map { SessionBody($0, current: $0.id == auth.session.id) })
        }

        router.delete("/api/account/sessions/{id}") { _, context -> JSONResponse<Status> in
            let auth = try context.requireAuthentication()
            let id = try context.parameters.require("id")
            guard id.utf8.count <= 64, try await sesame.store.deleteSession(userID: auth.user.id, id: id) else { throw APIError.notFound }
            await sesame.audit("session.revoked", "success", user: auth.user, context: context)
            var headers: HTTPFields = [:]
            if id == auth.session.id, auth.carrier == .cookie { headers[.setCookie] = Sessions.clearingCookie(sesame.configuration) }
            return JSONResponse(Status(status: "signed_out"), headers: headers)
        }

        // Sign out everywhere, this session included.
        router.delete("/api/account/sessions") { _, context -> JSONResponse<Status> in
            let auth = try context.requireAuthentication()
            let count = try await sesame.store.deleteSessions(userID: auth.user.id, keeping: nil)
            await sesame.audit("session.revoked_all", "success", user: auth.user, context: context, detail: "\(count) sessions")
            return JSONResponse(Status(status: "signed_out", count: count), headers: [.setCookie: Sessions.clearingCookie(sesame.configuration)])
                
        }

        // Sign out this session.
        router.delete("/api/session") { _, context -> JSONResponse<Status> in
            let auth = try context.requireAuthentication()
            _ = try await sesame.store.deleteSession(userID: auth.user.id, id: auth.session.id)
            await sesame.audit("sign_out", "success", user: auth.user, context: context)
            return JSONResponse(Status(status: "signed_out"), headers: [.setCookie: Sessions.clearingCookie(sesame.configuration)])
                
        }

        router.get("/api/account/audit") { _, context -> JSONResponse<AuditBody> in
            let auth = try context.requireAuthentication()
            let events = try await sesame.store.auditEvents(userID: auth.user.id, limit: 100)
            return JSONResponse(
                AuditBody(
                    events: events.map {
                        AuditEventBody(at: $0.at, kind: $0.kind, outcome: $0.outcome, clientAddress: $0.clientAddress, detail: $0.detail)
                    }
                )
            )
        }
    }

    func changePassword(_ body: PasswordChange, auth: Authentication, context: SesameRequestContext) async throws -> JSONResponse<Status> {
        switch PasswordHasher.check(body.newPassword) {
        case .tooShort: throw APIError.invalidField("password", "Use at least \(PasswordHasher.minimumLength) characters.")
        case .tooLong: throw APIError.invalidField("password", "Use at most \(PasswordHasher.maximumLength) characters.")
        case nil: break
        }
        let user = auth.user
        let hasher = sesame.passwords
        let existing = try await sesame.store.password(userID: user.id)
        if let existing {
            let limit = sesame.rateLimiter.key(secret: "password", account: Usernames.key(user.username), address: context.clientAddress)
            try await sesame.rateLimiter.attempt(limit)
            guard let current = body.currentPassword, current.utf8.count <= 4 * PasswordHasher.maximumLength else {
                throw APIError.invalidField("current_password", "Give the current password to change it.")
            }
            let ok = try await sesame.offload { try hasher.verify(current, against: existing) }
            guard ok else {
                await sesame.audit("password.changed", "failure", user: user, context: context, detail: "wrong current password")
                throw APIError(.forbidden, "wrong_password", "The current password is wrong.")
            }
            try await sesame.rateLimiter.succeeded(limit)
        }
        let newPassword = body.newPassword
        let record = try await sesame.offload { try hasher.hash(newPassword) }
        try await sesame.store.setPassword(userID: user.id, record, at: sesame.now)
        // Other sessions may belong to whoever knew the old password.
        let revoked = try await sesame.store.deleteSessions(userID: user.id, keeping: auth.session.id)
        await sesame.audit(existing == nil ? "password.set" : "password.changed", "success", user: user, context: context, detail: "\(revoked) other sessions signed out")
        return JSONResponse(Status(status: existing == nil ? "set" : "changed", count: revoked))
    }
}
