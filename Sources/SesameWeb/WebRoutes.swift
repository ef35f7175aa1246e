import Crypto
import Foundation
import Hummingbird
import NIOCore
import SesameCore
import SesameLanguage
import SesameBytes

/// The server's own web pages (`/signin`, `/signup`, `/account`) and their static files (`/static/<name>`).
///
/// Pages are HTML templates from `Resources/Web/templates`: each page's body is placed in `layout.html`, and the
/// `{{key}}` placeholders are replaced by HTML-escaped configuration values (site name, RP ID). Nothing in a page
/// depends on the request, so every page is rendered once when the routes are built. Scripts and styles are files
/// under `Resources/Web/static`, served by exact name only (the name set is read at start-up, so no request path
/// ever reaches the file system). Every page carries a Content-Security-Policy that allows only this origin and
/// no inline script or style.
///
/// The account page's cards are the features' (`AccountSection`, given by the composition root): `account.html`
/// places their fragments, in order of position, where it says `{{sections}}`; their scripts are served beside
/// this target's files and loaded after the page's shared `account.js`.
package struct WebRoutes {
    package let sesame: ServerCore
    /// Whether `/recover` (recovery by email) is served and the sign-in page links to it (`emailRecovery`).
    package let emailRecovery: Bool
    /// The account page's cards, each with its script (`AccountSection.server`).
    package let accountSections: [AccountSection]
    /// The sign-in page's second step, a choice per factor (`SecondStepChoice.server`).
    package let secondStepChoices: [SecondStepChoice]

    package init(
        sesame: ServerCore, emailRecovery: Bool = false, accountSections: [AccountSection] = [],
        secondStepChoices: [SecondStepChoice] = []
    ) {
        self.sesame = sesame
        self.emailRecovery = emailRecovery
        self.accountSections = accountSections
        self.secondStepChoices = secondStepChoices
    }

    /// Scripts, styles, images and connections from this origin only; no plugins, no framing, no `<base>`, forms
    /// post here only; DOM string sinks must go through Trusted Types (the pages never use them).
    package static let contentSecurityPolicy = [
        "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'",
        "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
        "require-trusted-types-for 'script'", "trusted-types 'none'",
    ].joined(separator: "; ")

    /// A static file held in memory with its validator.
    package struct StaticFile: Sendable {
        package let bytes: ByteBuffer
        package let contentType: String
        package let etag: String
    }

    package enum Page: String, CaseIterable, Sendable {
        case signin, signup, account, recover
        case emailVerify = "email-verify"
        case recoverLink = "recover-link"

        /// The catalog key of the page's title.
        package var titleKey: String { "web.\(rawValue).title" }

        /// The catalog keys the page's scripts read (`i18n.js`), by prefix: the page's own, the words every page
        /// shares, and the sentences of the API's error codes. The account page's own are its title and the words
        /// of its shared script; each section adds its own (`AccountSection.messagePrefixes`).
        package var scriptPrefixes: [String] {
            if self == .account {
                return ["web.common.", "error.", "web.account.title", "web.account.failed", "web.account.never"]
            }
            var prefixes = ["web.common.", "error.", "web.\(rawValue)."]
            if self == .recover || self == .recoverLink { prefixes.append("web.recovery.") }
            return prefixes
        }
    }

    /// A page or resource the bundle should hold cannot be read or filled: the server's error shape.
    package typealias LoadError = ServerError<WebResourceErrorCode>

    private static func resourceDirectory(_ name: String) throws -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources/Web") else {
            throw LoadError(code: .missing, message: "web resource folder \(name) is missing from the bundle")
        }
        return url
    }

    /// `{{key}}` → escaped value; `{{t:key}}` → the catalog's message `key` in `words`' language, its
    /// `{placeholders}` filled from `values`, escaped. Unknown keys are an error, so a typo in a template fails at
    /// start-up (and the catalog tests find it before that).
    package static func fill(_ template: String, _ values: [String: String], words: PageWords? = nil) throws -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw LoadError(code: .badTemplate, message: "unclosed {{ in template")
            }
            let key = String(rest[open.upperBound..<close.lowerBound])
            if key.hasPrefix("t:") {
                guard let words else {
                    throw LoadError(code: .badTemplate, message: "template names message \(key) without a catalog")
                }
                do {
                    output += escapeHTML(try words.catalog.text(String(key.dropFirst(2)), in: words.tag, values))
                } catch {
                    throw LoadError(code: .badTemplate, message: "template names unknown message \(key.dropFirst(2))")
                }
            } else {
                guard let value = values[key] else {
                    throw LoadError(code: .badTemplate, message: "template names unknown value \(key)")
                }
                output += key == "content" || key == "messages" || key == "scripts" ? value : escapeHTML(value)
            }
            rest = rest[close.upperBound...]
        }
        return output + rest
    }

    package static func escapeHTML(_ text: String) -> String { HTMLText.escape(text) }

    /// A page filled per request (consent, application errors): the layout and the body template, read once.
    package struct DynamicPage: Sendable {
        package let layout: String
        package let body: String
        package let name: String
        /// The catalog key of the page's title.
        package let title: String

        package static func load(_ name: String, title: String) throws -> DynamicPage {
            let templates = try resourceDirectory("templates")
            return DynamicPage(
                layout: try String(contentsOf: templates.appendingPathComponent("layout.html"), encoding: .utf8),
                body: try String(contentsOf: templates.appendingPathComponent("\(name).html"), encoding: .utf8),
                name: name, title: title
            )
        }

        /// The page's HTML in `words`' language; every value is escaped. `script` names the static module the page
        /// loads; its scripts get the catalog's `web.common.`, `error.` and `web.<script>.` messages.
        package func render(
            _ configuration: ServerConfiguration, script: String, _ values: [String: String], words: PageWords
        ) throws -> String {
            try WebRoutes.page(
                layout: layout, body: body, configuration: configuration, script: script, titleKey: title,
                values: values, words: words, scriptPrefixes: ["web.common.", "error.", "web.\(script)."])
        }
    }

    /// The layout around a body in `words`' language: `lang` and `dir`, the title, and the messages its scripts read.
    /// `scripts` are static modules the page loads after its own (`script`), in order.
    package static func page(
        layout: String, body: String, configuration: ServerConfiguration, script: String, titleKey: String,
        values: [String: String], words: PageWords, scriptPrefixes: [String], scripts: [String] = []
    ) throws -> String {
        let language = words.catalog.languages[words.tag]
        var common = [
            "rpName": configuration.rpName, "site": configuration.rpName, "rpID": configuration.rpID, "page": script,
            "lang": words.tag, "dir": language?.direction.rawValue ?? "ltr",
        ]
        common["title"] = (try? words.catalog.text(titleKey, in: words.tag, common)) ?? titleKey
        let all = values.merging(common) { own, _ in own }
        let inner = try fill(body, all, words: words)
        let messages = words.catalog.scriptMessages(words.tag, prefixes: scriptPrefixes)
        let tags = scripts.map { "\n<script type=\"module\" src=\"/static/\(escapeHTML($0))\"></script>" }.joined()
        return try fill(
            layout, all.merging(["content": inner, "messages": messages, "scripts": tags]) { _, new in new },
            words: words)
    }

    /// The account page's cards in order: each section's fragment, indented into `account.html`'s list, a blank
    /// line between two.
    package static func sectionsHTML(_ sections: [AccountSection]) throws -> String {
        try sections.map { section in
            guard let folder = section.folder else {
                throw LoadError(code: .missing, message: "account section \(section.name) has no folder in its bundle")
            }
            let fragment = try String(
                contentsOf: folder.appendingPathComponent(section.template), encoding: .utf8)
            return fragment.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
                $0.isEmpty ? "\n" : "  \($0)\n"
            }.joined()
        }.joined(separator: "\n")
    }

    /// The sign-in page's second step, as two template fragments for `signin.html`: `choices`, a radio button per
    /// factor in the given order, each carrying the code field's words and keyboard for while it is chosen
    /// (`data-code-label`, `data-code-hint`, `data-inputmode`, `data-autocomplete`); and `senders`, a hidden button
    /// per factor whose code is sent on request, carrying its route and what to say once it is sent. Words are
    /// `{{t:key}}`, filled per language; the factor's name and the route are escaped.
    package static func secondStepHTML(_ choices: [SecondStepChoice]) -> (choices: String, senders: String) {
        let rows = choices.map { choice in
            let name = escapeHTML(choice.factor.rawValue)
            return """
                <div class="choice" id="factor-\(name)-choice" data-code-label="{{t:\(choice.codeLabelKey)}}"
                     data-code-hint="{{t:\(choice.codeHintKey)}}" data-inputmode="\(choice.input.inputMode)"
                     data-autocomplete="\(choice.input.autocomplete)" hidden>
                  <input type="radio" name="factor" id="factor-\(name)" value="\(name)">
                  <label for="factor-\(name)">{{t:\(choice.labelKey)}}</label>
                </div>
                """
        }
        let senders = choices.compactMap { choice -> String? in
            guard let sender = choice.sender else { return nil }
            let name = escapeHTML(choice.factor.rawValue)
            return """
                <button type="button" id="send-\(name)-button" class="secondary" data-factor="\(name)"
                        data-path="\(escapeHTML(sender.path))" data-sent="{{t:\(sender.sentKey)}}" hidden>\
                {{t:\(sender.buttonKey)}}</button>
                """
        }
        return (
            rows.joined(separator: "\n").split(separator: "\n").map { "        \($0)" }.joined(separator: "\n"),
            senders.joined(separator: "\n").split(separator: "\n").map { "      \($0)" }.joined(separator: "\n")
        )
    }

    /// Every section's script, as a static file by its name.
    package static func accountScripts(_ sections: [AccountSection]) throws -> [String: StaticFile] {
        var files: [String: StaticFile] = [:]
        for section in sections {
            guard let folder = section.folder else {
                throw LoadError(code: .missing, message: "account section \(section.name) has no folder in its bundle")
            }
            let own = try loadStaticFiles(in: folder)
            for script in section.scripts {
                guard let file = own[script] else {
                    throw LoadError(
                        code: .missing, message: "account section \(section.name)'s script \(script) is missing")
                }
                files[script] = file
            }
        }
        return files
    }

    /// Every name two sections, or a section and this target's static files, declare: a section's script is served
    /// beside `Resources/Web/static`, so its name must be its own there.
    package static func accountClashes(_ sections: [AccountSection], staticFiles: some Sequence<String>) -> [String] {
        let ours = Set(staticFiles)
        let clashes = sections.flatMap { section in
            section.scripts.filter(ours.contains).map {
                "account section script \($0): \(section.owner), SesameWeb's Resources/Web/static"
            }
        }
        return AccountSection.duplicates(in: sections) + clashes
    }

    /// Every page in every language of the catalog, rendered with this server's configuration, by tag.
    /// `signUpEmail`: whether the sign-up page asks for an email address (`SignUpAddressRequest`); `emailRecovery`:
    /// whether the sign-in page links to `/recover`.
    /// `accountSections`: the account page's cards, in page order (`AccountSection.server`); `secondStepChoices`: the
    /// sign-in page's second step, a choice per factor (`SecondStepChoice.server`).
    package static func renderPages(
        _ configuration: ServerConfiguration, catalog: Catalog, signUpEmail: SignUpAddressRequest = .off,
        emailRecovery: Bool = false, accountSections: [AccountSection] = [], secondStepChoices: [SecondStepChoice] = []
    ) throws -> [String: [Page: ByteBuffer]] {
        let templates = try resourceDirectory("templates")
        let layout = try String(contentsOf: templates.appendingPathComponent("layout.html"), encoding: .utf8)
        var pages: [String: [Page: ByteBuffer]] = [:]
        for page in Page.allCases {
            var body = try String(
                contentsOf: templates.appendingPathComponent("\(page.rawValue).html"), encoding: .utf8)
            var prefixes = page.scriptPrefixes
            var scripts: [String] = []
            if page == .account {
                body = body.replacingOccurrences(of: "{{sections}}", with: try sectionsHTML(accountSections))
                prefixes += accountSections.flatMap(\.messagePrefixes)
                scripts = accountSections.flatMap(\.scripts)
            }
            if page == .signin {
                let secondStep = secondStepHTML(secondStepChoices)
                body = body.replacingOccurrences(of: "{{secondStepChoices}}", with: secondStep.choices)
                    .replacingOccurrences(of: "{{secondStepSenders}}", with: secondStep.senders)
            }
            let values = ["signUpEmail": signUpEmail.rawValue, "emailRecovery": emailRecovery ? "on" : "off"]
            for tag in catalog.tags {
                let html = try Self.page(
                    layout: layout, body: body, configuration: configuration, script: page.rawValue,
                    titleKey: page.titleKey, values: values, words: PageWords(catalog: catalog, tag: tag),
                    scriptPrefixes: prefixes, scripts: scripts)
                pages[tag, default: [:]][page] = ByteBuffer(string: html)
            }
        }
        return pages
    }

    package static let contentTypes = [
        "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml",
        "png": "image/png", "ico": "image/x-icon",
    ]

    package static func loadStaticFiles() throws -> [String: StaticFile] {
        try loadStaticFiles(in: try resourceDirectory("static"))
    }

    /// The files of a folder whose type is one of `contentTypes`, each with an ETag of its bytes.
    package static func loadStaticFiles(in directory: URL) throws -> [String: StaticFile] {
        var files: [String: StaticFile] = [:]
        for url in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
            let name = url.lastPathComponent
            guard let type = contentTypes[url.pathExtension.lowercased()] else { continue }
            let data = try Data(contentsOf: url)
            let digest = Hex.encode(SHA256.hash(data: data).prefix(12))
            files[name] = StaticFile(bytes: ByteBuffer(bytes: data), contentType: type, etag: "\"\(digest)\"")
        }
        return files
    }

    package func register(on router: Router<SesameRequestContext>) {
        // The resources ship inside the binary's bundle; if they are missing the API still runs and the pages
        // answer 503 (logged once here).
        var pages: [String: [Page: ByteBuffer]] = [:]
        var files: [String: StaticFile] = [:]
        let languages = sesame.languages
        do {
            pages = try Self.renderPages(
                sesame.configuration, catalog: languages.catalog, signUpEmail: sesame.signUpAddresses.request,
                emailRecovery: emailRecovery, accountSections: accountSections,
                secondStepChoices: secondStepChoices)
            files = try Self.loadStaticFiles()
            // Two cards or scripts of one name are a programming error: the process stops here, at start.
            let clashes = Self.accountClashes(accountSections, staticFiles: files.keys)
            precondition(clashes.isEmpty, "declared twice: \(clashes.joined(separator: "; "))")
            files.merge(try Self.accountScripts(accountSections)) { own, _ in own }
        } catch {
            sesame.logger.error("web pages not loaded", metadata: ["reason": .string(String(describing: error))])
        }
        let loadedPages = pages
        let loadedFiles = files

        // The page in the request's language (`PageLanguages`: saved choice, `ui_locales`, `Accept-Language`,
        // the default).
        @Sendable func page(_ page: Page, _ request: Request, _ context: SesameRequestContext) async -> Response {
            let tag = await languages.tag(for: request, userID: context.authentication?.user.id)
            guard let html = loadedPages[tag]?[page] else {
                return Response(
                    status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "Pages unavailable")))
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/html; charset=utf-8",
                    .contentLanguage: tag,
                    .vary: "Accept-Language, Cookie",
                    .contentSecurityPolicy: Self.contentSecurityPolicy,
                    .init("Cross-Origin-Opener-Policy")!: "same-origin",
                    .init("Permissions-Policy")!:
                        "publickey-credentials-get=(self), publickey-credentials-create=(self)",
                ],
                body: .init(byteBuffer: html)
            )
        }

        @Sendable func redirect(_ location: String) -> Response {
            Response(status: .seeOther, headers: [.location: location])
        }

        router.get("/") { _, context in
            redirect(context.authentication == nil ? "/signin" : "/account")
        }
        // With `return` (an application's authorization request sent the person to sign in again), the page is
        // shown even to a signed-in person.
        router.get("/signin") { request, context in
            context.authentication == nil || request.uri.queryParameters["return"] != nil
                ? await page(.signin, request, context) : redirect("/account")
        }
        router.get("/signup") { request, context in
            context.authentication == nil ? await page(.signup, request, context) : redirect("/account")
        }
        router.get("/account") { request, context in
            context.authentication == nil ? redirect("/signin") : await page(.account, request, context)
        }
        // Where a verification link from a mail lands, signed in or not: a GET only shows a button; the token (in
        // the fragment) is posted to `/api/email/verify` when the person confirms.
        router.get("/account/email/verify") { request, context in await page(.emailVerify, request, context) }
        // Where a recovery link an administrator made lands: the token (in the fragment) is posted to
        // `/api/recovery/link` when the person confirms; then a passkey is added in the limited session it opens.
        router.get("/recover/link") { request, context in await page(.recoverLink, request, context) }
        // Recovery by email: asking for a code, typing it, then adding a passkey in the limited session it opens.
        if emailRecovery {
            router.get("/recover") { request, context in await page(.recover, request, context) }
        }
        router.get("/static/{name}") { request, context -> Response in
            let name = try context.parameters.require("name")
            guard let file = loadedFiles[name] else { throw APIError.notFound }
            var headers: HTTPFields = [.contentType: file.contentType, .eTag: file.etag, .cacheControl: "no-cache"]
            if file.contentType.hasPrefix("image/svg") { headers[.contentSecurityPolicy] = "default-src 'none'" }
            if request.headers[.ifNoneMatch] == file.etag {
                return Response(status: .notModified, headers: headers)
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
        }
    }
}

/// The codes of `WebRoutes.LoadError`.
package struct WebResourceErrorCode: ServerErrorCode {
    package let name: String
    private init(_ name: String) { self.name = name }
    package var description: String { name }

    /// A folder of `Resources/Web` is not in the bundle.
    package static let missing = WebResourceErrorCode("missing")
    /// A template is malformed or names a value it is not given.
    package static let badTemplate = WebResourceErrorCode("badTemplate")
}
