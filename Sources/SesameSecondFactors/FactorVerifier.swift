import Foundation
import Logging
import OneTimeCode
import WebAuthn
import SesameCore
import SesameBytes

/// Second-factor codes, with their rate limits and audit, for every feature that asks for one (password sign-in,
/// re-authentication, setting a factor up).
///
/// - TOTP: checked with the OneTimeCode verifier (window ±1 step); the accepted step is stored by a conditional
///   update, so a code is never accepted twice, even by two nodes at once.
/// - SMS: six random digits, stored as an HMAC under the server secret in a challenge row that expires with the
///   challenge timeout and is consumed on success; sending is limited to 5 per account per window.
/// - Recovery codes: salted hashes, each marked used by a conditional update.
///
/// Every guess is counted per account and per address before it is checked.
package struct FactorVerifier: Sendable {
    package let store: any SecondFactorStore
    package let rateLimiter: RateLimiter
    package let ceremonies: Ceremonies
    package let audit: AuditLog
    package let clock: ServerClock
    package let logger: Logger
    package let sms: any SMSSender
    package let serverSecret: [UInt8]
    package let configuration: ServerConfiguration
    /// Mails the owner when a factor is set up or a recovery code used (`AccountNotices`).
    package let accountNotices: any AccountNotices
    /// The language of those mails and of the codes it texts: the account's saved choice, else the request's
    /// `Accept-Language`, else the default (`ServerCore.languages`).
    package let languages: PageLanguages?

    package init(
        store: any SecondFactorStore, rateLimiter: RateLimiter, ceremonies: Ceremonies, audit: AuditLog,
        clock: ServerClock,
        logger: Logger, sms: any SMSSender, serverSecret: [UInt8], configuration: ServerConfiguration,
        accountNotices: any AccountNotices = NoAccountNotices(), languages: PageLanguages? = nil
    ) {
        self.accountNotices = accountNotices
        self.languages = languages
        self.store = store
        self.rateLimiter = rateLimiter
        self.ceremonies = ceremonies
        self.audit = audit
        self.clock = clock
        self.logger = logger
        self.sms = sms
        self.serverSecret = serverSecret
        self.configuration = configuration
    }

    /// The notice of a change `user` makes from this request, for the store to give in the change's transaction.
    private func notice(_ kind: AccountNoticeKind, user: User, context: some ClientContext) async -> AccountNotice {
        AccountNotice(
            kind, userID: user.id, username: user.username, clientAddress: context.clientAddress, at: clock.now(),
            language: await language(of: user, context: context), notices: accountNotices)
    }

    /// What `user` reads what this request writes them in: their saved choice, else the request's, else the default.
    private func language(of user: User, context: some ClientContext) async -> String {
        guard let languages else { return configuration.defaultLanguage }
        let asked = context.acceptLanguage.map {
            languages.choice.choose(saved: nil, uiLocales: nil, acceptLanguage: $0)
        }
        return await languages.tag(forUser: user.id, fallback: asked)
    }

    /// Codes are accepted for the current 30-second step and one step either side (clock drift, typing time).
    package static let window = 1

    /// The factors an account has set up, in the order a page offers them.
    package func available(for user: User) async throws -> [Factor] {
        try await Self.factorsSetUp(userID: user.id, store: store)
    }

    /// The factor a request names (`factor` of a password step or a re-authentication), or the typed error that
    /// lists the declared ones.
    package static func factor(named name: String) throws -> Factor {
        guard let factor = Factor.named(name, in: Factor.secondFactors) else {
            throw APIError.invalidField(
                .invalidFactor, "factor is one of \(Factor.secondFactors.map(\.rawValue).joined(separator: ", ")).")
        }
        return factor
    }

    /// The ceremony a second-factor code is given in, and what it is bound to: a code sent on request (SMS) for one
    /// ceremony is good for that one only. Features that ask for a factor name the ceremony, never the factor's key.
    package enum Ceremony: Sendable {
        /// A password sign-in's pending second step (the SHA-256 of its pending token).
        case signIn(pendingHash: [UInt8])
        /// A re-authentication inside a session (the SHA-256 of its session token).
        case reauthentication(sessionTokenHash: [UInt8])

        /// Where this ceremony's SMS code is kept.
        var smsKey: SMSCodeKey {
            switch self {
            case .signIn(let hash): SMSCodeKey(purpose: .smsSignIn, key: hash)
            case .reauthentication(let hash): SMSCodeKey(purpose: .smsReauthentication, key: hash)
            }
        }
    }

    /// Sends a code to the account's confirmed phone for a ceremony (a pending sign-in, a re-authentication).
    package func sendCode(for ceremony: Ceremony, user: User, context: some ClientContext) async throws {
        guard let phone = try await store.sms(userID: user.id), phone.confirmed else { throw APIError.smsNotEnabled }
        try await sendCode(ceremony.smsKey, user: user, phone: phone.phone, context: context)
    }

    /// Where an SMS code for a ceremony is kept: the purpose and what it is bound to (the pending step, the session).
    package struct SMSCodeKey: Sendable {
        package let purpose: ChallengePurpose
        package let key: [UInt8]

        package init(purpose: ChallengePurpose, key: [UInt8]) {
            self.purpose = purpose
            self.key = key
        }

        package var challengeID: [UInt8] { Secrets.sha256(Array("\(purpose.rawValue):".utf8) + key) }
    }

    /// Checks a code of a set-up factor; a wrong, replayed or unavailable one is audited as `kind` and refused.
    package func verify(
        _ factor: Factor, code: String, user: User, in ceremony: Ceremony, kind: AuditKind, context: some ClientContext
    ) async throws {
        guard code.utf8.count <= 64 else { throw APIError.invalidCode }
        if factor == .totp {
            guard let record = try await store.totp(userID: user.id), record.confirmed else {
                throw APIError.factorNotEnabled
            }
            try await checkTOTP(code, record: record, user: user, confirming: false, kind: kind, context: context)
        } else if factor == .sms {
            guard let phone = try await store.sms(userID: user.id), phone.confirmed else {
                throw APIError.factorNotEnabled
            }
            try await checkSMSCode(code, key: ceremony.smsKey, user: user, kind: kind, context: context)
        } else if factor == .recovery {
            try await checkRecoveryCode(code, user: user, kind: kind, context: context)
        } else {
            throw APIError.factorNotEnabled
        }
    }

    /// Checks a TOTP code (rate limited) and records its step so it cannot be used again. When `confirming`, the
    /// secret is confirmed only if it is still the one checked (`record.revision`).
    package func checkTOTP(
        _ code: String, record: TOTPRecord, user: User, confirming: Bool, kind: AuditKind, context: some ClientContext
    ) async throws {
        let limit = rateLimiter.key(.totp, account: user.id, address: context.clientAddress)
        try await rateLimiter.attempt(limit)
        let totp = try TOTP(secret: try OTPSecret(bytes: record.secret))
        let trimmed = code.trimmingCharacters(in: .whitespaces)
        let last: UInt64? = record.lastStep >= 0 ? UInt64(record.lastStep) : nil
        let result = try OTPVerifier(window: Self.window).verify(
            trimmed, totp: totp, lastAcceptedStep: last, at: clock.now())
        // The store's conditional update is the replay guard that holds across nodes and concurrent requests.
        let accepted: Bool
        if let step = result.acceptedStep, step <= UInt64(Int64.max) {
            accepted =
                confirming
                ? try await store.confirmTOTP(
                    userID: user.id, step: Int64(step), revision: record.revision,
                    notice: notice(.totpEnabled, user: user, context: context))
                : try await store.acceptTOTPStep(userID: user.id, step: Int64(step))
        } else {
            accepted = false
        }
        guard accepted else {
            await audit.record(kind, .failure, user: user, context: context, detail: Factor.totp.rawValue)
            throw APIError.invalidCode
        }
        try await rateLimiter.succeeded(limit)
    }

    package func checkRecoveryCode(_ code: String, user: User, kind: AuditKind, context: some ClientContext)
        async throws
    {
        let limit = rateLimiter.key(.recovery, account: user.id, address: context.clientAddress)
        try await rateLimiter.attempt(limit)
        var matched: [UInt8]?
        if code.utf8.count <= 64, let stored = try await store.recoveryCodes(userID: user.id),
            let set = try? RecoveryCodeSet(salt: stored.salt, hashes: stored.unused), let index = set.match(code)
        {
            matched = set.hashes[index]
        }
        guard let matched,
            try await store.useRecoveryCode(
                userID: user.id, hash: matched, at: clock.now(),
                notice: notice(.recoveryCodeUsed, user: user, context: context))
        else {
            await audit.record(kind, .failure, user: user, context: context, detail: Factor.recovery.rawValue)
            throw APIError.invalidCode
        }
        try await rateLimiter.succeeded(limit)
        await audit.record(.recoveryCodeUsed, .success, user: user, context: context)
    }

    // MARK: SMS codes

    /// What an SMS code's challenge row keeps: the code's MAC, never the code.
    package struct SMSCode: Codable, Sendable {
        package let mac: String
    }

    /// The MAC an SMS code is stored as.
    private func mac(_ code: String) -> [UInt8] {
        Secrets.hmac(key: serverSecret, Array("sms:\(code)".utf8))
    }

    /// Sends a code for a ceremony (a pending sign-in, a re-authentication), replacing any earlier one.
    package func sendCode(_ key: SMSCodeKey, user: User, phone: String, context: some ClientContext) async throws {
        try await send(to: phone, user: user, detail: key.purpose.rawValue, context: context) { code in
            try await ceremonies.begin(
                key.purpose, id: key.challengeID, userID: user.id, payload: SMSCode(mac: Base64URL.encode(mac(code))),
                replacing: true)
        }
    }

    package func checkSMSCode(_ code: String, key: SMSCodeKey, user: User, kind: AuditKind, context: some ClientContext)
        async throws
    {
        let limit = rateLimiter.key(.sms, account: user.id, address: context.clientAddress)
        try await rateLimiter.attempt(limit)
        let typed = code.trimmingCharacters(in: .whitespaces)
        let expected = Array(Base64URL.encode(mac(typed)).utf8)
        let stored = try await ceremonies.peek(key.purpose, id: key.challengeID).flatMap {
            try? ceremonies.payload($0, as: SMSCode.self)
        }
        guard typed.utf8.count == 6, let stored, ConstantTime.equal(Array(stored.mac.utf8), expected),
            (try? await ceremonies.finish(key.purpose, id: key.challengeID)) != nil
        else {
            await audit.record(kind, .failure, user: user, context: context, detail: Factor.sms.rawValue)
            throw APIError.invalidCode
        }
        try await rateLimiter.succeeded(limit)
    }

    /// Starts a phone-number change: the new number waits, sealed, under a challenge derived from the code sent to
    /// it; the confirmed number stays in force until `completePhoneChange`.
    package func beginPhoneChange(_ phone: String, user: User, context: some ClientContext) async throws {
        try await send(to: phone, user: user, detail: ChallengePurpose.phoneChange.rawValue, context: context) { code in
            try await store.beginPhoneChange(
                userID: user.id, phone: phone, challengeID: phoneChangeID(userID: user.id, code: code),
                purpose: ChallengePurpose.phoneChange.rawValue,
                expiresAt: clock.now().addingTimeInterval(TimeInterval(configuration.challengeTimeout))
            )
        }
        await audit.record(.smsChangeStarted, .success, user: user, context: context)
    }

    /// Confirms the number the code was sent to (rate limited like every code).
    package func completePhoneChange(code: String, user: User, context: some ClientContext) async throws {
        let limit = rateLimiter.key(.sms, account: user.id, address: context.clientAddress)
        try await rateLimiter.attempt(limit)
        let typed = code.trimmingCharacters(in: .whitespaces)
        guard typed.utf8.count == 6,
            try await store.completePhoneChange(
                userID: user.id, challengeID: phoneChangeID(userID: user.id, code: typed),
                purpose: ChallengePurpose.phoneChange.rawValue,
                now: clock.now(), notice: notice(.smsEnabled, user: user, context: context)
            ) != nil
        else {
            await audit.record(.smsEnabled, .failure, user: user, context: context, detail: Factor.sms.rawValue)
            throw APIError.invalidCode
        }
        try await rateLimiter.succeeded(limit)
        await audit.record(.smsEnabled, .success, user: user, context: context)
    }

    /// The challenge id of a pending phone-number change: the account and the MAC of the code sent to the new number.
    private func phoneChangeID(userID: String, code: String) -> [UInt8] {
        Secrets.sha256(Array("\(ChallengePurpose.phoneChange.rawValue):\(userID):".utf8) + mac(code))
    }

    /// Makes a code, lets `keep` store what checks it, and texts it in an origin-bound message; sends are rate
    /// limited per account (never given back) and per address.
    private func send(
        to phone: String, user: User, detail: String, context: some ClientContext, keep: (String) async throws -> Void
    ) async throws {
        let sends = rateLimiter.key(.smsSend, account: user.id, address: context.clientAddress)
        try await rateLimiter.attempt(sends)
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        try await keep(code)
        let host = URL(string: configuration.origin)?.host ?? configuration.rpID
        // The sentence in the account's language; the last line, `@host #code`, stays as browsers parse it.
        let tag = await language(of: user, context: context)
        let words = MailWords(siteName: configuration.rpName, defaultTag: configuration.defaultLanguage).in(tag)
        let message = try OriginBoundMessage(topLevelHost: host, code: code).message(
            text: words.text("mail.sms.code", ["code": code]))
        do {
            try await sms.send(to: phone, message: message)
        } catch {
            logger.error("SMS delivery failed", metadata: ["error_type": .string(String(describing: type(of: error)))])
            throw APIError(.badGateway, .smsNotSent, "The text message could not be sent. Try again later.")
        }
        await audit.record(.smsCodeSent, .success, user: user, context: context, detail: detail)
    }

    /// A mobile number in ITU-T E.164 form: `+`, a country code that does not start with 0, 7 to 15 digits in all.
    /// The account page checks the same pattern before sending (`account-sms.js`, the SMS card's script;
    /// `VocabularyTests` ties the two).
    package static let phonePattern = #"^\+[1-9][0-9]{6,14}$"#

    package static func isE164(_ phone: String) -> Bool {
        let bytes = Array(phone.utf8)
        guard bytes.count >= 8, bytes.count <= 16, bytes[0] == UInt8(ascii: "+"), bytes[1] != UInt8(ascii: "0") else {
            return false
        }
        return bytes.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}

extension FactorVerifier {
    /// The factors an account has set up, in the order pages offer them: the one list that sign-in,
    /// re-authentication, the account page and `sesame users show` read.
    package static func factorsSetUp(userID: String, store: any SecondFactorStore) async throws -> [Factor] {
        var factors: [Factor] = []
        if let totp = try await store.totp(userID: userID), totp.confirmed { factors.append(.totp) }
        if let sms = try await store.sms(userID: userID), sms.confirmed { factors.append(.sms) }
        if try await store.unusedRecoveryCodeCount(userID: userID) > 0 { factors.append(.recovery) }
        return factors
    }
}
