import Foundation
import Hummingbird
import SesameBytes
import SesameCore
import WebAuthn

/// Recovery by email (`emailRecovery`, off by default; docs/email.md, "Recovery by email"): a person who has no
/// passkey they can use asks for a code at their verified address, by username or address, and the code signs them
/// into a limited session (`SessionLimitation.emailRecovery`) that may only view the account and add a passkey or
/// security key.
///
/// `POST /api/recovery/email {identifier}` answers 202 with a `recoveryToken` whatever the name: for an enabled
/// account with a verified address the code is mailed; for any other name the same work is done (the same lookup,
/// a challenge row with the MAC of a code no one is told) and nothing is mailed. `POST /api/recovery/email/verify
/// {recoveryToken, code}` checks the code: the challenge row keyed by the token's SHA-256 holds the code's HMAC
/// under the server secret (bound to the token), compared in constant time; guesses are counted per account (or per
/// token, for a name with no account) and per client address; the row is consumed by the right code (single use)
/// and expires after 15 minutes. The limited session, its audit event and the mail "Your account was recovered by
/// email" are written in one transaction.
package struct EmailRecovery: Sendable {
    package let sesame: ServerCore
    package let store: any EmailStore
    package let mails: EmailMails

    package init(sesame: ServerCore, store: any EmailStore) {
        self.sesame = sesame
        self.store = store
        self.mails = EmailMails(sesame.configuration)
    }

    /// How long a code works.
    package static let lifetime: TimeInterval = 15 * 60
    /// Digits in a code.
    package static let digits = 8

    package struct AskRequest: Decodable, Sendable { package let identifier: String }
    package struct VerifyRequest: Decodable, Sendable {
        package let recoveryToken: String
        package let code: String
    }

    package struct AskedBody: ResponseEncodable, Sendable {
        package let status: String
        package let recoveryToken: String
        package let expiresAt: Date
    }

    /// Kept in the challenge row: the code's MAC (never the code).
    package struct PendingRecovery: Codable, Sendable {
        package let mac: String
    }

    package func requireEnabled() throws {
        guard sesame.configuration.emailRecovery, sesame.configuration.email != .off else {
            throw APIError.emailRecoveryNotEnabled
        }
    }

    private func mac(tokenHash: [UInt8], code: String) -> [UInt8] {
        Secrets.hmac(key: sesame.serverSecret, Array("email-recovery:".utf8) + tokenHash + Array(":\(code)".utf8))
    }

    private static func code() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(
            (0..<digits).map { _ in Character(String(Int.random(in: 0..<10, using: &generator))) })
    }

    /// Starts a recovery: one answer whether or not the name is an account's.
    package func ask(_ raw: String, request: Request? = nil, context: some ClientContext) async throws -> AskedBody {
        try requireEnabled()
        let identifier = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !identifier.isEmpty, identifier.utf8.count <= 320 else {
            throw APIError.invalidField(.badRequest, "Give your username or your email address.")
        }
        // Usernames and addresses have the same key form (lower-cased), so one key finds either.
        let key = Usernames.key(identifier)
        // No username or address holds a control character (PostgreSQL refuses a NUL in a bind): such a name is no
        // account's, and takes the same path as any other unknown one.
        let target =
            key.unicodeScalars.contains { $0.properties.generalCategory == .control }
            ? nil : try await store.recoveryTarget(key: key)
        // Counted per account (or per name asked for, when none) and per client address.
        try await sesame.rateLimiter.attempt(
            sesame.rateLimiter.key(
                .emailRecoverySend, account: target?.userID ?? "name:\(key)", address: context.clientAddress))
        let code = Self.code()
        let (token, tokenHash) = Secrets.token()
        let expires = try await sesame.ceremonies.begin(
            .emailRecovery, id: tokenHash, userID: target?.userID,
            payload: PendingRecovery(mac: Base64URL.encode(mac(tokenHash: tokenHash, code: code))),
            lifetime: Self.lifetime)
        let now = sesame.now
        if let target {
            let mail = mails.recoveryCode(
                to: target.address, username: target.username, code: code, minutes: Int(Self.lifetime / 60),
                tag: await sesame.noticeLanguage(userID: target.userID, request: request))
            let event = AuditEvent(
                at: now, kind: AuditKind.emailRecoveryRequested.rawValue, outcome: AuditOutcome.success.rawValue,
                userID: target.userID, username: target.username, clientAddress: context.clientAddress, detail: "")
            try await store.queueRecoveryCode(mail, audit: event, now: now)
            sesame.audit.counted(event)
        } else {
            // Nothing is mailed, and the name typed is not kept (people type passwords into such fields).
            await sesame.audit.record(
                .emailRecoveryRequested, .refused, user: nil, context: context, detail: "no such account")
        }
        return AskedBody(status: "code_sent", recoveryToken: token, expiresAt: expires)
    }

    /// Checks a code; the right one opens a limited session.
    package func verify(_ body: VerifyRequest, request: Request, context: some ClientContext) async throws
        -> EditedResponse<SessionIssuedBody>
    {
        try requireEnabled()
        guard SessionIssuer.isWellFormed(body.recoveryToken) else { throw APIError.invalidRecoveryCode }
        let tokenHash = Secrets.sha256(body.recoveryToken)
        guard let record = try await sesame.ceremonies.peek(.emailRecovery, id: tokenHash),
            let pending = try? sesame.ceremonies.payload(record, as: PendingRecovery.self),
            let stored = try? Base64URL.decode(pending.mac)
        else { throw APIError.invalidRecoveryCode }
        let limit = sesame.rateLimiter.key(
            .emailRecoveryCode, account: record.userID ?? "token:\(Hex.encode(tokenHash.prefix(16)))",
            address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        let typed = body.code.trimmingCharacters(in: .whitespaces)
        let wellFormed = typed.utf8.count == Self.digits && typed.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        let matches = wellFormed && ConstantTime.equal(stored, mac(tokenHash: tokenHash, code: typed))
        let user: User? =
            if let id = record.userID { try await sesame.store.user(id: id) } else { nil }
        guard matches, let user, !user.disabled else {
            await sesame.audit.record(.emailRecoverySignedIn, .failure, user: user, context: context)
            throw APIError.invalidRecoveryCode
        }
        // Single use: of two right answers at once, one consumes the row.
        do {
            _ = try await sesame.ceremonies.finish(.emailRecovery, id: tokenHash)
        } catch {
            throw APIError.invalidRecoveryCode
        }
        try await sesame.rateLimiter.succeeded(limit)
        let issued = sesame.sessions.prepare(
            user: user, method: .emailCode, limitation: .emailRecovery, request: request)
        let event = sesame.audit.event(
            .emailRecoverySignedIn, .success, user: user, clientAddress: context.clientAddress)
        let notice = AccountNotice(
            .emailRecovered, userID: user.id, username: user.username, clientAddress: context.clientAddress,
            at: issued.record.createdAt,
            details: AccountNoticeDetail.signIn(
                userAgent: request.headers[.userAgent], clientAddress: context.clientAddress),
            language: await sesame.noticeLanguage(userID: user.id, request: request), notices: sesame.accountNotices)
        try await store.startRecoverySession(
            tokenHash: issued.tokenHash, session: issued.record, audit: event, notice: notice)
        sesame.audit.counted(event)
        return sesame.sessions.signedIn(issued, user: user, request: request)
    }

    package func register(on router: Router<SesameRequestContext>) {
        router.post("/api/recovery/email") { request, context in
            let body = try await request.decode(as: AskRequest.self, context: context)
            return EditedResponse(
                status: .accepted, response: try await ask(body.identifier, request: request, context: context))
        }
        router.post("/api/recovery/email/verify") { request, context in
            let body = try await request.decode(as: VerifyRequest.self, context: context)
            return try await verify(body, request: request, context: context)
        }
    }
}
