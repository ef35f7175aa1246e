import Foundation
import Hummingbird
import NIOCore
import SesameBytes
import SesameCore
import SesameLanguage
import SesameWeb

/// One page of the console: `/console/<slug>`, its body in `templates/<slug>.html` and its script
/// `static/console-<slug>.js`. Pages are listed in `ConsoleRoutes.pages`, which is the navigation too. A page with
/// `items` also serves `/console/<slug>/<item>` (one person, one app…) with the same template and script, the item
/// in the template's `{{item}}` (empty on the list) and behind the same gate.
package struct ConsolePage: Sendable, Hashable {
    package let slug: String
    package let items: Bool

    package init(_ slug: String, items: Bool = false) {
        self.slug = slug
        self.items = items
    }

    /// The catalog key of the page's title, which is also its name in the navigation.
    package var titleKey: String { "console.\(slug).title" }

    /// An item's path segment: what the sign-in page's `return` accepts (`[A-Za-z0-9_-]`, 1 to 128 characters).
    package static func isItem(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                    || (0x61...0x7A).contains($0)
            }
    }
}

/// The operators' console (`/console/…`): server-rendered pages whose scripts call the admin JSON API
/// (`/api/admin/…`). Every page passes the admin gate (`AdminGate`) first: signed out, it sends the visitor to sign
/// in with a passkey and come back; a signed-in person outside the administrators' group gets a 403 page; a
/// password session, or a passkey sign-in older than `consoleReauthenticationWindow`, gets a page that asks for the
/// passkey inline and then shows the console. Pages carry a strict Content-Security-Policy of their own, are never
/// cached and never framed, and hold the console's own CSRF token (`X-Console-CSRF`) besides the session's.
package struct ConsoleRoutes: Sendable {
    package let sesame: ServerCore
    package let gate: AdminGate

    package init(sesame: ServerCore, gate: AdminGate) {
        self.sesame = sesame
        self.gate = gate
    }

    /// Every page, in the navigation's order.
    package static let pages: [ConsolePage] = [
        ConsolePage("overview"), ConsolePage("people", items: true), ConsolePage("groups"),
        ConsolePage("invitations"), ConsolePage("apps"), ConsolePage("forward-auth"), ConsolePage("keys"),
        ConsolePage("metadata"), ConsolePage("settings"), ConsolePage("tokens"), ConsolePage("audit"),
    ]

    /// The catalog keys the console's scripts read (`/static/i18n.js`), by prefix.
    package static let scriptPrefixes = ["console.", "error.", "web.common."]

    /// Nothing but this origin's scripts, styles and images, and calls to it; no frames, forms post here only.
    package static let contentSecurityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'",
        "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'", "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    ].joined(separator: "; ")

    package static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: contentSecurityPolicy,
        .cacheControl: "no-store",
        .init("X-Frame-Options")!: "DENY",
        .init("X-Content-Type-Options")!: "nosniff",
        .init("Referrer-Policy")!: "no-referrer",
        .init("Cross-Origin-Opener-Policy")!: "same-origin",
        .init("Cross-Origin-Resource-Policy")!: "same-origin",
        .init("Permissions-Policy")!: "publickey-credentials-get=(self), publickey-credentials-create=()",
    ]

    /// A console resource the bundle should hold cannot be read or filled.
    package typealias LoadError = WebRoutes.LoadError

    /// The templates and static files, read once.
    package struct Resources: Sendable {
        package let layout: String
        package let bodies: [String: String]
        package let files: [String: WebRoutes.StaticFile]

        package static func load() throws -> Resources {
            // `Package.swift` copies `Resources`, so the folder is `Resources/Console`; were `Console` copied itself,
            // it would be at the bundle's root.
            guard
                let root = Bundle.module.url(forResource: "Console", withExtension: nil)
                    ?? Bundle.module.url(forResource: "Console", withExtension: nil, subdirectory: "Resources")
            else { throw LoadError(code: .missing, message: "the console's resources are missing from the bundle") }
            let templates = root.appendingPathComponent("templates")
            var bodies: [String: String] = [:]
            for name in ConsoleRoutes.pages.map(\.slug) + ["gate"] {
                bodies[name] = try String(
                    contentsOf: templates.appendingPathComponent("\(name).html"), encoding: .utf8)
            }
            let files = try WebRoutes.loadStaticFiles(in: root.appendingPathComponent("static"))
            return Resources(
                layout: try String(contentsOf: templates.appendingPathComponent("layout.html"), encoding: .utf8),
                bodies: bodies, files: files)
        }
    }

    /// The navigation in `words`' language, with the current page marked.
    package static func navigation(current: String?, words: PageWords = .english) -> String {
        var html = "<ul>"
        for page in pages {
            let here = page.slug == current ? " aria-current=\"page\"" : ""
            let title = (try? words.catalog.text(page.titleKey, in: words.tag)) ?? page.titleKey
            html +=
                "<li><a href=\"/console/\(WebRoutes.escapeHTML(page.slug))\"\(here)>\(WebRoutes.escapeHTML(title))</a></li>"
        }
        return html + "</ul>"
    }

    /// A page's HTML in `words`' language: the layout (with `lang`, `dir` and the messages the scripts read) around
    /// its body, with the tokens its scripts send. `titleKey` is the catalog key of the page's title.
    package func render(
        _ resources: Resources, body: String, titleKey: String, script: String, current: String?,
        csrf: String, consoleCSRF: String, words: PageWords, values: [String: String] = [:]
    ) throws -> String {
        let language = words.catalog.languages[words.tag]
        var common = [
            "rpName": sesame.configuration.rpName, "site": sesame.configuration.rpName,
            "rpID": sesame.configuration.rpID, "script": script, "csrf": csrf, "consoleCSRF": consoleCSRF,
            "lang": words.tag, "dir": language?.direction.rawValue ?? "ltr",
        ]
        common["title"] = (try? words.catalog.text(titleKey, in: words.tag, common)) ?? titleKey
        let all = values.merging(common) { own, _ in own }
        let inner = try WebRoutes.fill(body, all, words: words)
        let navigationLabel = WebRoutes.escapeHTML(
            (try? words.catalog.text("console.common.navigation", in: words.tag)) ?? "Console")
        // The navigation is markup made here from the catalog's titles, escaped; `fill` places `content` and
        // `messages` (JSON whose `<`, `>` and `&` are escaped) as they are.
        let content =
            "<nav class=\"console\" aria-label=\"\(navigationLabel)\">\(Self.navigation(current: current, words: words))</nav>\n"
            + "<main id=\"main\" tabindex=\"-1\">\n\(inner)</main>"
        let messages = words.catalog.scriptMessages(words.tag, prefixes: Self.scriptPrefixes)
        return try WebRoutes.fill(
            resources.layout, all.merging(["content": content, "messages": messages]) { _, new in new }, words: words)
    }

    /// The words for a request: its language (`PageLanguages`: saved choice, `ui_locales`, `Accept-Language`, the
    /// default) and the catalog.
    private func pageWords(_ request: Request, _ context: SesameRequestContext) async -> PageWords {
        let tag = await sesame.languages.tag(for: request, userID: context.authentication?.user.id)
        return PageWords(catalog: sesame.languages.catalog, tag: tag)
    }

    /// The sentence for a refusal: the catalog's `error.<code>` in the page's language, else the error's own.
    private static func refusalText(_ error: APIError, words: PageWords) -> String {
        (try? words.catalog.text("error.\(error.code.rawValue)", in: words.tag)) ?? error.message
    }

    private func html(_ status: HTTPResponse.Status, _ text: String, words: PageWords) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentLanguage] = words.tag
        headers[.vary] = "Accept-Language, Cookie"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The gate's refusal as a page: where to sign in, a 403, or the inline passkey check.
    private func refusal(
        _ error: APIError, path: String, resources: Resources, context: SesameRequestContext, words: PageWords,
        refusalKey: String? = nil
    ) throws -> Response {
        let refusal =
            refusalKey.flatMap { try? words.catalog.text($0, in: words.tag) } ?? Self.refusalText(error, words: words)
        switch error.code {
        case .unauthenticated, .sessionLimited:
            var query = URLComponents()
            query.queryItems = [.init(name: "return", value: path), .init(name: "passkey", value: "required")]
            return Response(
                status: .seeOther,
                headers: [
                    .location: "/signin\(query.percentEncodedQuery.map { "?\($0)" } ?? "")", .cacheControl: "no-store",
                ])
        case .passkeyRequired, .reauthenticationRequired:
            guard let authentication = context.authentication else { throw error }
            let page = try render(
                resources, body: resources.bodies["gate"] ?? "", titleKey: "console.gate.confirm-title",
                script: "console-gate", current: nil, csrf: sesame.sessions.csrfToken(for: authentication.tokenHash),
                consoleCSRF: gate.consoleCSRFToken(for: authentication.tokenHash), words: words,
                values: ["reason": error.code == .passkeyRequired ? "passkey" : "stale", "refusal": refusal])
            return html(.unauthorized, page, words: words)
        default:
            let page = try render(
                resources, body: resources.bodies["gate"] ?? "", titleKey: "console.gate.forbidden-title",
                script: "console-gate", current: nil, csrf: "", consoleCSRF: "", words: words,
                values: ["reason": "forbidden", "refusal": refusal])
            return html(.forbidden, page, words: words)
        }
    }

    /// Registers the pages on `console` (the `/console` group behind `AdminMiddleware`) and their static files.
    package func register(console: RouterGroup<SesameRequestContext>) {
        let resources: Resources?
        do { resources = try Resources.load() } catch {
            sesame.logger.error("console not loaded", metadata: ["reason": .string(String(describing: error))])
            resources = nil
        }
        console.get("") { _, _ in
            Response(
                status: .seeOther,
                headers: [.location: "/console/\(Self.pages.first?.slug ?? "")", .cacheControl: "no-store"])
        }
        for page in Self.pages {
            let show: @Sendable (Request, SesameRequestContext, String) async throws -> Response = {
                request, context, item in
                guard let resources else { throw APIError.unavailable }
                let words = await pageWords(request, context)
                guard let admin = context.admin else {
                    return try refusal(
                        context.adminRefusal ?? .unauthenticated, path: request.uri.path, resources: resources,
                        context: context, words: words)
                }
                guard case .session(let authentication) = admin.via else {
                    // Pages are for people; a token reaches the JSON API only.
                    return try refusal(
                        APIError(.forbidden, .notAnAdmin, "The console is for people; tokens use the admin API."),
                        path: request.uri.path, resources: resources, context: context, words: words,
                        refusalKey: "console.gate.tokens")
                }
                return html(
                    .ok,
                    try render(
                        resources, body: resources.bodies[page.slug] ?? "", titleKey: page.titleKey,
                        script: "console-\(page.slug)", current: page.slug,
                        csrf: sesame.sessions.csrfToken(for: authentication.tokenHash),
                        consoleCSRF: gate.consoleCSRFToken(for: authentication.tokenHash), words: words,
                        values: page.items ? ["item": item] : [:]),
                    words: words)
            }
            console.get(RouterPath(page.slug)) { request, context in try await show(request, context, "") }
            if page.items {
                console.get(RouterPath("\(page.slug)/{item}")) { request, context in
                    let item = try context.parameters.require("item")
                    guard ConsolePage.isItem(item) else { throw APIError.notFound }
                    return try await show(request, context, item)
                }
            }
        }
        console.get("static/{name}") { request, context -> Response in
            guard let file = resources?.files[try context.parameters.require("name")] else { throw APIError.notFound }
            var headers: HTTPFields = [.contentType: file.contentType, .eTag: file.etag, .cacheControl: "no-cache"]
            if file.contentType.hasPrefix("image/svg") { headers[.contentSecurityPolicy] = "default-src 'none'" }
            if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: headers) }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
        }
    }
}
