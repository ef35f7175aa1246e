import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WebAuthn
import SesameCore
import SesameBytes
import SesameWeb

/// The OpenID Connect provider (OpenID Connect Core 1.0, Discovery 1.0, OAuth 2.1 rules): discovery, JWKS, the
/// authorization endpoint with Sesame's own sign-in pages in front of it and a consent page, the token endpoint
/// (authorization code with PKCE S256, refresh token rotation), UserInfo, revocation (RFC 7009) and introspection
/// (RFC 7662). Clients are registered with `sesame clients`.
package struct IdentityProviderRoutes {
    package let sesame: ServerCore
    package let store: any IdentityProviderStorage
    package let signingKeyring: SigningKeyring
    package let tokenIssuer: TokenIssuer

    package init(
        sesame: ServerCore, store: any IdentityProviderStorage, signingKeyring: SigningKeyring, tokenIssuer: TokenIssuer
    ) {
        self.sesame = sesame
        self.store = store
        self.signingKeyring = signingKeyring
        self.tokenIssuer = tokenIssuer
    }

    package var issuer: String { sesame.configuration.origin }
    package var registry: ClientRegistry { ClientRegistry(store: store, issuer: issuer, clock: sesame.clock) }
    package var tokens: TokenIssuer { tokenIssuer }
    package var marker: ReturnMarker { ReturnMarker(serverSecret: sesame.serverSecret) }

    /// Seconds within which a grant with `offline_access` needs the person's last sign-in: the re-authentication
    /// window of the account page's sensitive changes. A refresh token outlives every session, so a stolen or
    /// forgotten session must not be enough to mint one.
    package static func recency(for scopes: [String], _ configuration: ServerConfiguration) -> Int? {
        scopes.contains("offline_access") ? configuration.reauthenticationWindow : nil
    }

    /// Sends the person to sign in, to come back to this request with a marker that the sign-in was its own.
    /// The request's `ui_locales` goes along, so the sign-in page is in the language the application asked for.
    package func signInFirst(_ request: AuthorizationRequest, now: Date) -> Response {
        var target =
            "/signin?" + FormParameters.encode([("return", request.returnPath(signedInAfter: now, marker: marker))])
        if let hint = request.loginHint { target += "&" + FormParameters.encode([("username", hint)]) }
        if request.wantsPasskey { target += "&passkey=required" }
        if let locales = request.uiLocales { target += "&" + FormParameters.encode([("ui_locales", locales)]) }
        return Response(status: .seeOther, headers: [.location: target, .cacheControl: "no-store"])
    }

    package func register(on router: Router<SesameRequestContext>) {
        var consentPage: WebRoutes.DynamicPage?
        var errorPage: WebRoutes.DynamicPage?
        do {
            consentPage = try .load("consent", title: "web.consent.title")
            errorPage = try .load("app-error", title: "web.consent.error-title")
        } catch {
            sesame.logger.error(
                "identity provider pages not loaded", metadata: ["reason": .string(String(describing: error))])
        }
        let pages = Pages(
            consent: consentPage, error: errorPage, configuration: sesame.configuration, languages: sesame.languages)

        router.get("/.well-known/openid-configuration") { _, _ in try discovery() }
        router.get("/.well-known/oauth-authorization-server") { _, _ in try discovery() }
        router.get("/oauth/jwks") { _, _ in
            jsonResponse(try await signingKeyring.jwks(), cache: "public, max-age=300")
        }
        router.get("/oauth/authorize") { request, context in
            try await authorize(
                FormParameters.query(request), query: request.uri.query ?? "", session: context.authentication,
                request: request, context: context, pages: pages)
        }
        // OpenID Connect Core §3.1.2.1: the request may also come as a form POST, which carries no CSRF header.
        router.post("/oauth/authorize") { request, context in
            let form = try await FormParameters.body(request)
            return try await authorize(
                form, query: FormParameters.encode(form.values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
                session: try await sesame.sessions.authenticate(cookieOf: request), request: request, context: context,
                pages: pages)
        }
        router.post("/oauth/consent") { request, context in try await consent(request, context: context, pages: pages) }
        router.post("/oauth/token") { request, context in try await token(request, context: context) }
        router.get("/oauth/userinfo") { request, _ in try await userInfo(request, form: nil) }
        router.post("/oauth/userinfo") { request, _ in
            let form =
                request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
                ? try await FormParameters.body(request) : nil
            return try await userInfo(request, form: form)
        }
        router.post("/oauth/revoke") { request, context in try await revoke(request, context: context) }
        router.post("/oauth/introspect") { request, _ in try await introspect(request) }
    }

    // MARK: Discovery

    package func discovery() throws -> Response {
        let document: [String: any Sendable] = [
            "issuer": issuer,
            "authorization_endpoint": issuer + "/oauth/authorize",
            "token_endpoint": issuer + "/oauth/token",
            "userinfo_endpoint": issuer + "/oauth/userinfo",
            "jwks_uri": issuer + "/oauth/jwks",
            "revocation_endpoint": issuer + "/oauth/revoke",
            "introspection_endpoint": issuer + "/oauth/introspect",
            "end_session_endpoint": issuer + "/oauth/logout",
            "backchannel_logout_supported": true,
            "backchannel_logout_session_supported": false,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token", DeviceAuthorizationRoutes.grantType],
            "device_authorization_endpoint": issuer + "/oauth/device_authorization",
            "subject_types_supported": ["public", "pairwise"],
            "id_token_signing_alg_values_supported": IDTokenAlgorithm.allCases.map(\.rawValue),
            "scopes_supported": ScopeClaims.scopes,
            "claims_supported": ScopeClaims.supported,
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic", "client_secret_post", "private_key_jwt", "none",
            ],
            "token_endpoint_auth_signing_alg_values_supported": IDTokenAlgorithm.allCases.map(\.rawValue),
            "revocation_endpoint_auth_methods_supported": [
                "client_secret_basic", "client_secret_post", "private_key_jwt", "none",
            ],
            "introspection_endpoint_auth_methods_supported": [
                "client_secret_basic", "client_secret_post", "private_key_jwt",
            ],
            "code_challenge_methods_supported": ["S256"],
            "prompt_values_supported": ["none", "login", "consent", "select_account"],
            "acr_values_supported": ["phr"],
            "authorization_response_iss_parameter_supported": true,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
            "claims_parameter_supported": false,
        ]
        return try jsonResponse(document, cache: "public, max-age=300")
    }

    // MARK: Authorization

    package struct Pages: Sendable {
        package let consent: WebRoutes.DynamicPage?
        package let error: WebRoutes.DynamicPage?
        package let configuration: ServerConfiguration
        package let languages: PageLanguages

        /// The words of a page answering `request` from `userID` (`PageLanguages.words`).
        package func words(_ request: Hummingbird.Request, userID: String?, uiLocales: String? = nil) async
            -> PageWords
        {
            await languages.words(for: request, userID: userID, uiLocales: uiLocales)
        }

        package func html(
            _ page: WebRoutes.DynamicPage?, status: HTTPResponse.Status, values: [String: String], words: PageWords,
            formAction: String = ""
        ) -> Response {
            guard let page, let html = try? page.render(configuration, script: "consent", values, words: words) else {
                return Response(
                    status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "Pages unavailable")))
            }
            // The consent form's answer redirects to the application, which `form-action` must allow.
            let policy = WebRoutes.contentSecurityPolicy.replacingOccurrences(
                of: "form-action 'self'", with: "form-action 'self'" + formAction)
            return Response(
                status: status,
                headers: [
                    .contentType: "text/html; charset=utf-8", .contentSecurityPolicy: policy, .cacheControl: "no-store",
                    .contentLanguage: words.tag, .init("Cross-Origin-Opener-Policy")!: "same-origin",
                ],
                body: .init(byteBuffer: ByteBuffer(string: html))
            )
        }

        /// The error page with the catalog's sentence `key` (its placeholders from `values`).
        package func failure(_ key: String, words: PageWords, _ values: [String: String] = [:]) -> Response {
            html(error, status: .badRequest, values: ["message": words.sentence(key, values)], words: words)
        }
    }

    package func redirect(_ uri: String, _ parameters: [(String, String)]) -> Response {
        let separator = uri.contains("?") ? "&" : "?"
        return Response(
            status: .seeOther,
            headers: [.location: uri + separator + FormParameters.encode(parameters), .cacheControl: "no-store"])
    }

    package func redirectError(_ error: AuthorizationRequest.RedirectError) -> Response {
        var parameters = [("error", error.code.rawValue), ("error_description", error.description)]
        if let state = error.state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return redirect(error.redirectURI, parameters)
    }

    /// The catalog key of the sentence for a request whose client or redirect URI cannot be trusted.
    package static func pageErrorKey(_ error: AuthorizationRequest.PageError) -> String {
        error.code == .unknownClient ? "web.app-error.unknown-client" : "web.app-error.unregistered-redirect"
    }

    /// `httpRequest` is the request the authorization request came in, for the page's language (with the
    /// authorization request's `ui_locales`).
    package func authorize(
        _ form: FormParameters, query: String, session: Authentication?, request httpRequest: Request,
        context: SesameRequestContext, pages: Pages
    ) async throws -> Response {
        let now = sesame.now
        let request: AuthorizationRequest
        do {
            request = try await AuthorizationRequest.parse(form, query: query, store: store, marker: marker, now: now)
        } catch let error as AuthorizationRequest.PageError {
            let words = await pages.words(httpRequest, userID: session?.user.id, uiLocales: form["ui_locales"])
            return pages.failure(Self.pageErrorKey(error), words: words)
        } catch let error as AuthorizationRequest.RedirectError {
            return redirectError(error)
        }
        func fail(_ code: OAuthErrorCode, _ why: String) -> Response {
            redirectError(.init(code: code, description: why, redirectURI: request.redirectURI, state: request.state))
        }
        // OpenID Connect Core §3.1.2.1: the hint names who should be signed in. Someone else is asked to sign in
        // as that person; if they already did so for this request and are still someone else, the client hears so.
        var someoneElse = false
        if let token = form["id_token_hint"] {
            guard let hint = try await tokens.idTokenHint(token), hint.aud == request.client.id else {
                return fail(.invalidRequest, "id_token_hint is not an ID token Sesame issued to this application")
            }
            someoneElse =
                session.map { tokens.subjects.subject(userID: $0.user.id, client: request.client) != hint.sub } ?? false
            if someoneElse, request.prompts.contains("none") || request.signedInAfter != nil {
                return fail(.loginRequired, "the person signed in is not the one id_token_hint names")
            }
        }
        let mustSignIn =
            request.prompts.contains("login") || request.prompts.contains("select_account") || someoneElse
            || request.needsSignIn(
                session?.session, now: now, recentWithin: Self.recency(for: request.scopes, sesame.configuration))
        if mustSignIn {
            if request.prompts.contains("none") { return fail(.loginRequired, "the person must sign in") }
            return signInFirst(request, now: now)
        }
        guard let authentication = session else { return fail(.loginRequired, "the person must sign in") }
        guard try await mayUse(request.client, authentication.user, context: context) else {
            return fail(.accessDenied, "the person is not in a group allowed to use this application")
        }
        let consented = try await store.consentedScope(userID: authentication.user.id, clientID: request.client.id)
        let covered =
            consented.map { Set($0.split(separator: " ").map(String.init)).isSuperset(of: request.scopes) } ?? false
        if !request.client.firstParty, !covered || request.prompts.contains("consent") {
            if request.prompts.contains("none") {
                return fail(.consentRequired, "the person has not allowed this application")
            }
            let words = await pages.words(httpRequest, userID: authentication.user.id, uiLocales: request.uiLocales)
            return pages.html(
                pages.consent, status: .ok,
                values: [
                    "clientName": request.client.name, "username": authentication.user.username,
                    "scopeText": Self.describe(request.scopes, words: words), "request": request.query,
                    "csrf": sesame.sessions.csrfToken(for: authentication.tokenHash),
                ],
                words: words, formAction: Self.formActionSource(request.redirectURI)
            )
        }
        return try await issueCode(request, authentication: authentication, context: context)
    }

    /// Whether `user` may use `client`: anyone may when the client names no allowed groups, else only a member of
    /// one of them (read from the store now, so a removal takes effect at once). A refusal is an audit event.
    package func mayUse(_ client: OAuthClient, _ user: User, context: some ClientContext) async throws -> Bool {
        guard try await Self.mayUse(client, userID: user.id, groups: sesame.accountGroups) else {
            await sesame.audit.record(
                .appAccessDenied, .refused, user: user, context: context, detail: client.id, client: client.id)
            return false
        }
        return true
    }

    package static func mayUse(_ client: OAuthClient, userID: String, groups: any AccountGroups) async throws -> Bool {
        guard let allowed = client.allowedGroups else { return true }
        let slugs = try await groups.groupSlugs(userID: userID)
        return slugs.contains(where: allowed.contains)
    }

    /// What each scope lets the application learn, in `words`' language.
    package static func describe(_ scopes: [String], words: PageWords) -> String {
        var parts = [words.sentence("web.consent.scope-subject")]
        if scopes.contains("profile") { parts.append(words.sentence("web.consent.scope-profile")) }
        if scopes.contains("email") { parts.append(words.sentence("web.consent.scope-email")) }
        if scopes.contains("groups") { parts.append(words.sentence("web.consent.scope-groups")) }
        if scopes.contains("offline_access") { parts.append(words.sentence("web.consent.scope-offline")) }
        let list = parts.dropFirst().reduce(parts[0]) {
            words.sentence("web.consent.scope-join", ["first": $0, "next": $1])
        }
        return words.sentence("web.consent.scope-list", ["scopes": list])
    }

    /// The `form-action` source that lets the consent form's redirect reach the application.
    package static func formActionSource(_ redirectURI: String) -> String {
        guard let url = URLComponents(string: redirectURI), let scheme = url.scheme?.lowercased() else { return "" }
        if let host = url.host, scheme == "https" || scheme == "http" {
            return " \(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")"
        }
        return " \(scheme):"
    }

    package func issueCode(
        _ request: AuthorizationRequest, authentication: Authentication, context: SesameRequestContext
    )
        async throws -> Response
    {
        let now = sesame.now
        let code = "sesame_ac_" + Base64URL.encode(Secrets.random(32))
        let grant = OAuthGrant(
            id: UUID().uuidString.lowercased(), clientID: request.client.id, userID: authentication.user.id,
            scope: request.scope, nonce: request.nonce,
            authTime: authentication.session.authenticatedAt, method: authentication.session.method,
            passkeyBackupEligible: authentication.session.passkeyBackupEligible, createdAt: now,
            expiresAt: now.addingTimeInterval(TokenIssuer.grantLifetime), revokedAt: nil,
            sessionID: TokenIssuer.tiedSession(scope: request.scope, authentication.session)
        )
        try await store.createGrant(
            grant, codeHash: Secrets.sha256(code),
            code: OAuthCode(
                grantID: grant.id, redirectURI: request.redirectURI, codeChallenge: request.codeChallenge,
                expiresAt: now.addingTimeInterval(TokenIssuer.codeLifetime))
        )
        await sesame.audit.record(
            .appAuthorized, .success, user: authentication.user, context: context, detail: request.client.id,
            client: request.client.id)
        var parameters = [("code", code)]
        if let state = request.state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return redirect(request.redirectURI, parameters)
    }

    /// `POST /oauth/consent`: the consent form's answer. The session comes from its cookie and the form carries the
    /// session's CSRF token (a plain form cannot send the header); the authorization request is checked again.
    package func consent(_ request: Request, context: SesameRequestContext, pages: Pages) async throws -> Response {
        let form = try await FormParameters.body(request)
        let query = form["request"] ?? ""
        let asked = FormParameters(Substring(query))
        let session = try await sesame.sessions.authenticate(cookieOf: request)
        guard let authentication = session, let csrf = form["csrf_token"],
            ConstantTime.equal(
                Array(csrf.utf8), Array(sesame.sessions.csrfToken(for: authentication.tokenHash).utf8))
        else {
            let words = await pages.words(request, userID: session?.user.id, uiLocales: asked["ui_locales"])
            return pages.failure("web.app-error.session-expired", words: words)
        }
        let now = sesame.now
        let authorization: AuthorizationRequest
        do {
            authorization = try await AuthorizationRequest.parse(
                asked, query: query, store: store, marker: marker, now: now)
        } catch let error as AuthorizationRequest.PageError {
            let words = await pages.words(request, userID: authentication.user.id, uiLocales: asked["ui_locales"])
            return pages.failure(Self.pageErrorKey(error), words: words)
        } catch let error as AuthorizationRequest.RedirectError {
            return redirectError(error)
        }
        guard form["decision"] == "allow" else {
            return redirectError(
                .init(
                    code: .accessDenied, description: "the person did not allow access",
                    redirectURI: authorization.redirectURI, state: authorization.state))
        }
        guard try await mayUse(authorization.client, authentication.user, context: context) else {
            return redirectError(
                .init(
                    code: .accessDenied, description: "the person is not in a group allowed to use this application",
                    redirectURI: authorization.redirectURI, state: authorization.state))
        }
        // The page may have waited longer than the window: an offline grant still needs a recent sign-in.
        let recency = Self.recency(for: authorization.scopes, sesame.configuration)
        if recency != nil, authorization.needsSignIn(authentication.session, now: now, recentWithin: recency) {
            return signInFirst(authorization, now: now)
        }
        try await store.recordConsent(
            userID: authentication.user.id, clientID: authorization.client.id, scope: authorization.scope,
            at: sesame.now)
        await sesame.audit.record(
            .appConsented, .success, user: authentication.user, context: context, detail: authorization.client.id,
            client: authorization.client.id)
        return try await issueCode(authorization, authentication: authentication, context: context)
    }

    // MARK: Tokens

    package func token(_ request: Request, context: SesameRequestContext) async throws -> Response {
        let form = try await FormParameters.body(request)
        if let name = form.repeated.first { throw OAuthError(.invalidRequest, "\(name) is given more than once") }
        let client = try await registry.authenticate(request, form)
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], let redirectURI = form["redirect_uri"], let verifier = form["code_verifier"]
            else {
                throw OAuthError(.invalidRequest, "code, redirect_uri and code_verifier are required")
            }
            switch try await store.redeemCode(hash: Secrets.sha256(code), now: sesame.now) {
            case .invalid:
                throw OAuthError.invalidGrant
            case .replayed:
                await sesame.audit.record(
                    .codeReplayed, .refused, user: nil, context: context, detail: client.id, client: client.id)
                throw OAuthError.invalidGrant
            case .redeemed(let stored, let grant):
                // RFC 7636 §4.6: BASE64URL(SHA256(code_verifier)) == code_challenge; the verifier is 43 to 128
                // unreserved characters (§4.1).
                guard grant.clientID == client.id, stored.redirectURI == redirectURI,
                    (43...128).contains(verifier.utf8.count),
                    verifier.utf8.allSatisfy({
                        ClientRules.isBase64URL($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "~")
                    }),
                    ConstantTime.equal(
                        Array(Base64URL.encode(Secrets.sha256(verifier)).utf8), Array(stored.codeChallenge.utf8))
                else { throw OAuthError.invalidGrant }
                return try await tokenResponse(grant: grant, client: client, context: context)
            }
        case "refresh_token":
            guard let refresh = form["refresh_token"] else {
                throw OAuthError(.invalidRequest, "refresh_token is required")
            }
            // The token must belong to this client before it is spent: another client's attempt changes nothing.
            guard let grantID = try await store.grantID(refreshTokenHash: Secrets.sha256(refresh)),
                let owner = try await store.grant(id: grantID), owner.clientID == client.id
            else { throw OAuthError.invalidGrant }
            let successor = TokenIssuer.newRefreshToken()
            switch try await store.rotateRefreshToken(
                hash: Secrets.sha256(refresh), newHash: Secrets.sha256(successor),
                idleExpiresAt: sesame.now.addingTimeInterval(TokenIssuer.refreshIdleLifetime), now: sesame.now
            ) {
            case .invalid:
                throw OAuthError.invalidGrant
            case .reused:
                await sesame.audit.record(
                    .refreshTokenReused, .refused, user: nil, context: context, detail: client.id, client: client.id)
                throw OAuthError.invalidGrant
            case .rotated(let grant):
                return try await tokenResponse(
                    grant: grant, client: client, context: context, rotatedRefreshToken: successor)
            }
        case DeviceAuthorizationRoutes.grantType:
            let grant = try await DeviceAuthorizationRoutes(sesame: sesame, store: store).poll(form, client: client)
            return try await tokenResponse(grant: grant, client: client, context: context)
        case nil:
            throw OAuthError(.invalidRequest, "grant_type is required")
        default:
            throw OAuthError(
                .unsupportedGrantType,
                "grant_type must be authorization_code, refresh_token or \(DeviceAuthorizationRoutes.grantType)")
        }
    }

    package func tokenResponse(
        grant: OAuthGrant, client: OAuthClient, context: SesameRequestContext, rotatedRefreshToken: String? = nil
    ) async throws
        -> Response
    {
        // The account must be enabled, and the session a grant without offline_access came from still signed in.
        guard let user = try await store.user(id: grant.userID), !user.disabled,
            try await tokens.sessionLive(of: grant)
        else {
            try await store.revokeGrant(id: grant.id, at: sesame.now)
            throw OAuthError.invalidGrant
        }
        // Checked at every exchange and refresh: a person taken out of the client's groups gets no more tokens.
        guard try await mayUse(client, user, context: context) else {
            try await store.revokeGrant(id: grant.id, at: sesame.now)
            throw OAuthError.invalidGrant
        }
        let body = try await tokens.tokens(
            for: grant, client: client, user: user, rotatedRefreshToken: rotatedRefreshToken)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", .cacheControl: "no-store",
                .init("Pragma")!: "no-cache",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(body)))
        )
    }

    // MARK: UserInfo, revocation, introspection

    package func userInfo(_ request: Request, form: FormParameters?) async throws -> Response {
        var token: String?
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw OAuthError.invalidToken("Send the access token as a Bearer token.")
            }
            token = String(parts[1])
        }
        if let bodyToken = form?["access_token"] {
            guard token == nil else { throw OAuthError(.invalidRequest, "Send the access token one way only.") }
            token = bodyToken
        }
        guard let token else {
            throw OAuthError(
                .invalidRequest, "An access token is required.", status: .unauthorized,
                challenge: #"Bearer realm="sesame""#)
        }
        guard let (claims, grant) = try await tokens.validAccessToken(token),
            let user = try await store.user(id: grant.userID), !user.disabled,
            let client = try await store.client(id: grant.clientID),
            try await Self.mayUse(client, userID: user.id, groups: sesame.accountGroups)
        else {
            throw OAuthError.invalidToken()
        }
        var body = try await tokens.scopeClaims(scope: claims.scope, user: user)
        body["sub"] = .string(claims.sub)
        return jsonResponse(Data(JSONValue.object(body).encoded()), cache: "no-store")
    }

    /// RFC 7009: the client's own refresh or access token ends its grant; anything else is answered 200 alike.
    package func revoke(_ request: Request, context: SesameRequestContext) async throws -> Response {
        let form = try await FormParameters.body(request)
        let client = try await registry.authenticate(request, form)
        guard let token = form["token"] else { throw OAuthError(.invalidRequest, "token is required") }
        var grantID = try await store.grantID(refreshTokenHash: Secrets.sha256(token))
        if grantID == nil, let (claims, _) = try await tokens.validAccessToken(token) { grantID = claims.gid }
        if let grantID, let grant = try await store.grant(id: grantID), grant.clientID == client.id {
            try await store.revokeGrant(id: grantID, at: sesame.now)
        }
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    /// RFC 7662, for confidential clients: whether an access or refresh token is live, and for whom.
    package func introspect(_ request: Request) async throws -> Response {
        let form = try await FormParameters.body(request)
        let client = try await registry.authenticate(request, form)
        guard !client.isPublic else {
            throw OAuthError(.unauthorizedClient, "Only confidential clients may introspect.", status: .unauthorized)
        }
        guard let token = form["token"] else { throw OAuthError(.invalidRequest, "token is required") }
        // A disabled account's tokens are inactive, as at UserInfo (its grants also end when it is disabled; this
        // covers grants made before that rule, or by a node of an earlier version).
        // Nor is the token of a person taken out of its client's allowed groups (as at refresh and UserInfo).
        func stillAllowed(_ grant: OAuthGrant) async throws -> Bool {
            guard let user = try await store.user(id: grant.userID), !user.disabled,
                let owner = try await store.client(id: grant.clientID)
            else { return false }
            return try await Self.mayUse(owner, userID: user.id, groups: sesame.accountGroups)
        }
        if let (claims, grant) = try await tokens.validAccessToken(token), try await stillAllowed(grant) {
            return try jsonResponse(
                [
                    "active": true, "token_type": "Bearer", "scope": claims.scope, "client_id": claims.client_id,
                    "sub": claims.sub, "exp": claims.exp,
                    "iat": claims.iat, "iss": claims.iss, "aud": claims.aud,
                    "auth_time": Int(grant.authTime.timeIntervalSince1970),
                ],
                cache: "no-store"
            )
        }
        // A refresh token is active only while unspent, within its idle and absolute lifetimes, and its grant live.
        if let grant = try await store.liveRefreshTokenGrant(hash: Secrets.sha256(token), now: sesame.now),
            try await stillAllowed(grant)
        {
            return try jsonResponse(
                [
                    "active": true, "token_type": "refresh_token", "scope": grant.scope, "client_id": grant.clientID,
                    "sub": try await tokens.subject(userID: grant.userID, clientID: grant.clientID), "iss": issuer,
                ],
                cache: "no-store"
            )
        }
        return try jsonResponse(["active": false], cache: "no-store")
    }

    package func jsonResponse(_ object: [String: any Sendable], cache: String) throws -> Response {
        jsonResponse(
            try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]),
            cache: cache)
    }

    package func jsonResponse(_ data: Data, cache: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: cache],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
