import Foundation
import Hummingbird
import SesameBytes
import SesameCore
import WebAuthn

/// Recovery links (docs/console.md, "Recovery links"): an administrator makes a single-use link for a person who
/// lost their passkeys, mailed to the person's verified address through the outbox or shown once to the
/// administrator; opening it gives the person the limited session of recovery by email
/// (`SessionLimitation.emailRecovery`, method `recovery-link`), which may only view the account and add a passkey.
///
/// In this target, beside recovery by email, because both end in the same limited session with the same notice
/// mail and page flow, and the mailed link needs the verified address this target keeps.
///
/// A link is `<id>.<secret>` (16 hex characters, then 32 random bytes in base64url), in the fragment of
/// `/recover/link`, so no request line or server log holds it; the page posts it to `POST /api/recovery/link`. The
/// row keeps the SHA-256 of the secret only, compared in constant time; it works once, for `recoveryLinkHours`
/// (24 by default); tries are counted per link id and per client address; a new link ends the person's unused ones.
/// Making one and using one are audited (`recovery_link.created` naming the maker, `recovery_link.used`).
package struct RecoveryLinkMaker: Sendable {
    package let store: any RecoveryLinkStore & EmailStore & AccountStore
    package let configuration: ServerConfiguration
    package let clock: ServerClock
    package let mails: EmailMails

    package init(
        store: any RecoveryLinkStore & EmailStore & AccountStore, configuration: ServerConfiguration, clock: ServerClock
    ) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.mails = EmailMails(configuration)
    }

    /// How a link reaches the person.
    package enum Delivery: String, Sendable, Codable {
        /// To the person's verified address, through the outbox, in the link's transaction.
        case mail
        /// Given back once, for the administrator to hand over.
        case show
    }

    /// A link made: the whole link only when shown.
    package struct Made: ResponseEncodable, Sendable, Equatable {
        package let id: String
        package let userId: String
        package let username: String
        package let deliver: Delivery
        package let expiresAt: Date
        /// The link, for `show` only; never stored and never given again.
        package let link: String?
        /// The address it was mailed to, for `mail` only.
        package let address: String?
    }

    /// The id and secret of a well-formed token.
    package static func parse(_ token: String) -> (id: String, secret: String)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 16,
            parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            parts[1].utf8.count == 43, (try? Base64URL.decode(String(parts[1])))?.count == 32
        else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// The account an administrator names: by id, or by username.
    package func person(_ name: String) async throws -> User {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 320,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw APIError(.notFound, .notFound, "No account has that id or username.") }
        if let user = try await store.user(id: trimmed) { return user }
        if let user = try await store.user(usernameKey: Usernames.key(trimmed)) { return user }
        throw APIError(.notFound, .notFound, "No account has that id or username.")
    }

    /// Makes a link for `person` (an id or a username), delivered as asked, audited naming `actor`. The mail is in
    /// the language `language` gives for the person (their saved choice, else the asking request's), else the
    /// default.
    package func make(
        for name: String, deliver: Delivery, by actor: AdminActor,
        language: (@Sendable (User) async -> String)? = nil
    ) async throws -> Made {
        let user = try await person(name)
        guard !user.disabled else { throw APIError.accountDisabled }
        var address: String? = nil
        if deliver == .mail {
            guard configuration.email != .off, let verified = try await store.email(userID: user.id)?.address else {
                throw APIError(
                    .conflict, .recoveryLinkNoAddress,
                    "This account has no verified email address; show the link and hand it over instead.")
            }
            address = verified
        }
        let id = Hex.encode(Secrets.random(8))
        let secret = Base64URL.encode(Secrets.random(32))
        let token = "\(id).\(secret)"
        let now = clock.now()
        let hours = configuration.recoveryLinkHours
        let expires = now.addingTimeInterval(TimeInterval(hours) * 3600)
        let link = mails.recoveryLink(token: token)
        let event = actor.event(.recoveryLinkCreated, subject: user, detail: "\(deliver.rawValue) \(id)", at: now)
        let record = RecoveryLinkRecord(
            id: id, userID: user.id, secretHash: Secrets.sha256(secret), delivery: deliver.rawValue,
            createdBy: Self.maker(actor), createdAt: now, expiresAt: expires)
        let tag = await language?(user) ?? configuration.defaultLanguage
        let mail = address.map {
            mails.recoveryLink(to: $0, username: user.username, link: link, hours: hours, tag: tag)
        }
        try await store.createRecoveryLink(record, mail: mail, audit: event)
        return Made(
            id: id, userId: user.id, username: user.username, deliver: deliver, expiresAt: expires,
            link: deliver == .show ? link : nil, address: address)
    }

    static func maker(_ actor: AdminActor) -> String {
        switch actor {
        case .commandLine: "operator"
        case .admin(let principal, _): principal.actor
        }
    }
}

/// The routes of recovery links: the admin API's `POST /api/admin/people/{id}/recovery-link` (scope `people`) and
/// the link's own `POST /api/recovery/link {token}`, which opens the limited session.
package struct RecoveryLinks: Sendable {
    package let sesame: ServerCore
    package let store: any RecoveryLinkStore & EmailStore & AccountStore
    package let maker: RecoveryLinkMaker

    package init(sesame: ServerCore, store: any RecoveryLinkStore & EmailStore & AccountStore) {
        self.sesame = sesame
        self.store = store
        self.maker = RecoveryLinkMaker(store: store, configuration: sesame.configuration, clock: sesame.clock)
    }

    /// The admin scope of the people's routes, which this one belongs to.
    package static let scope = AdminScope("people")

    package struct MakeRequest: Decodable, Sendable { package let deliver: String }
    package struct UseRequest: Decodable, Sendable { package let token: String }

    /// Opens the limited session a link gives, spending the link.
    package func use(_ token: String, request: Request, context: some ClientContext) async throws
        -> EditedResponse<SessionIssuedBody>
    {
        guard let (id, secret) = RecoveryLinkMaker.parse(token) else {
            try await sesame.rateLimiter.attempt(sesame.rateLimiter.key(address: context.clientAddress))
            await sesame.audit.record(.recoveryLinkUsed, .failure, user: nil, context: context, detail: "malformed")
            throw APIError.invalidRecoveryLink
        }
        let limit = sesame.rateLimiter.key(.recoveryLink, account: id, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        let now = sesame.now
        let record = try await store.recoveryLink(id: id)
        let user: User? = if let record { try await store.user(id: record.userID) } else { nil }
        guard let record, ConstantTime.equal(record.secretHash, Secrets.sha256(secret)), record.usable(at: now),
            let user, !user.disabled
        else {
            await sesame.audit.record(.recoveryLinkUsed, .failure, user: user, context: context, detail: id)
            throw APIError.invalidRecoveryLink
        }
        let issued = sesame.sessions.prepare(
            user: user, method: .recoveryLink, limitation: .emailRecovery, request: request)
        var event = sesame.audit.event(.recoveryLinkUsed, .success, user: user, clientAddress: context.clientAddress)
        event.detail = id
        let notice = AccountNotice(
            .recoveryLinkUsed, userID: user.id, username: user.username, clientAddress: context.clientAddress,
            at: issued.record.createdAt,
            details: AccountNoticeDetail.signIn(
                userAgent: request.headers[.userAgent], clientAddress: context.clientAddress),
            language: await sesame.noticeLanguage(userID: user.id, request: request), notices: sesame.accountNotices)
        guard
            try await store.useRecoveryLink(
                id: id, at: issued.record.createdAt, tokenHash: issued.tokenHash, session: issued.record,
                audit: event, notice: notice)
        else {
            await sesame.audit.record(.recoveryLinkUsed, .failure, user: user, context: context, detail: id)
            throw APIError.invalidRecoveryLink
        }
        try await sesame.rateLimiter.succeeded(limit)
        sesame.audit.counted(event)
        return sesame.sessions.signedIn(issued, user: user, request: request)
    }

    /// The admin API's route, on the admin group (`/api/admin`).
    package func register(admin: RouterGroup<AdminRequestContext>) {
        admin.post("people/{id}/recovery-link") { request, context in
            try context.admin.require(Self.scope)
            let body = try await request.decode(as: MakeRequest.self, context: context)
            guard let deliver = RecoveryLinkMaker.Delivery(rawValue: body.deliver) else {
                throw APIError.invalidField(.badRequest, "deliver is mail or show.")
            }
            let made = try await maker.make(
                for: try context.parameters.require("id"), deliver: deliver, by: context.actor
            ) { [sesame] user in await sesame.noticeLanguage(userID: user.id, request: request) }
            return EditedResponse(status: .created, response: made)
        }
    }

    /// The link's own route.
    package func register(on router: Router<SesameRequestContext>) {
        router.post("/api/recovery/link") { request, context in
            let body = try await request.decode(as: UseRequest.self, context: context)
            return try await use(body.token, request: request, context: context)
        }
    }
}
