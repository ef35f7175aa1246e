import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OneTimeCode
import WebAuthn

/// Second factors for password sign-in: TOTP (authenticator apps), SMS codes and recovery codes.
///
/// Setup (signed in): `POST /api/account/totp` → secret, `otpauth:`/`apple-otpauth:` links and a QR PNG URL;
/// `POST /api/account/totp/confirm {code}`; `DELETE /api/account/totp`. `PUT /api/account/sms {phone}` sends a
/// code; `POST /api/account/sms/confirm {code}`; `DELETE /api/account/sms`. `POST /api/account/recovery-codes`
/// makes a new set and shows it once.
///
/// Sign-in: after `POST /api/sessions/password` answered `second_factor_required`,
/// `POST /api/sessions/second-factor/sms` sends a code and `POST /api/sessions/second-factor {factor, code}`
/// finishes with a session. Every code check is rate limited per account and per address; TOTP steps are
/// accepted once (replay refused); SMS codes are single-use and expire with the challenge timeout.
struct SecondFactorRoutes {
    let sesame: Sesame

    /// Codes are accepted for the current 30-second step and one step either side (clock drift, typing time).
    static let window = 1

    struct TOTPSetupBody: Codable, Sendable {
        /// Base32 secret, for typing into an app by hand.
        let secret: String
        let otpauthURI: String
        let appleOtpauthURI: String?
        /// GET this (with the session) for the QR code as PNG.
        let qrCodeURL: String
    }

    struct CodeBody: Decodable, Sendable { let code: String }
    struct PhoneBody: Decodable, Sendable { let phone: String }

    struct SecondFactorRequest: Decodable, Sendable {
        let factor: String
        let code: String
        /// The pending token from the password step (pages may rely on the `sesame_pending` cookie instead).
        let pendingToken: String?
    }

    struct PendingOnly: Decodable, Sendable { let pendingToken: String? }

    struct RecoveryCodesBody: Codable, Sendable {
        /// Shown once; only salted hashes are kept.
        let codes: [String]
    }

    struct Status: Codable, Sendable {
        let status: String
        var remaining: Int? = nil
    }

    func register(on router: Router<SesameRequestContext>) {
        // Setting up TOTP changes how the account signs in with its password (and re-authenticates): a sensitive
        // change, so every step needs a recent sign-in, like removing it.
        router.post("/api/account/totp") { _, context -> JSONResponse<TOTPSetupBody> in
            let auth = try context.requireRecentAuthentication(sesame)
            if let existing = try await sesame.store.totp(userID: auth.user.id), existing.confirmed {
                throw APIError(.conflict, "totp_already_enabled", "Turn the authenticator app off before setting up a new one.")
            }
            let secret = try OTPSecret.random()
            try await sesame.store.setPendingTOTP(userID: auth.user.id, secret: secret.bytes, at: sesame.now)
            let uris = try keyURIs(secret: secret, user: auth.user)
            return JSONResponse(
                TOTPSetupBody(secret: secret.base32, otpauthURI: uris.otpauth, appleOtpauthURI: uris.apple, qrCodeURL: "/api/account/totp/qr.png"),
                status: .created
            )
        }

        router.get("/api/account/totp/qr.png") { _, context -> Response in
            let auth = try context.requireRecentAuthentication(sesame)
            // Only an unconfirmed secret is shown again; a confirmed one is never displayed.
            guard let record = try await sesame.store.totp(userID: auth.user.id), !record.confirmed else { throw APIError.notFound }
            let uri = try keyURIs(secret: try OTPSecret(bytes: record.secret), user: auth.user).otpauth
            let png = try QRCode(encoding: uri).png()
            return Response(
                status: .ok, headers: [.contentType: "image/png", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: png))
            )
        }

        router.post("/api/account/totp/confirm") { request, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            let body = try await JSONBody.decode(CodeBody.self, from: request, context: context)
            guard let record = try await sesame.store.totp(userID: auth.user.id), !record.confirmed else {
                throw APIError(.conflict, "no_pending_totp", "Start authenticator app setup first.")
            }
            try await checkTOTP(body.code, record: record, user: auth.user, confirming: true, context: context)
            await sesame.audit("totp.enabled", "success", user: auth.user, context: context)
            return JSONResponse(Status(status: "enabled"))
        }

        router.delete("/api/account/totp") { _, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            guard try await sesame.store.deleteTOTP(userID: auth.user.id) else { throw APIError.notFound }
            await sesame.audit("totp.disabled", "success", user: auth.user, context: context)
            return JSONResponse(Status(status: "disabled"))
        }

        router.put("/api/account/sms") { request, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            let body = try await JSONBody.decode(PhoneBody.self, from: request, context: context)
            guard Self.isE164(body.phone) else {
                throw APIError.invalidField("phone", "Give the number in international form, e.g. +15551234567.")
            }
            // The new number is pending until its code comes back; a confirmed number stays in force meanwhile, so
            // starting a change never turns SMS off. The pending change is keyed by the code sent to that number.
            try await sendCode(to: body.phone, user: auth.user, purpose: "sms_setup", context: context) { code in
                try await sesame.store.beginPhoneChange(
                    userID: auth.user.id, phone: body.phone, challengeID: phoneChangeID(userID: auth.user.id, code: code),
                    expiresAt: sesame.now.addingTimeInterval(TimeInterval(sesame.configuration.challengeTimeout))
                )
            }
            await sesame.audit("sms.change_started", "success", user: auth.user, context: context)
            return JSONResponse(Status(status: "code_sent"), status: .accepted)
        }

        router.post("/api/account/sms/confirm") { request, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            let body = try await JSONBody.decode(CodeBody.self, from: request, context: context)
            let limit = sesame.rateLimiter.key(secret: "sms", account: auth.user.id, address: context.clientAddress)
            try await sesame.rateLimiter.attempt(limit)
            let typed = body.code.trimmingCharacters(in: .whitespaces)
            // Only the number this code was sent to is confirmed: the pending change is found by the code itself.
            guard typed.utf8.count == 6,
                try await sesame.store.completePhoneChange(
                    userID: auth.user.id, challengeID: phoneChangeID(userID: auth.user.id, code: typed), now: sesame.now
                ) != nil
            else {
                await sesame.audit("sms.enabled", "failure", user: auth.user, context: context, detail: "sms")
                throw APIError.invalidCode
            }
            try await sesame.rateLimiter.succeeded(limit)
            await sesame.audit("sms.enabled", "success", user: auth.user, context: context)
            return JSONResponse(Status(status: "enabled"))
        }

        router.delete("/api/account/sms") { _, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            guard try await sesame.store.deleteSMS(userID: auth.user.id) else { throw APIError.notFound }
            await sesame.audit("sms.disabled", "success", user: auth.user, context: context)
            return JSONResponse(Status(status: "disabled"))
        }

        router.post("/api/account/recovery-codes") { _, context -> JSONResponse<RecoveryCodesBody> in
            let auth = try context.requireRecentAuthentication(sesame)
            let (codes, set) = try RecoveryCodeSet.generate(count: 10)
            try await sesame.store.replaceRecoveryCodes(userID: auth.user.id, salt: set.salt, hashes: set.hashes, at: sesame.now)
            await sesame.audit("recovery_codes.generated", "success", user: auth.user, context: context)
            return JSONResponse(RecoveryCodesBody(codes: codes), status: .created)
        }

        router.post("/api/sessions/second-factor/sms") { request, context -> JSONResponse<Status> in
            let body = try await JSONBody.decode(PendingOnly.self, from: request, context: context)
            let (user, pendingHash) = try await pending(body.pendingToken, request: request)
            guard let sms = try await sesame.store.sms(userID: user.id), sms.confirmed else {
                throw APIError(.conflict, "sms_not_enabled", "This account has no confirmed phone number.")
            }
            try await sendCode(purpose: "sms_sign_in", key: pendingHash, user: user, phone: sms.phone, context: context)
            return JSONResponse(Status(status: "code_sent"), status: .accepted)
        }

        router.post("/api/sessions/second-factor") { request, context -> Response in
            let body = try await JSONBody.decode(SecondFactorRequest.self, from: request, context: context)
            let (user, pendingHash) = try await pending(body.pendingToken, request: request)
            switch body.factor {
            case "totp":
                guard let record = try await sesame.store.totp(userID: user.id), record.confirmed else { throw factorUnavailable }
                try await checkTOTP(body.code, record: record, user: user, confirming: false, context: context)
            case "sms":
                guard let sms = try await sesame.store.sms(userID: user.id), sms.confirmed else { throw factorUnavailable }
                try await checkSMSCode(body.code, purpose: "sms_sign_in", key: pendingHash, user: user, context: context)
            case "recovery":
                try await checkRecoveryCode(body.code, user: user, context: context)
            default:
                throw APIError.invalidField("factor", "factor is one of totp, sms, recovery.")
            }
            // The pending step is single-use: of two concurrent finishes, one gets a session.
            guard
                try await sesame.store.consumeChallenge(id: pendingHash, purpose: PasswordRoutes.pendingPurpose, binding: [], now: sesame.now)
                    != nil
            else { throw APIError.challengeInvalid }
            let issued = try await Sessions.issue(user: user, method: "password+\(body.factor)", request: request, sesame: sesame)
            await sesame.audit("sign_in.second_factor", "success", user: user, context: context, detail: body.factor)
            var response = try Sessions.signedIn(issued, user: user, request: request).response(from: request, context: context)
            var clear = ["\(Sessions.secureName(PasswordRoutes.pendingCookie, sesame.configuration))=", "Path=/api/sessions", "Max-Age=0", "HttpOnly", "SameSite=Strict"]
            if sesame.configuration.isSecureOrigin { clear.append("Secure") }
            response.headers.append(HTTPField(name: .setCookie, value: clear.joined(separator: "; ")))
            return response
        }
    }

    private var factorUnavailable: APIError {
        APIError(.conflict, "factor_not_enabled", "This account has not set up that factor.")
    }

    /// The account a pending second step belongs to; the token comes from the body or the `sesame_pending` cookie.
    private func pending(_ token: String?, request: Request) async throws -> (User, [UInt8]) {
        let token = token ?? request.cookies[Sessions.secureName(PasswordRoutes.pendingCookie, sesame.configuration)]?.value ?? ""
        guard Sessions.isWellFormed(token) else { throw APIError.challengeInvalid }
        let hash = Secrets.sha256(token)
        guard
            let record = try await sesame.store.peekChallenge(id: hash, purpose: PasswordRoutes.pendingPurpose, binding: [], now: sesame.now),
            let userID = record.userID, let user = try await sesame.store.user(id: userID), !user.disabled
        else { throw APIError.challengeInvalid }
        return (user, hash)
    }

    private func keyURIs(secret: OTPSecret, user: User) throws -> (otpauth: String, apple: String?) {
        let totp = try TOTP(secret: secret)
        let account = (try? OTPKeyURI(generator: .totp(totp), issuer: nil, account: user.username)) != nil ? user.username : user.id
        let otpauth = try OTPKeyURI(generator: .totp(totp), issuer: sesame.configuration.rpName, account: account).otpauthURI
        let apple = try? OTPKeyURI(generator: .totp(totp), issuer: sesame.configuration.rpID, account: account).appleOtpauthURI()
        return (otpauth, apple)
    }

    /// Checks a TOTP code (rate limited), and records its step so it cannot be used again. When `confirming`, the
    /// secret is confirmed only if it is still the one checked (`record.revision`).
    func checkTOTP(_ code: String, record: TOTPRecord, user: User, confirming confirm: Bool, context: SesameRequestContext) async throws {
        let limit = sesame.rateLimiter.key(secret: "totp", account: user.id, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        let totp = try TOTP(secret: try OTPSecret(bytes: record.secret))
        let trimmed = code.trimmingCharacters(in: .whitespaces)
        let last: UInt64? = record.lastStep >= 0 ? UInt64(record.lastStep) : nil
        let result = try OTPVerifier(window: Self.window).verify(trimmed, totp: totp, lastAcceptedStep: last, at: sesame.now)
        // The store's conditional update is the replay guard that holds across nodes and concurrent requests.
        let accepted: Bool
        if let step = result.acceptedStep, step <= UInt64(Int64.max) {
            accepted =
                confirm
                ? try await sesame.store.confirmTOTP(userID: user.id, step: Int64(step), revision: record.revision)
                : try await sesame.store.acceptTOTPStep(userID: user.id, step: Int64(step))
        } else {
            accepted = false
        }
        guard accepted else {
            await sesame.audit(confirm ? "totp.enabled" : "sign_in.second_factor", "failure", user: user, context: context, detail: "totp")
            throw APIError.invalidCode
        }
        try await sesame.rateLimiter.succeeded(limit)
    }

    func checkRecoveryCode(_ code: String, user: User, context: SesameRequestContext) async throws {
        let limit = sesame.rateLimiter.key(secret: "recovery", account: user.id, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        var matched: [UInt8]?
        if code.utf8.count <= 64, let stored = try await sesame.store.recoveryCodes(userID: user.id),
            let set = try? RecoveryCodeSet(salt: stored.salt, hashes: stored.unused), let index = set.match(code)
        {
            matched = set.hashes[index]
        }
        guard let matched, try await sesame.store.useRecoveryCode(userID: user.id, hash: matched, at: sesame.now) else {
            await sesame.audit("sign_in.second_factor", "failure", user: user, context: context, detail: "recovery")
            throw APIError.invalidCode
        }
        try await sesame.rateLimiter.succeeded(limit)
        await sesame.audit("recovery_code.used", "success", user: user, context: context)
    }

    // MARK: SMS codes

    /// The challenge row holding the current SMS code for `purpose` and `key` (the user, or the pending step).
    private func smsChallengeID(purpose: String, key: [UInt8]) -> [UInt8] {
        Secrets.sha256(Array("\(purpose):".utf8) + key)
    }

    /// The challenge id of a pending phone-number change: the account and the HMAC of the code sent to the new number.
    private func phoneChangeID(userID: String, code: String) -> [UInt8] {
        Secrets.sha256(Array("sms_setup:\(userID):".utf8) + Secrets.hmac(key: sesame.serverSecret, Array("sms:\(code)".utf8)))
    }

    /// Six random digits, stored only as an HMAC under the server secret, sent in an origin-bound message.
    /// Sending is itself rate limited per account (5 per window) so the phone cannot be flooded.
    func sendCode(purpose: String, key: [UInt8], user: User, phone: String, context: SesameRequestContext) async throws {
        try await sendCode(to: phone, user: user, purpose: purpose, context: context) { code in
            let id = smsChallengeID(purpose: purpose, key: key)
            try await sesame.store.deleteChallenge(id: id)
            let payload = Base64URL.encode(Secrets.hmac(key: sesame.serverSecret, Array("sms:\(code)".utf8)))
            try await sesame.store.insertChallenge(
                id: id, binding: [],
                ChallengeRecord(
                    purpose: purpose, userID: user.id, payload: payload,
                    expiresAt: sesame.now.addingTimeInterval(TimeInterval(sesame.configuration.challengeTimeout))
                )
            )
        }
    }

    /// Makes a code, lets `store` keep what checks it, and texts it to `phone`; rate limited per account and address.
    private func sendCode(
        to phone: String, user: User, purpose: String, context: SesameRequestContext, store: (String) async throws -> Void
    ) async throws {
        let sends = sesame.rateLimiter.key(secret: "sms_send", account: user.id, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(sends)  // every send counts; sends are never given back
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        try await store(code)
        let host = URL(string: sesame.configuration.origin)?.host ?? sesame.configuration.rpID
        let message = try OriginBoundMessage(topLevelHost: host, code: code)
            .message(text: "\(code) is your \(sesame.configuration.rpName) verification code.")
        do {
            try await sesame.sms.send(to: phone, message: message)
        } catch {
            sesame.logger.error("SMS delivery failed", metadata: ["error_type": .string(String(describing: type(of: error)))])
            throw APIError(.badGateway, "sms_not_sent", "The text message could not be sent. Try again later.")
        }
        await sesame.audit("sms.code_sent", "success", user: user, context: context, detail: purpose)
    }

    func checkSMSCode(_ code: String, purpose: String, key: [UInt8], user: User, context: SesameRequestContext) async throws {
        let limit = sesame.rateLimiter.key(secret: "sms", account: user.id, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(limit)
        let id = smsChallengeID(purpose: purpose, key: key)
        let typed = code.trimmingCharacters(in: .whitespaces)
        let expected = Array(Base64URL.encode(Secrets.hmac(key: sesame.serverSecret, Array("sms:\(typed)".utf8))).utf8)
        let stored = try await sesame.store.peekChallenge(id: id, purpose: purpose, binding: [], now: sesame.now)
        guard typed.utf8.count == 6, let stored, Secrets.constantTimeEqual(Array(stored.payload.utf8), expected),
            try await sesame.store.consumeChallenge(id: id, purpose: purpose, binding: [], now: sesame.now) != nil
        else {
            await sesame.audit("sign_in.second_factor", "failure", user: user, context: context, detail: "sms")
            throw APIError.invalidCode
        }
        try await sesame.rateLimiter.succeeded(limit)
    }

    /// `+` and 8 to 15 digits (ITU-T E.164).
    static func isE164(_ phone: String) -> Bool {
        let bytes = Array(phone.utf8)
        guard bytes.first == UInt8(ascii: "+"), (9...16).contains(bytes.count) else { return false }
        return bytes.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
