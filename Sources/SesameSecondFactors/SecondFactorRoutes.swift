import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OneTimeCode
import WebAuthn
import SesameCore

/// Second factors for password sign-in: setting them up (every step sensitive: a recent sign-in) and the second
/// step of a password sign-in.
///
/// Setup: `POST /api/account/totp` → secret, `otpauth:`/`apple-otpauth:` links and a QR PNG URL;
/// `POST /api/account/totp/confirm {code}`; `DELETE /api/account/totp`. `PUT /api/account/sms {phone}` sends a
/// code to the new number (the confirmed one stays in force); `POST /api/account/sms/confirm {code}`;
/// `DELETE /api/account/sms`. `POST /api/account/recovery-codes` makes a new set and shows it once.
///
/// Sign-in: after `POST /api/sessions/password` answered `second_factor_required`,
/// `POST /api/sessions/second-factor/sms` sends a code and `POST /api/sessions/second-factor {factor, code}`
/// finishes with a session. Re-authentication with password + SMS: `POST /api/session/reauthenticate/sms` sends a
/// code bound to the session, which `POST /api/session/reauthenticate` (`SesameReauthentication`) checks.
package struct SecondFactorRoutes {
    package let sesame: ServerCore
    package let store: any SecondFactorStore
    package let factorVerifier: FactorVerifier

    package init(sesame: ServerCore, store: any SecondFactorStore, factorVerifier: FactorVerifier) {
        self.sesame = sesame
        self.store = store
        self.factorVerifier = factorVerifier
    }

    package struct TOTPSetupBody: ResponseEncodable, Sendable {
        /// Base32 secret, for typing into an app by hand.
        package let secret: String
        package let otpauthURI: String
        package let appleOtpauthURI: String?
        /// GET this (with the session) for the QR code as PNG.
        package let qrCodeURL: String
    }

    package struct CodeRequest: Decodable, Sendable { package let code: String }
    package struct PhoneRequest: Decodable, Sendable { package let phone: String }

    package struct SecondFactorRequest: Decodable, Sendable {
        package let factor: String
        package let code: String
        /// The pending token from the password step (pages may rely on the `sesame_pending` cookie instead).
        package let pendingToken: String?
    }

    /// Where the sign-in page's SMS button asks for a code (`SecondStepChoice.sms`).
    package static let smsSendPath = "/api/sessions/second-factor/sms"

    package struct PendingOnly: Decodable, Sendable { package let pendingToken: String? }

    package struct RecoveryCodesBody: ResponseEncodable, Sendable {
        /// Shown once; only salted hashes are kept.
        package let codes: [String]
    }

    package func register(on router: Router<SesameRequestContext>) {
        let sensitive = router.group("/api/account", context: RecentlySignedInRequestContext.self)

        // Setting up TOTP changes how the account signs in with its password (and re-authenticates): a sensitive
        // change, so every step needs a recent sign-in, like removing it.
        sensitive.post("/totp") { _, context in
            let user = context.user
            if let existing = try await store.totp(userID: user.id), existing.confirmed {
                throw APIError(
                    .conflict, .totpAlreadyEnabled, "Turn the authenticator app off before setting up a new one.")
            }
            let secret = try OTPSecret.random()
            try await store.setPendingTOTP(userID: user.id, secret: secret.bytes, at: sesame.now)
            let uris = try keyURIs(secret: secret, user: user)
            return EditedResponse(
                status: .created,
                response: TOTPSetupBody(
                    secret: secret.base32, otpauthURI: uris.otpauth, appleOtpauthURI: uris.apple,
                    qrCodeURL: "/api/account/totp/qr.png")
            )
        }

        sensitive.get("/totp/qr.png") { _, context -> Response in
            // Only an unconfirmed secret is shown again; a confirmed one is never displayed.
            guard let record = try await store.totp(userID: context.user.id), !record.confirmed else {
                throw APIError.notFound
            }
            let uri = try keyURIs(secret: try OTPSecret(bytes: record.secret), user: context.user).otpauth
            let png = try QRCode(encoding: uri).png()
            return Response(
                status: .ok, headers: [.contentType: "image/png", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }

        sensitive.post("/totp/confirm") { request, context in
            let body = try await request.decode(as: CodeRequest.self, context: context)
            guard let record = try await store.totp(userID: context.user.id), !record.confirmed else {
                throw APIError(.conflict, .noPendingTOTP, "Start authenticator app setup first.")
            }
            try await factorVerifier.checkTOTP(
                body.code, record: record, user: context.user, confirming: true, kind: .totpEnabled, context: context)
            await sesame.audit.record(.totpEnabled, .success, user: context.user, context: context)
            return Status(status: "enabled")
        }

        sensitive.delete("/totp") { request, context in
            let notice = await sesame.notice(.totpDisabled, user: context.user, request: request, context: context)
            guard try await store.deleteTOTP(userID: context.user.id, notice: notice) else { throw APIError.notFound }
            await sesame.audit.record(.totpDisabled, .success, user: context.user, context: context)
            return Status(status: "disabled")
        }

        sensitive.put("/sms") { request, context in
            let body = try await request.decode(as: PhoneRequest.self, context: context)
            guard FactorVerifier.isE164(body.phone) else {
                throw APIError.invalidField(.invalidPhone, "Give the number in international form, e.g. +15551234567.")
            }
            try await factorVerifier.beginPhoneChange(body.phone, user: context.user, context: context)
            return EditedResponse(status: .accepted, response: Status(status: "code_sent"))
        }

        sensitive.post("/sms/confirm") { request, context in
            let body = try await request.decode(as: CodeRequest.self, context: context)
            try await factorVerifier.completePhoneChange(code: body.code, user: context.user, context: context)
            return Status(status: "enabled")
        }

        sensitive.delete("/sms") { request, context in
            let notice = await sesame.notice(.smsDisabled, user: context.user, request: request, context: context)
            guard try await store.deleteSMS(userID: context.user.id, notice: notice) else { throw APIError.notFound }
            await sesame.audit.record(.smsDisabled, .success, user: context.user, context: context)
            return Status(status: "disabled")
        }

        sensitive.post("/recovery-codes") { request, context in
            let (codes, set) = try RecoveryCodeSet.generate(count: 10)
            try await store.replaceRecoveryCodes(
                userID: context.user.id, salt: set.salt, hashes: set.hashes, at: sesame.now,
                notice: sesame.notice(.recoveryCodesGenerated, user: context.user, request: request, context: context))
            await sesame.audit.record(.recoveryCodesGenerated, .success, user: context.user, context: context)
            return EditedResponse(status: .created, response: RecoveryCodesBody(codes: codes))
        }

        // A re-authentication with password + SMS: a code bound to this session (`SesameReauthentication` checks it
        // with the password, through `FactorVerifier`).
        router.group("/api/session/reauthenticate", context: SignedInRequestContext.self).post("/sms") { _, context in
            try await factorVerifier.sendCode(
                for: .reauthentication(sessionTokenHash: context.authentication.tokenHash), user: context.user,
                context: context)
            return EditedResponse(status: .accepted, response: Status(status: "code_sent"))
        }

        router.post(RouterPath(Self.smsSendPath)) { request, context in
            let body = try await request.decode(as: PendingOnly.self, context: context)
            let (user, pendingHash) = try await pending(body.pendingToken, request: request)
            try await factorVerifier.sendCode(for: .signIn(pendingHash: pendingHash), user: user, context: context)
            return EditedResponse(status: .accepted, response: Status(status: "code_sent"))
        }

        router.post("/api/sessions/second-factor") { request, context in
            let body = try await request.decode(as: SecondFactorRequest.self, context: context)
            let (user, pendingHash) = try await pending(body.pendingToken, request: request)
            let factor = try FactorVerifier.factor(named: body.factor)
            try await factorVerifier.verify(
                factor, code: body.code, user: user, in: .signIn(pendingHash: pendingHash),
                kind: .signInSecondFactor, context: context
            )
            // The pending step is single-use: of two concurrent finishes, one gets a session.
            _ = try await sesame.ceremonies.finish(.pendingSecondFactor, id: pendingHash)
            let issued = try await sesame.sessions.issue(user: user, method: .passwordAnd(factor), request: request)
            await sesame.audit.record(
                .signInSecondFactor, .success, user: user, context: context, detail: factor.rawValue)
            var response = sesame.sessions.signedIn(issued, user: user, request: request)
            response.headers.append(HTTPField(name: .setCookie, value: sesame.cookies.clear(.pending)))
            if let remember = await sesame.signedInFromDevice(user: user, request: request, context: context) {
                response.headers.append(remember)
            }
            return response
        }
    }

    /// The account a pending second step belongs to; the token comes from the body or the `sesame_pending` cookie.
    private func pending(_ token: String?, request: Request) async throws -> (User, [UInt8]) {
        let token = token ?? request.cookies[sesame.cookies.name(.pending)]?.value ?? ""
        guard SessionIssuer.isWellFormed(token) else { throw APIError.challengeInvalid }
        let hash = Secrets.sha256(token)
        guard let record = try await sesame.ceremonies.peek(.pendingSecondFactor, id: hash),
            let userID = record.userID, let user = try await sesame.store.user(id: userID), !user.disabled
        else { throw APIError.challengeInvalid }
        return (user, hash)
    }

    private func keyURIs(secret: OTPSecret, user: User) throws -> (otpauth: String, apple: String?) {
        let totp = try TOTP(secret: secret)
        let account =
            (try? OTPKeyURI(generator: .totp(totp), issuer: nil, account: user.username)) != nil
            ? user.username : user.id
        let otpauth = try OTPKeyURI(generator: .totp(totp), issuer: sesame.configuration.rpName, account: account)
            .otpauthURI
        let apple = try? OTPKeyURI(generator: .totp(totp), issuer: sesame.configuration.rpID, account: account)
            .appleOtpauthURI()
        return (otpauth, apple)
    }
}
