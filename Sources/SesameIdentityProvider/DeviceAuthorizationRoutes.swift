import Foundation
import HTTPTypes
import Hummingbird
import WebAuthn
import SesameCore
import SesameBytes
import SesameWeb

/// The device authorization grant (RFC 8628) for TVs, command-line tools and other devices without a browser.
///
/// 1. The device asks `POST /oauth/device_authorization` (client authentication as at the token endpoint) and
///    shows the person a user code and `/device`.
/// 2. On a phone or computer the person opens `/device`, signs in on Sesame's own pages if needed (again when the
///    last sign-in is older than the re-authentication window: the device gets a grant of its own), types the code
///    (attempts count against a per-account and per-address limit: user codes are short enough to guess, §5.1), and
///    sees which application asks, with the code to compare (§5.4), before allowing or refusing. Both forms carry
///    the session's CSRF token.
/// 3. The device polls the token endpoint with `grant_type=urn:ietf:params:oauth:grant-type:device_code`:
///    `authorization_pending`, `slow_down` (polled before its interval; the interval grows by 5 s), `access_denied`,
///    `expired_token`, or the tokens, handed out once.
package struct DeviceAuthorizationRoutes {
    package let sesame: ServerCore
    package let store: any IdentityProviderStorage

    package init(sesame: ServerCore, store: any IdentityProviderStorage) {
        self.sesame = sesame
        self.store = store
    }

    package static let grantType = "urn:ietf:params:oauth:grant-type:device_code"
    package static let lifetime: TimeInterval = 600
    package static let interval = 5
    /// Consonants only (no vowels, so no words; no look-alikes such as 0/O or 1/I): 20^8 ≈ 2^34.6 codes, of which
    /// an attacker gets a handful of guesses per window (RFC 8628 §6.1).
    package static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ".utf8)

    /// `BCDF-GHJK` from random bytes, each letter drawn uniformly (bytes ≥ 240 are redrawn).
    package static func newUserCode() -> String {
        var letters: [UInt8] = []
        while letters.count < 8 {
            for byte in Secrets.random(16) where byte < 240 && letters.count < 8 {
                letters.append(alphabet[Int(byte) % alphabet.count])
            }
        }
        return String(decoding: letters[0..<4], as: UTF8.self) + "-" + String(decoding: letters[4...], as: UTF8.self)
    }

    /// What a person typed, as the stored form (`BCDFGHJK`): case, spaces and dashes ignored; nil if it cannot be a
    /// user code.
    package static func normalize(_ typed: String) -> String? {
        let letters = typed.uppercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }
        guard letters.count == 8, letters.allSatisfy(alphabet.contains) else { return nil }
        return String(decoding: letters, as: UTF8.self)
    }

    package static func display(_ normalized: String) -> String {
        String(normalized.prefix(4)) + "-" + String(normalized.dropFirst(4))
    }

    package static func userCodeHash(_ normalized: String) -> [UInt8] {
        Secrets.sha256("device-user-code:" + normalized)
    }

    package struct Pages: Sendable {
        package let enter: WebRoutes.DynamicPage?
        package let approve: WebRoutes.DynamicPage?
        package let done: WebRoutes.DynamicPage?
        package let base: IdentityProviderRoutes.Pages
    }

    package func register(on router: Router<SesameRequestContext>) {
        var loaded: [WebRoutes.DynamicPage?] = [nil, nil, nil, nil]
        do {
            loaded = [
                try .load("device", title: "web.device.title"),
                try .load("device-approve", title: "web.device-approve.title"),
                try .load("device-done", title: "web.device.title"), try .load("app-error", title: "web.device.title"),
            ]
        } catch {
            sesame.logger.error("device pages not loaded", metadata: ["reason": .string(String(describing: error))])
        }
        let pages = Pages(
            enter: loaded[0], approve: loaded[1], done: loaded[2],
            base: .init(
                consent: nil, error: loaded[3], configuration: sesame.configuration, languages: sesame.languages))

        router.post("/oauth/device_authorization") { request, _ in try await start(request) }
        router.get("/device") { request, context in
            let typed = FormParameters.query(request)["user_code"] ?? ""
            guard let authentication = context.authentication, recent(authentication) else {
                return signInFirst(userCode: typed)
            }
            let words = await pages.base.words(request, userID: authentication.user.id)
            return enterPage(
                pages, authentication, userCode: Self.normalize(typed).map(Self.display) ?? "", words: words)
        }
        router.post("/device") { request, context in try await lookUp(request, context: context, pages: pages) }
        router.post("/device/approve") { request, context in
            try await decide(request, context: context, pages: pages)
        }
    }

    // MARK: The device's side

    package func start(_ request: Request) async throws -> Response {
        let form = try await FormParameters.body(request)
        if let name = form.repeated.first { throw OAuthError(.invalidRequest, "\(name) is given more than once") }
        let client = try await ClientRegistry(
            store: store, issuer: sesame.configuration.origin, clock: sesame.clock
        ).authenticate(request, form)
        let asked = (form["scope"] ?? "openid").split(separator: " ").map(String.init)
        guard asked.contains("openid") else { throw OAuthError(.invalidScope, "scope must include openid") }
        guard asked.allSatisfy(AuthorizationRequest.supportedScopes.contains) else {
            throw OAuthError(
                .invalidScope, "scope may hold only \(AuthorizationRequest.supportedScopes.joined(separator: " "))")
        }
        let scope = AuthorizationRequest.supportedScopes.filter(asked.contains).joined(separator: " ")
        let now = sesame.now
        let deviceCode = "sesame_dc_" + Base64URL.encode(Secrets.random(32))
        var userCode = ""
        for attempt in 1...5 {
            userCode = Self.newUserCode()
            do {
                try await store.createDeviceAuthorization(
                    deviceCodeHash: Secrets.sha256(deviceCode),
                    userCodeHash: Self.userCodeHash(Self.normalize(userCode) ?? ""),
                    DeviceAuthorization(
                        clientID: client.id, scope: scope, status: .pending, interval: Self.interval, createdAt: now,
                        expiresAt: now.addingTimeInterval(Self.lifetime)))
                break
            } catch StoreError.conflict where attempt < 5 {
                continue  // that user code is live for another device: draw again
            }
        }
        let verification = sesame.configuration.origin + "/device"
        let body: [String: any Sendable] = [
            "device_code": deviceCode, "user_code": userCode, "verification_uri": verification,
            "verification_uri_complete": verification + "?" + FormParameters.encode([("user_code", userCode)]),
            "expires_in": Int(Self.lifetime), "interval": Self.interval,
        ]
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: .init(bytes: data)))
    }

    /// The token endpoint's answer to a device's poll.
    package func poll(_ form: FormParameters, client: OAuthClient) async throws -> OAuthGrant {
        guard let deviceCode = form["device_code"] else { throw OAuthError(.invalidRequest, "device_code is required") }
        switch try await store.pollDeviceAuthorization(
            deviceCodeHash: Secrets.sha256(deviceCode), clientID: client.id, now: sesame.now)
        {
        case .pending: throw OAuthError(.authorizationPending, "The person has not answered yet.")
        case .slowDown: throw OAuthError(.slowDown, "Polled too soon; wait 5 seconds longer between polls.")
        case .denied: throw OAuthError(.accessDenied, "The person did not allow access.")
        case .expired: throw OAuthError(.expiredToken, "The device code expired; start again.")
        case .invalid: throw OAuthError.invalidGrant
        case .approved(let grant): return grant
        }
    }

    // MARK: The person's side

    /// Whether the person signed in (or re-authenticated) within the re-authentication window: approving a device
    /// needs that, as the account page's sensitive changes do.
    package func recent(_ authentication: Authentication) -> Bool {
        sesame.now.timeIntervalSince(authentication.session.authenticatedAt)
            <= TimeInterval(sesame.configuration.reauthenticationWindow)
    }

    /// To the sign-in page, and back to this page with the code typed so far.
    package func signInFirst(userCode typed: String) -> Response {
        let back =
            Self.normalize(typed).map { "/device?" + FormParameters.encode([("user_code", Self.display($0))]) }
            ?? "/device"
        return Response(
            status: .seeOther,
            headers: [.location: "/signin?" + FormParameters.encode([("return", back)]), .cacheControl: "no-store"])
    }

    /// The code page; `message`: the catalog key of what went wrong (none: "").
    package func enterPage(
        _ pages: Pages, _ authentication: Authentication, userCode: String, message: String = "", words: PageWords
    ) -> Response {
        pages.base.html(
            pages.enter, status: message.isEmpty ? .ok : .badRequest,
            values: [
                "username": authentication.user.username, "userCode": userCode,
                "message": message.isEmpty ? "" : words.sentence(message),
                "csrf": sesame.sessions.csrfToken(for: authentication.tokenHash),
            ], words: words)
    }

    /// The code page after too many wrong codes: the wait, in whole minutes, in the page's language.
    package func tooManyAttempts(
        _ pages: Pages, _ authentication: Authentication, _ error: APIError, words: PageWords
    ) -> Response {
        let minutes = max(1, ((error.retryAfter ?? 60) + 59) / 60)
        return pages.base.html(
            pages.enter, status: .badRequest,
            values: [
                "username": authentication.user.username, "userCode": "",
                "message": words.sentence("error.too_many_attempts", count: minutes),
                "csrf": sesame.sessions.csrfToken(for: authentication.tokenHash),
            ], words: words)
    }

    /// The session of the form's cookie, with the form's CSRF token checked (a plain form sends no header).
    package func formSession(_ request: Request, _ form: FormParameters) async throws -> Authentication? {
        guard let authentication = try await sesame.sessions.authenticate(cookieOf: request),
            let csrf = form["csrf_token"],
            ConstantTime.equal(
                Array(csrf.utf8), Array(sesame.sessions.csrfToken(for: authentication.tokenHash).utf8))
        else { return nil }
        return authentication
    }

    /// Catalog keys of the device pages' sentences.
    package static let expiredPage = "web.device.session-expired"
    package static let unknownCode = "web.device.unknown-code"

    /// Finds the pending request a typed code names; every lookup counts as an attempt at a guessable secret, and
    /// a match gives back that one attempt (not the wrong guesses before it: the code on the person's own device is
    /// no proof they stopped guessing others).
    package func pending(_ typed: String, _ authentication: Authentication, context: SesameRequestContext) async throws
        -> (String, DeviceAuthorization)?
    {
        let key = sesame.rateLimiter.key(
            .deviceCode, account: authentication.user.id, address: context.clientAddress)
        try await sesame.rateLimiter.attempt(key)
        guard let normalized = Self.normalize(typed),
            let found = try await store.pendingDeviceAuthorization(
                userCodeHash: Self.userCodeHash(normalized), now: sesame.now)
        else { return nil }
        try await sesame.rateLimiter.forgive(key)
        return (normalized, found)
    }

    package func lookUp(_ request: Request, context: SesameRequestContext, pages: Pages) async throws -> Response {
        let form = try await FormParameters.body(request)
        let session = try await formSession(request, form)
        let words = await pages.base.words(request, userID: session?.user.id)
        guard let authentication = session else {
            return pages.base.failure(Self.expiredPage, words: words)
        }
        let typed = form["user_code"] ?? ""
        let found: (String, DeviceAuthorization)?
        do {
            found = try await pending(typed, authentication, context: context)
        } catch let error as APIError where error.code == .tooManyAttempts {
            return tooManyAttempts(pages, authentication, error, words: words)
        }
        guard let (normalized, device) = found,
            let client = try await store.client(id: device.clientID)
        else { return enterPage(pages, authentication, userCode: "", message: Self.unknownCode, words: words) }
        if let refused = try await refuseOutsider(
            client, normalized, authentication, context: context, pages: pages, words: words)
        {
            return refused
        }
        return pages.base.html(
            pages.approve, status: .ok,
            values: [
                "clientName": client.name, "userCode": Self.display(normalized),
                "username": authentication.user.username,
                "scopeText": IdentityProviderRoutes.describe(
                    device.scope.split(separator: " ").map(String.init), words: words),
                "csrf": sesame.sessions.csrfToken(for: authentication.tokenHash),
            ], words: words)
    }

    /// A person outside the client's allowed groups: the device's request is refused at once (its next poll answers
    /// `access_denied`) and the page says so; there is no application page to send them back to. Nil when they may.
    package func refuseOutsider(
        _ client: OAuthClient, _ normalized: String, _ authentication: Authentication,
        context: SesameRequestContext, pages: Pages, words: PageWords
    ) async throws -> Response? {
        let allowed = try await IdentityProviderRoutes.mayUse(
            client, userID: authentication.user.id, groups: sesame.accountGroups)
        guard !allowed else { return nil }
        _ = try await store.decideDeviceAuthorization(
            userCodeHash: Self.userCodeHash(normalized), grant: nil, now: sesame.now)
        await sesame.audit.record(
            .appAccessDenied, .refused, user: authentication.user, context: context, detail: client.id,
            client: client.id)
        return pages.base.html(
            pages.done, status: .forbidden,
            values: [
                "heading": words.sentence("web.device-done.no-access-heading", ["clientName": client.name]),
                "message": words.sentence("web.device-done.no-access"),
            ], words: words)
    }

    package func decide(_ request: Request, context: SesameRequestContext, pages: Pages) async throws -> Response {
        let form = try await FormParameters.body(request)
        let session = try await formSession(request, form)
        let words = await pages.base.words(request, userID: session?.user.id)
        guard let authentication = session else {
            return pages.base.failure(Self.expiredPage, words: words)
        }
        // The page may have waited: a stale session signs in again before allowing counts (nothing is counted
        // against the limit on guessing, nothing is decided). Refusing needs no proof.
        guard recent(authentication) || form["decision"] != "allow" else {
            return signInFirst(userCode: form["user_code"] ?? "")
        }
        let found: (String, DeviceAuthorization)?
        do {
            found = try await pending(form["user_code"] ?? "", authentication, context: context)
        } catch let error as APIError where error.code == .tooManyAttempts {
            return tooManyAttempts(pages, authentication, error, words: words)
        }
        guard let (normalized, device) = found else {
            return enterPage(pages, authentication, userCode: "", message: Self.unknownCode, words: words)
        }
        let allow = form["decision"] == "allow"
        if allow, let client = try await store.client(id: device.clientID),
            let refused = try await refuseOutsider(
                client, normalized, authentication, context: context, pages: pages, words: words)
        {
            return refused
        }
        let now = sesame.now
        let grant =
            allow
            ? OAuthGrant(
                id: UUID().uuidString.lowercased(), clientID: device.clientID, userID: authentication.user.id,
                scope: device.scope, nonce: nil, authTime: authentication.session.authenticatedAt,
                method: authentication.session.method,
                passkeyBackupEligible: authentication.session.passkeyBackupEligible, createdAt: now,
                expiresAt: now.addingTimeInterval(TokenIssuer.grantLifetime), revokedAt: nil,
                sessionID: TokenIssuer.tiedSession(scope: device.scope, authentication.session)) : nil
        guard
            try await store.decideDeviceAuthorization(
                userCodeHash: Self.userCodeHash(normalized), grant: grant, now: now)
        else { return enterPage(pages, authentication, userCode: "", message: Self.unknownCode, words: words) }
        if allow {
            await sesame.audit.record(
                .appAuthorized, .success, user: authentication.user, context: context, detail: device.clientID,
                client: device.clientID)
        }
        return pages.base.html(
            pages.done, status: .ok,
            values: allow
                ? [
                    "heading": words.sentence("web.device-done.connected-heading"),
                    "message": words.sentence("web.device-done.connected"),
                ]
                : [
                    "heading": words.sentence("web.device-done.refused-heading"),
                    "message": words.sentence("web.device-done.refused"),
                ], words: words)
    }
}
