import Foundation
import Hummingbird
import SesameBytes
import SesameCore
import WebAuthn

/// The rules of an account's address: adding or changing it (a pending address beside the verified one, a mail
/// with a code and a link written in the same transaction), verifying it (code or link: single use, 15 minutes,
/// constant-time compare; guesses rate limited per account and per client address, mails also per address mailed),
/// removing it.
///
/// Nothing tells a person about other accounts: adding an address another account verified answers exactly as a
/// free one does (the mail that goes out is a notice to the holder, with no code, so that verification can never
/// succeed), and every failed verification (wrong, used, expired, replaced, or the address taken meanwhile) gets
/// the one answer `invalid_email_code`.
package struct EmailVerifier: Sendable {
    package let sesame: ServerCore
    package let store: any EmailStore
    package let mails: EmailMails

    package init(sesame: ServerCore, store: any EmailStore) {
        self.sesame = sesame
        self.store = store
        self.mails = EmailMails(sesame.configuration)
    }

    /// How long a code and a link work.
    package static let lifetime: TimeInterval = 15 * 60

    package var policy: EmailAddressPolicy { sesame.configuration.email }

    package func requireEnabled() throws {
        guard policy != .off else { throw APIError.emailNotEnabled }
    }

    /// What a started change left pending.
    package struct Started: Sendable {
        package let address: String
        package let expiresAt: Date
    }

    /// Starts adding or changing the account's address: checks it, counts the send, and keeps it pending with the
    /// mail that verifies it. The verified address stays in force until then.
    package func begin(_ raw: String, user: User, request: Request? = nil, context: some ClientContext) async throws
        -> Started
    {
        try requireEnabled()
        guard raw.utf8.count <= 320, let address = EmailAddresses.validate(raw) else {
            throw APIError.invalidField(.invalidEmail, "Give an email address like name@example.org.")
        }
        let key = EmailAddresses.key(address)
        let record = try await store.email(userID: user.id)
        if let current = record?.address, EmailAddresses.key(current) == key {
            throw APIError(.conflict, .emailUnchanged, "This is your address already.")
        }
        // Every send counts, per account, per client address and per address mailed; none is given back.
        try await sesame.rateLimiter.attempt(
            sesame.rateLimiter.key(.emailSend, account: user.id, address: context.clientAddress, subjects: [key]))
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        let (token, tokenHash) = Secrets.token()
        let now = sesame.now
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        let holder = try await store.emailHolder(key: key)
        let taken = holder != nil && holder != user.id
        // The holder of a taken address is another person: their saved language, else this request's.
        let tag = await sesame.noticeLanguage(userID: taken ? holder : user.id, request: request)
        let mail =
            taken
            ? mails.inUse(to: address, tag: tag)
            : mails.verification(to: address, code: code, token: token, minutes: Int(Self.lifetime / 60), tag: tag)
        try await store.beginEmailChange(
            userID: user.id,
            pending: PendingEmail(
                address: address, key: key, codeMAC: mac(userID: user.id, key: key, code: code), tokenHash: tokenHash,
                expiresAt: expiresAt),
            mail: mail, mailKind: taken ? EmailMails.inUseKind : EmailMails.verificationKind, now: now)
        await sesame.audit.record(
            .emailAdded, .success, user: user, context: context, detail: record?.address == nil ? "added" : "changing")
        return Started(address: address, expiresAt: expiresAt)
    }

    /// Verifies the pending address with the code from the mail, typed by the signed-in account.
    package func confirm(code: String, user: User, request: Request? = nil, context: some ClientContext) async throws
        -> EmailVerification
    {
        try requireEnabled()
        // Per account and per client address. Not per address verified: a code is bound to its account, so guesses
        // from other accounts at the same address gain nothing, and counting them would let anyone hold up the
        // address's rightful verification.
        let limit = sesame.rateLimiter.key(.emailCode, account: user.id, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        let typed = code.trimmingCharacters(in: .whitespaces)
        let wellFormed = typed.utf8.count == 6 && typed.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        let userID = user.id
        let serverSecret = sesame.serverSecret
        let verification =
            wellFormed
            ? try await store.completeEmailChange(
                proof: .code(
                    userID: userID,
                    matches: { stored, key in
                        ConstantTime.equal(stored, Self.mac(serverSecret, userID: userID, key: key, code: typed))
                    }), now: sesame.now,
                changedMail: changedMail(await sesame.noticeLanguage(userID: userID, request: request)),
                mailKind: EmailMails.changedKind) : nil
        guard let verification else {
            await sesame.audit.record(.emailVerified, .failure, user: user, context: context, detail: "code")
            throw APIError.invalidEmailCode
        }
        try await sesame.rateLimiter.succeeded(limit)
        await recordVerified(verification, user: user, context: context, detail: "code")
        return verification
    }

    /// Verifies the pending address with the link's token; no session is needed (the token is 256 random bits that
    /// only the mail carried). Wrong tokens count against the client address.
    /// The mail to the old address is in this request's language (the account is not known before the token is
    /// checked, in the change's transaction).
    package func confirm(token: String, request: Request? = nil, context: some ClientContext) async throws
        -> EmailVerification
    {
        try requireEnabled()
        let limit = sesame.rateLimiter.key(address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        let wellFormed = token.utf8.count == 43 && (try? Base64URL.decode(token))?.count == 32
        let verification =
            wellFormed
            ? try await store.completeEmailChange(
                proof: .token(hash: Secrets.sha256(token)), now: sesame.now,
                changedMail: changedMail(await sesame.noticeLanguage(userID: nil, request: request)),
                mailKind: EmailMails.changedKind) : nil
        guard let verification else {
            await sesame.audit.record(.emailVerified, .failure, user: nil, context: context, detail: "link")
            throw APIError.invalidEmailCode
        }
        try await sesame.rateLimiter.forgive(limit)
        let user = try await sesame.store.user(id: verification.userID)
        await recordVerified(verification, user: user, context: context, detail: "link")
        return verification
    }

    /// Removes the address (and any pending one); refused for a verified address when addresses are required.
    package func remove(user: User, context: some ClientContext) async throws {
        try requireEnabled()
        if policy == .required, try await store.email(userID: user.id)?.address != nil {
            throw APIError(.conflict, .emailRequired, "This site needs an email address: change it instead.")
        }
        guard try await store.removeEmail(userID: user.id) else { throw APIError.notFound }
        await sesame.audit.record(.emailRemoved, .success, user: user, context: context)
    }

    private func changedMail(_ tag: String) -> @Sendable (String, String) -> OutgoingMail {
        { [mails] old, new in mails.changed(from: old, to: new, tag: tag) }
    }

    private func recordVerified(
        _ verification: EmailVerification, user: User?, context: some ClientContext, detail: String
    ) async {
        await sesame.audit.record(
            verification.previous == nil ? .emailVerified : .emailChanged, .success, user: user, context: context,
            detail: detail)
    }

    /// The MAC a code is stored as: bound to the account and the address it verifies.
    private func mac(userID: String, key: String, code: String) -> [UInt8] {
        Self.mac(sesame.serverSecret, userID: userID, key: key, code: code)
    }

    package static func mac(_ secret: [UInt8], userID: String, key: String, code: String) -> [UInt8] {
        Secrets.hmac(key: secret, Array("email:\(userID):\(key):\(code)".utf8))
    }
}
