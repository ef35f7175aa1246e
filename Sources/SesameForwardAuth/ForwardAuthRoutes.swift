import Foundation
import HTTPTypes
import Hummingbird
import SesameCore
import SesameIdentityProvider
import SesameWeb
import NIOCore

/// Reverse-proxy sign-in (docs/integrations.md): the check nginx `auth_request`, Caddy `forward_auth` and Traefik
/// `ForwardAuth` call, the return endpoint people are sent to, and the callback on an app's own host. The rules
/// are `ForwardAuthService`'s.
///
/// - `GET /forward-auth`: `X-Forwarded-Proto`/`-Host`/`-Uri` name what was asked for. A host outside
///   `forwardAuthDomains` (or a malformed header) is 403 `host_not_allowed`, never a redirect. A session that may
///   pass is 200 with `Remote-User`, `Remote-Name`, `Remote-Amr`, `Remote-Email` (the verified address) and
///   `Remote-Groups` (each always present, empty when there is nothing to say). An address the rules
///   (`ForwardAuthRules`) refuse, or a signed-in person outside the rule's groups, is 403 with a page. Otherwise
///   302 to Sesame, or with `?mode=status` (nginx: `auth_request` understands only 2xx, 401 and 403) 401 with the
///   same `Location`.
/// - `GET /forward-auth/return?rd=URL[&state=…]`: on Sesame's origin, after sign-in; `rd` outside the configured
///   domains is 403, never a redirect.
/// - `GET /forward-auth/callback?rd=URL` (start) and `?code=…` (finish): reached through the app's proxy at
///   `/_sesame/callback`.
package struct ForwardAuthRoutes {
    package let sesame: ServerCore
    /// Where `Remote-Email` comes from (the account's verified address).
    package let emails: any VerifiedEmailLookup

    package init(sesame: ServerCore, emails: any VerifiedEmailLookup = NoVerifiedEmail()) {
        self.sesame = sesame
        self.emails = emails
    }

    package static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    package static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!
    package static let forwardedURI = HTTPField.Name("X-Forwarded-Uri")!

    /// What the proxy says was asked for, if it is an address Sesame answers for.
    package static func target(_ request: Request, service: ForwardAuthService, uri: Bool = true) throws
        -> ForwardTarget
    {
        // A header given twice is ambiguous: refused rather than guessed.
        for name in [forwardedProto, forwardedHost, forwardedURI] where request.headers[values: name].count > 1 {
            throw APIError.hostNotAllowed
        }
        guard
            let target = ForwardTarget(
                proto: request.headers[forwardedProto], host: request.headers[forwardedHost],
                uri: uri ? request.headers[forwardedURI] : "/"),
            service.accepts(target)
        else { throw APIError.hostNotAllowed }
        return target
    }

    package static func redirect(_ location: String, status: HTTPResponse.Status = .seeOther, headers: HTTPFields = [:])
        -> Response
    {
        var fields = headers
        fields[.location] = location
        fields[.cacheControl] = "no-store"
        fields[.init("Referrer-Policy")!] = "no-referrer"
        return Response(status: status, headers: fields)
    }

    /// The 403 page for an address the rules keep the person from. It is shown on the app's host (the proxy passes
    /// the answer on), so its links and styles name Sesame's origin and it loads no script. It is in `words`'
    /// language (the proxy passes the person's `Accept-Language` on).
    package static func deniedPage(
        _ page: WebRoutes.DynamicPage?, configuration: ServerConfiguration, host: String, username: String?,
        words: PageWords
    ) -> Response {
        let message =
            username.map { words.sentence("web.forward-denied.signed-in", ["username": $0]) }
            ?? words.sentence("web.forward-denied.nobody", ["site": configuration.rpName])
        guard let page,
            let html = try? page.render(
                configuration, script: "consent", ["host": host, "message": message], words: words)
        else {
            return Response(
                status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: "You don't have access to this address.")))
        }
        let origin = configuration.origin
        // No script, not even the page's messages (nothing here reads them).
        var scriptless = html
        if let start = scriptless.range(of: "<script type=\"application/json\" id=\"sesame-messages\">"),
            let end = scriptless.range(of: "</script>\n", range: start.upperBound..<scriptless.endIndex)
        {
            scriptless.removeSubrange(start.lowerBound..<end.upperBound)
        }
        let absolute =
            scriptless
            .replacingOccurrences(of: "<script type=\"module\" src=\"/static/consent.js\"></script>\n", with: "")
            .replacingOccurrences(of: "href=\"/", with: "href=\"\(origin)/")
            .replacingOccurrences(of: "src=\"/", with: "src=\"\(origin)/")
        return Response(
            status: .forbidden,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store", .contentLanguage: words.tag,
                .contentSecurityPolicy:
                    "default-src 'none'; style-src \(origin); img-src \(origin); base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(string: absolute)))
    }

    package func register(on router: Router<SesameRequestContext>) {
        let service = ForwardAuthService(sesame)
        var page: WebRoutes.DynamicPage?
        do { page = try .load("forward-denied", title: "web.forward-denied.title") } catch {
            sesame.logger.error(
                "forward-auth page not loaded", metadata: ["reason": .string(String(describing: error))])
        }
        let deniedPage = page
        let configuration = sesame.configuration
        let languages = sesame.languages

        router.get("/forward-auth") { request, _ -> Response in
            let query = FormParameters.query(request)
            guard query.repeated.isEmpty else { throw APIError.badRequest }
            let statusOnly: Bool
            switch query["mode"] {
            case nil, "redirect"?: statusOnly = false
            case "status"?: statusOnly = true
            default: throw APIError.badRequest
            }
            let target = try Self.target(request, service: service)
            let match = service.rule(target)
            // An address no one may pass is refused before any session is read.
            let authentication =
                match == .refused ? nil : try await service.admittedSession(request, at: target)
            switch try await service.decide(match, authentication) {
            case .pass(let groups):
                guard let authentication else { throw APIError.unauthenticated }
                let email = try await emails.verifiedEmail(userID: authentication.user.id)
                return Response(
                    status: .ok, headers: service.identityHeaders(authentication, groups: groups, email: email))
            case .signIn:
                return Self.redirect(service.signInLocation(target), status: statusOnly ? .unauthorized : .found)
            case .denied:
                return Self.deniedPage(
                    deniedPage, configuration: configuration, host: target.host,
                    username: authentication?.user.username,
                    words: await languages.words(for: request, userID: authentication?.user.id))
            }
        }

        router.get("/forward-auth/return") { request, context -> Response in
            let query = FormParameters.query(request)
            guard query.repeated.isEmpty, let rd = query["rd"], let target = ForwardTarget(url: rd),
                service.accepts(target)
            else { throw APIError.hostNotAllowed }
            // Outside the cookie domain the code exchange needs the state its callback set in this browser.
            let state = query["state"]
            let shared = service.sharesCookie(target)
            guard shared || state.map({ SessionIssuer.isWellFormed($0) }) == true else { throw APIError.badRequest }
            guard let authentication = context.authentication, service.admits(authentication.session, at: target)
            else { return Self.redirect(service.signInPage(target, state: shared ? nil : state)) }
            guard let state, !shared else { return Self.redirect(target.url) }
            return Self.redirect(
                try await service.callback(
                    for: target, state: state, authentication, clientAddress: context.clientAddress))
        }

        router.get("/forward-auth/callback") { request, context -> Response in
            let query = FormParameters.query(request)
            guard query.repeated.isEmpty else { throw APIError.badRequest }
            let origin = try Self.target(request, service: service, uri: false)
            if let rd = query["rd"], query["code"] == nil {
                let (cookie, location) = try service.start(rd: rd, at: origin)
                return Self.redirect(location, headers: [.setCookie: cookie])
            }
            guard let code = query["code"] else { throw APIError.challengeInvalid }
            let state = request.cookies[Cookies.forwardStateName(secure: origin.scheme == "https")]?.value
            let (cookies, location) = try await service.redeem(
                code: code, state: state, at: origin, clientAddress: context.clientAddress)
            var headers = HTTPFields()
            for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
            return Self.redirect(location, headers: headers)
        }
    }
}
