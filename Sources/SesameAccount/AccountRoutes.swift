import Foundation
import Hummingbird
import NIOCore
import WebAuthn
import SesameCore
import SesameLanguage
import SesameIdentityProvider
import SesamePasskeys
import SesameSecondFactors

/// The signed-in account: its summary, its display name, its sessions (list, sign out one, sign out everywhere —
/// which also reaches the apps registered for back-channel logout — sign out this one) and its own audit events. None of these adds or removes a way in, so none needs a recent
/// sign-in. The saved language (`PUT /api/account/language`) cannot lock anyone out either.
package struct AccountRoutes {
    package let sesame: ServerCore
    package let store: any AccountStorage
    package let factorVerifier: FactorVerifier
    package let backChannelLogout: BackChannelLogout

    package init(
        sesame: ServerCore, store: any AccountStorage, factorVerifier: FactorVerifier,
        backChannelLogout: BackChannelLogout
    ) {
        self.sesame = sesame
        self.store = store
        self.factorVerifier = factorVerifier
        self.backChannelLogout = backChannelLogout
    }

    package struct AccountBody: ResponseEncodable, Sendable {
        package let user: AccountUser
        package let csrfToken: String
        package let session: SessionBody
        package let hasPassword: Bool
        package let passkeyCount: Int
        /// Second factors set up (declared `Factor`s, e.g. `totp`).
        package let secondFactors: [Factor]
        package let recoveryCodesRemaining: Int
        /// The slugs of the groups the account is in (read-only here: an operator or admin changes them; the
        /// applications they open are in `GET /api/account/apps`).
        package let groups: [String]
        /// The language the person saved (a shipped tag of the catalog), or null: the browser's choice.
        package let language: String?

        private enum CodingKeys: String, CodingKey {
            case user, csrfToken, session, hasPassword, passkeyCount, secondFactors, recoveryCodesRemaining, groups
            case language
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(user, forKey: .user)
            try c.encode(csrfToken, forKey: .csrfToken)
            try c.encode(session, forKey: .session)
            try c.encode(hasPassword, forKey: .hasPassword)
            try c.encode(passkeyCount, forKey: .passkeyCount)
            try c.encode(secondFactors, forKey: .secondFactors)
            try c.encode(recoveryCodesRemaining, forKey: .recoveryCodesRemaining)
            try c.encode(groups, forKey: .groups)
            // Written as null when none is saved, so a page can tell "none" from an older server.
            try c.encode(language, forKey: .language)
        }
    }

    /// `PUT /api/account/language`: a shipped tag of the catalog, or null for the browser's choice. The key must be
    /// there (`{}` is malformed).
    package struct LanguageChange: Decodable, Sendable {
        package let language: String?

        private enum CodingKeys: String, CodingKey { case language }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            language = try c.decode(String?.self, forKey: .language)
        }
    }

    package struct LanguageChanged: ResponseEncodable, Sendable {
        package let status: String
        package let language: String?

        private enum CodingKeys: String, CodingKey { case status, language }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(status, forKey: .status)
            try c.encode(language, forKey: .language)
        }
    }

    package struct SessionBody: Codable, Sendable {
        package let id: String
        package let createdAt: Date
        package let lastSeenAt: Date
        package let expiresAt: Date
        package let userAgent: String
        package let method: String
        package let current: Bool

        package init(_ record: SessionRecord, current: Bool) {
            id = record.id
            createdAt = record.createdAt
            lastSeenAt = record.lastSeenAt
            expiresAt = record.expiresAt
            userAgent = record.userAgent
            method = record.method
            self.current = current
        }
    }

    package struct SessionList: ResponseEncodable, Sendable {
        package let sessions: [SessionBody]
        package func encode(to encoder: any Encoder) throws { try sessions.encode(to: encoder) }
    }

    /// `PATCH /api/account`: the fields that can change (only the display name; the username is the account's key
    /// and stays).
    package struct AccountChange: Decodable, Sendable {
        package let displayName: String
    }

    package struct AccountChanged: ResponseEncodable, Sendable {
        package let status: String
        package let user: AccountUser
    }

    package struct AuditBody: ResponseEncodable, Sendable {
        package let events: [AuditEventBody]
    }

    package struct AuditEventBody: Codable, Sendable {
        package let at: Date
        package let kind: String
        package let outcome: String
        package let clientAddress: String
        package let detail: String
    }

    package func register(on router: Router<SesameRequestContext>) {
        let account = router.group("/api/account", context: SignedInRequestContext.self)
        // Viewing the account and signing out: a limited session (recovery by email) may too.
        let anyAccount = router.group("/api/account", context: LimitedSessionRequestContext.self)
        let anySession = router.group("/api/session", context: LimitedSessionRequestContext.self)

        anyAccount.get("") { _, context in
            let user = context.user
            return AccountBody(
                user: AccountUser(user),
                csrfToken: sesame.sessions.csrfToken(for: context.authentication.tokenHash),
                session: SessionBody(context.authentication.session, current: true),
                hasPassword: try await store.password(userID: user.id) != nil,
                passkeyCount: try await store.credentials(userID: user.id).count,
                secondFactors: try await factorVerifier.available(for: user),
                recoveryCodesRemaining: try await store.unusedRecoveryCodeCount(userID: user.id),
                groups: try await sesame.accountGroups.groupSlugs(userID: user.id),
                language: try await store.savedLanguage(userID: user.id)
            )
        }

        // Save the language of the person's pages, mails and `locale` claim, or clear it (null: the browser's
        // choice). Only the catalog's shipped languages (not the pseudo-language).
        account.put("/language") { request, context in
            let body = try await request.decode(as: LanguageChange.self, context: context)
            let shipped = sesame.languages.catalog.shipped.map(\.tag)
            if let tag = body.language, !shipped.contains(tag) {
                throw APIError.invalidField(
                    .unknownLanguage, "Expected one of \(shipped.joined(separator: ", ")), or null.")
            }
            guard try await store.setLanguage(userID: context.user.id, body.language, at: sesame.now) else {
                throw APIError.unauthenticated
            }
            return LanguageChanged(status: body.language == nil ? "cleared" : "saved", language: body.language)
        }

        // Change the display name; the page then sends `signalCurrentUserDetails` so credential managers show it.
        account.patch("") { request, context in
            let body = try await request.decode(as: AccountChange.self, context: context)
            let displayName = try ShownNames.displayName(body.displayName)
            guard try await store.setDisplayName(userID: context.user.id, displayName, at: sesame.now) else {
                throw APIError.unauthenticated
            }
            var user = context.user
            user.displayName = displayName
            await sesame.audit.record(.accountRenamed, .success, user: user, context: context)
            return AccountChanged(status: "renamed", user: AccountUser(user))
        }

        account.get("/sessions") { _, context in
            let sessions = try await store.sessions(userID: context.user.id, now: sesame.now)
            return SessionList(
                sessions: sessions.map { SessionBody($0, current: $0.id == context.authentication.session.id) })
        }

        account.delete("/sessions/{id}") { _, context in
            let id = try context.parameters.require("id")
            guard id.utf8.count <= 64, try await store.deleteSession(userID: context.user.id, id: id) else {
                throw APIError.notFound
            }
            await sesame.audit.record(.sessionRevoked, .success, user: context.user, context: context)
            var headers: HTTPFields = [:]
            if id == context.authentication.session.id, context.authentication.carrier == .cookie {
                headers[.setCookie] = sesame.cookies.clear(.session)
            }
            return EditedResponse(headers: headers, response: Status(status: "signed_out"))
        }

        // Sign out everywhere, this session included, and out of every app: the person's OAuth grants end with the
        // sessions (a refresh token minted from a stolen session must not outlive this). The apps to tell are found
        // first, while their grants are still live.
        account.delete("/sessions") { _, context in
            let apps = try await backChannelLogout.clients(of: context.user.id)
            let count = try await store.signOutEverywhere(userID: context.user.id, at: sesame.now)
            await sesame.audit.record(
                .sessionRevokedAll, .success, user: context.user, context: context, detail: "\(count) sessions")
            backChannelLogout.send(to: apps, userID: context.user.id)
            return EditedResponse(
                headers: [.setCookie: sesame.cookies.clear(.session)],
                response: Status(status: "signed_out", count: count))
        }

        // Sign out this session.
        anySession.delete("") { _, context in
            _ = try await store.deleteSession(userID: context.user.id, id: context.authentication.session.id)
            await sesame.audit.record(.signOut, .success, user: context.user, context: context)
            return EditedResponse(
                headers: [.setCookie: sesame.cookies.clear(.session)], response: Status(status: "signed_out"))
        }

        // "Download my data": everything held about the person (`AccountExport`), as a file; the export is audited.
        account.get("/export") { _, context in
            let document = try await AccountExport.build(
                for: context.user, store: store, groups: sesame.accountGroups, providers: sesame.providers,
                now: sesame.now, fullPhoneNumber: false)
            let bytes = try document.json()
            await sesame.audit.record(.accountExported, .success, user: context.user, context: context)
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/json; charset=utf-8",
                    .contentDisposition: "attachment; filename=\"sesame-account.json\"",
                    .cacheControl: "no-store",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }

        account.get("/audit") { _, context in
            let events = try await store.auditEvents(userID: context.user.id, limit: 100)
            return AuditBody(
                events: events.map {
                    AuditEventBody(
                        at: $0.at, kind: $0.kind, outcome: $0.outcome, clientAddress: $0.clientAddress,
                        detail: $0.detail)
                }
            )
        }
    }
}
