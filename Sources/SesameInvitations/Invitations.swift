import Foundation
import SQLKit
import SesameBytes
import SesameCore
import WebAuthn

/// Sign-up by invitation (docs/invitations.md): the rules before the store.
///
/// An invitation's token is `<id>.<secret>`: the id is 8 random bytes in lowercase hex (what the operator's list
/// and `revoke` name), the secret 32 random bytes in base64url, stored only as its SHA-256 and compared in constant
/// time. The link carries it in its fragment (`/signup#invitation=…`), so no request line, log or `Referer` holds
/// it; the sign-up page sends it with the options request.
///
/// - `check` (sign-up's options step): every try counts against the client address and against the invitation
///   (`GuessableSecret.invitation`); a right one is given back. Malformed, unknown, wrong, used, revoked and expired
///   are one answer, `invitation_invalid`, so nothing is learned about which invitations exist.
/// - `redeem` (in the sign-up's transaction): spends the invitation in one statement (single use even against a
///   concurrent sign-up with the same link), joins its groups (`AccountGroups.join`) and writes `invitation.used`;
///   an invitation used, revoked or expired since the check, or a group removed since, refuses the sign-up and the
///   transaction writes nothing.
package struct Invitations: SignUpInvitations {
    package let store: any InvitationStore
    package let rateLimiter: RateLimiter
    package let audit: AuditLog
    package let clock: ServerClock
    package let groups: any AccountGroups

    package init(sesame: ServerCore, store: any InvitationStore) {
        self.store = store
        rateLimiter = sesame.rateLimiter
        audit = sesame.audit
        clock = sesame.clock
        groups = sesame.accountGroups
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

    /// A new token: its id, the whole token, and the secret's hash to store.
    package static func newToken() -> (id: String, token: String, secretHash: [UInt8]) {
        let id = Hex.encode(Secrets.random(8))
        let secret = Base64URL.encode(Secrets.random(32))
        return (id, id + "." + secret, Secrets.sha256(secret))
    }

    package func check(token: String, clientAddress: String) async throws -> String {
        guard let (id, secret) = Self.parse(token) else {
            try await rateLimiter.attempt(rateLimiter.key(address: clientAddress))
            await audit.record(.invitationUsed, .failure, user: nil, clientAddress: clientAddress, detail: "malformed")
            throw APIError.invitationInvalid
        }
        let limit = rateLimiter.key(.invitation, account: id, address: clientAddress)
        try await rateLimiter.attempt(limit)
        guard let record = try await store.invitation(id: id),
            ConstantTime.equal(record.secretHash, Secrets.sha256(secret)), record.usable(at: clock.now())
        else {
            await audit.record(.invitationUsed, .failure, user: nil, clientAddress: clientAddress, detail: id)
            throw APIError.invitationInvalid
        }
        // Right: this try is given back; wrong guesses before it still count.
        try await rateLimiter.forgive(limit)
        return id
    }

    package func redeem(
        id: String, userID: String, username: String, clientAddress: String, at: Date, in db: any SQLDatabase
    ) async throws {
        guard let slugs = try await SQLStore.spendInvitation(id: id, userID: userID, at: at, in: db) else {
            throw APIError.invitationInvalid
        }
        do { try await groups.join(userID: userID, groups: slugs, at: at, in: db) } catch {
            // A group removed since the invitation was made: the invitation can no longer do what it says.
            throw APIError.invitationInvalid
        }
        let event = AuditEvent(
            at: at, kind: AuditKind.invitationUsed.rawValue, outcome: AuditOutcome.success.rawValue, userID: userID,
            username: username, clientAddress: clientAddress,
            detail: slugs.isEmpty ? id : id + " groups=" + slugs.joined(separator: ","))
        try await db.raw(SQLStore.auditInsert(event)).run()
    }
}
