import Foundation
import HTTPTypes
import Hummingbird
import WebAuthn
import SesameCore
import SesameBytes
import SesameWeb

/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): an application sends the person to
/// `/oauth/logout` to end their Sesame session too.
///
/// - `post_logout_redirect_uri` is followed only when it is registered, exactly, for the client named by
///   `client_id` or by the audience of `id_token_hint` (both given and different: refused). Anything else shows a
///   page and redirects nowhere, so the endpoint is no open redirect.
/// - A genuine `id_token_hint` (signed by one of Sesame's keys; it may have expired) for the person signed in ends
///   the session at once. Without one, the person confirms on a page whose form carries the session's CSRF token,
///   so another site cannot sign them out by sending them here.
/// - Ending the session also sends back-channel logout tokens to the clients that registered for them.
package struct LogoutRoutes {
    package let sesame: ServerCore
    package let store: any IdentityProviderStorage
    package let tokenIssuer: TokenIssuer
    package let backChannelLogout: BackChannelLogout

    package init(
        sesame: ServerCore, store: any IdentityProviderStorage, tokenIssuer: TokenIssuer,
        backChannelLogout: BackChannelLogout
    ) {
        self.sesame = sesame
        self.store = store
        self.tokenIssuer = tokenIssuer
        self.backChannelLogout = backChannelLogout
    }

    package struct Request: Sendable {
        package let client: OAuthClient?
        package let redirectURI: String?
        package let state: String?
        package let hintSubject: String?
        package let query: String
    }

    package func register(on router: Router<SesameRequestContext>) {
        var confirmPage: WebRoutes.DynamicPage?
        var done: WebRoutes.DynamicPage?
        var errorPage: WebRoutes.DynamicPage?
        do {
            confirmPage = try .load("logout", title: "web.logout.title")
            done = try .load("signed-out", title: "web.signed-out.title")
            errorPage = try .load("app-error", title: "web.logout.error-title")
        } catch {
            sesame.logger.error("logout pages not loaded", metadata: ["reason": .string(String(describing: error))])
        }
        let pages = IdentityProviderRoutes.Pages(
            consent: confirmPage, error: errorPage, configuration: sesame.configuration, languages: sesame.languages)
        let donePage = done

        router.get("/oauth/logout") { request, context in
            let authentication = try await sesame.sessions.authenticate(cookieOf: request)
            return try await logout(
                FormParameters.query(request), authentication: authentication, context: context, pages: pages,
                done: donePage, words: await pages.words(request, userID: authentication?.user.id))
        }
        router.post("/oauth/logout") { request, context in
            let form = try await FormParameters.body(request)
            let authentication = try await sesame.sessions.authenticate(cookieOf: request)
            return try await logout(
                form, authentication: authentication, context: context, pages: pages, done: donePage,
                words: await pages.words(request, userID: authentication?.user.id, uiLocales: form["ui_locales"]))
        }
        router.post("/oauth/logout/confirm") { request, context in
            try await confirm(request, context: context, pages: pages, done: donePage)
        }
    }

    /// A refused sign-out link: `message` for the log, `key` (and `values`) the catalog's sentence for the page.
    package static func refusal(
        _ message: String, key: String, _ values: [String: String] = [:], file: String = #fileID, line: Int = #line
    ) -> IdentityProviderError {
        var error = IdentityProviderError(code: .logoutRefused, message: message, file: file, line: line)
        error.extra = values.merging(["key": key]) { _, key in key }
        return error
    }

    /// The page for a refused sign-out link, in `words`' language.
    package static func refused(_ refusal: IdentityProviderError, pages: IdentityProviderRoutes.Pages, words: PageWords)
        -> Response
    {
        pages.failure(refusal.extra["key"] ?? "web.app-error.logout-refused", words: words, refusal.extra)
    }

    package func parse(_ form: FormParameters) async throws -> Request {
        if let name = form.repeated.first {
            throw Self.refusal(
                "The link gives \(name) more than once.", key: "web.app-error.logout-repeated", ["name": name])
        }
        var hint: TokenIssuer.Hint?
        if let token = form["id_token_hint"] {
            guard let claims = try await tokenIssuer.idTokenHint(token) else {
                throw Self.refusal(
                    "The sign-out link carries a token Sesame did not issue.", key: "web.app-error.logout-foreign-token"
                )
            }
            hint = claims
        }
        if let clientID = form["client_id"], let hint, hint.aud != clientID {
            throw Self.refusal(
                "The sign-out link names two different applications.", key: "web.app-error.logout-two-applications")
        }
        var client: OAuthClient?
        if let clientID = form["client_id"] ?? hint?.aud {
            guard clientID.utf8.count <= 128, let found = try await store.client(id: clientID) else {
                throw Self.refusal(
                    "The sign-out link names an application Sesame does not know.",
                    key: "web.app-error.logout-unknown-application")
            }
            client = found
        }
        let redirectURI = form["post_logout_redirect_uri"]
        if let redirectURI {
            guard let client, client.postLogoutRedirectURIs.contains(redirectURI) else {
                throw Self.refusal(
                    "The sign-out link asks to go back to an address its application did not register.",
                    key: "web.app-error.logout-unregistered-redirect")
            }
        }
        let kept = ["client_id", "post_logout_redirect_uri", "state", "id_token_hint"].compactMap { name in
            form[name].map { (name, $0) }
        }
        return Request(
            client: client, redirectURI: redirectURI, state: form["state"], hintSubject: hint?.sub,
            query: FormParameters.encode(kept))
    }

    /// `words`: the page's language (`IdentityProviderRoutes.Pages.words`).
    package func logout(
        _ form: FormParameters, authentication: Authentication?, context: SesameRequestContext,
        pages: IdentityProviderRoutes.Pages, done: WebRoutes.DynamicPage?, words: PageWords
    ) async throws -> Response {
        let request: Request
        do { request = try await parse(form) } catch let refused as IdentityProviderError
            where refused.code == .logoutRefused
        {
            return Self.refused(refused, pages: pages, words: words)
        }
        guard let authentication else {
            return finished(request, pages: pages, done: done, signedOut: false, words: words)
        }
        if let hint = request.hintSubject, let client = request.client,
            tokenIssuer.subjects.subject(userID: authentication.user.id, client: client) == hint
        {
            return try await signOut(authentication, request, context: context, pages: pages, done: done, words: words)
        }
        return pages.html(
            pages.consent, status: .ok,
            values: [
                "clientName": request.client?.name ?? words.sentence("web.logout.unknown-app"),
                "username": authentication.user.username, "request": request.query,
                "csrf": sesame.sessions.csrfToken(for: authentication.tokenHash),
            ],
            words: words, formAction: request.redirectURI.map(IdentityProviderRoutes.formActionSource) ?? "")
    }

    /// `POST /oauth/logout/confirm`: the confirmation form's answer, checked like the consent form (the session
    /// from its cookie, the form's CSRF token).
    package func confirm(
        _ request: Hummingbird.Request, context: SesameRequestContext, pages: IdentityProviderRoutes.Pages,
        done: WebRoutes.DynamicPage?
    ) async throws -> Response {
        let form = try await FormParameters.body(request)
        let session = try await sesame.sessions.authenticate(cookieOf: request)
        let words = await pages.words(request, userID: session?.user.id)
        let logout: Request
        do {
            logout = try await parse(FormParameters(Substring(form["request"] ?? "")))
        } catch let refused as IdentityProviderError where refused.code == .logoutRefused {
            return Self.refused(refused, pages: pages, words: words)
        }
        guard let authentication = session else {
            return finished(logout, pages: pages, done: done, signedOut: false, words: words)
        }
        guard let csrf = form["csrf_token"],
            ConstantTime.equal(
                Array(csrf.utf8), Array(sesame.sessions.csrfToken(for: authentication.tokenHash).utf8))
        else { return pages.failure("web.app-error.session-expired", words: words) }
        guard form["decision"] == "sign_out" else {
            return Response(status: .seeOther, headers: [.location: "/account", .cacheControl: "no-store"])
        }
        return try await signOut(authentication, logout, context: context, pages: pages, done: done, words: words)
    }

    package func signOut(
        _ authentication: Authentication, _ request: Request, context: SesameRequestContext,
        pages: IdentityProviderRoutes.Pages, done: WebRoutes.DynamicPage?, words: PageWords
    ) async throws -> Response {
        // The apps to tell are found first: the grants without offline_access this session made end with it.
        let apps = try await backChannelLogout.clients(of: authentication.user.id)
        _ = try await store.deleteSession(userID: authentication.user.id, id: authentication.session.id)
        await sesame.audit.record(
            .signOut, .success, user: authentication.user, context: context, detail: request.client?.id ?? "")
        backChannelLogout.send(to: apps, userID: authentication.user.id)
        var response = finished(request, pages: pages, done: done, signedOut: true, words: words)
        response.headers[.setCookie] = sesame.cookies.clear(.session)
        return response
    }

    /// Back to the application when it registered where, else a page saying what happened.
    package func finished(
        _ request: Request, pages: IdentityProviderRoutes.Pages, done: WebRoutes.DynamicPage?, signedOut: Bool,
        words: PageWords
    ) -> Response {
        if let redirectURI = request.redirectURI {
            let separator = redirectURI.contains("?") ? "&" : "?"
            let location =
                request.state.map { redirectURI + separator + FormParameters.encode([("state", $0)]) } ?? redirectURI
            return Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
        }
        let site = ["site": sesame.configuration.rpName]
        return pages.html(
            done, status: .ok,
            values: [
                "heading": words.sentence(signedOut ? "web.signed-out.heading" : "web.signed-out.not-signed-in"),
                "message": words.sentence(
                    signedOut ? "web.signed-out.message" : "web.signed-out.no-session", site),
            ],
            words: words)
    }
}
