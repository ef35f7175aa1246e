import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import SesameCore
import SesameSecondFactors
import SesameServer
@testable import SesameWeb

/// The server's own pages: templates, headers, static files and where signed-in and signed-out visitors land.
/// (The pages' behaviour in a browser is checked by `Tests/Interop/test_browser_flows.py`.)
@Suite struct WebRoutesTests {
    @Test func templateValuesAreEscaped() throws {
        let html = try WebRoutes.fill(
            #"<p title="{{a}}">{{a}}</p>{{content}}"#, ["a": #"<script>"x"&'y'</script>"#, "content": "<b>raw</b>"])
        #expect(
            html
                == #"<p title="&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;">&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;</p><b>raw</b>"#
        )
    }

    @Test(arguments: ["{{missing}}", "{{unclosed"])
    func templateMistakesAreErrors(_ template: String) {
        #expect(throws: WebRoutes.LoadError.self) { try WebRoutes.fill(template, ["a": "b"]) }
    }

    @Test func pagesRenderWithTheConfiguredNamesEscaped() throws {
        var configuration = ServerConfiguration()
        configuration.rpName = #"Bob's <"Bank">"#
        let catalog = try PageLanguages.bundled.get()
        let languages = try WebRoutes.renderPages(
            configuration, catalog: catalog, accountSections: AccountSection.server)
        #expect(Set(languages.keys) == Set(catalog.tags))
        let pages = try #require(languages["en"])
        #expect(Set(pages.keys) == Set(WebRoutes.Page.allCases))
        for (page, buffer) in pages {
            let html = String(buffer: buffer)
            #expect(html.contains("Bob&#39;s &lt;&quot;Bank&quot;&gt;"))
            #expect(!html.contains(#"<"Bank">"#))
            #expect(!html.contains("{{"))
            #expect(html.contains(#"<script type="module" src="/static/\#(page.rawValue).js"></script>"#))
            #expect(html.contains(#"<meta name="sesame-rp-id" content="localhost">"#))
        }
        // The site's name goes into the catalog's sentences escaped too.
        #expect(
            String(buffer: pages[.signin] ?? ByteBuffer()).contains("Sign in to Bob&#39;s &lt;&quot;Bank&quot;&gt;"))
        let signin = String(buffer: pages[.signin] ?? ByteBuffer())
        #expect(signin.contains(#"autocomplete="username webauthn""#))
        #expect(signin.contains(#"autocomplete="one-time-code""#))
    }

    @Test func signedOutVisitorsGetTheSignInPagesWithAStrictPolicy() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            for path in ["/signin", "/signup"] {
                let response = try await client.json(path)
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let policy = response.headers[.contentSecurityPolicy] ?? ""
                #expect(policy.contains("default-src 'self'") && policy.contains("script-src 'self'"))
                #expect(
                    policy.contains("frame-ancestors 'none'") && policy.contains("require-trusted-types-for 'script'"))
                #expect(!policy.contains("unsafe"))
                #expect(response.headers[.cacheControl] == "no-store")
            }
            for (path, location) in [("/", "/signin"), ("/account", "/signin")] {
                let response = try await client.json(path)
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == location)
            }
        }
    }

    @Test func signedInVisitorsGoToTheirAccount() async throws {
        let server = TestServer(.sqlite)
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let account = try await client.json("/account", headers: [.cookie: session.cookie])
            #expect(account.status == .ok)
            #expect(account.text.contains(#"id="passkey-list""#))
            for path in ["/", "/signin", "/signup"] {
                let response = try await client.json(path, headers: [.cookie: session.cookie])
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/account")
            }
        }
    }

    @Test func staticFilesAreServedByExactNameOnly() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let script = try await client.json("/static/signin.js")
            #expect(script.status == .ok)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            let etag = try #require(script.headers[.eTag])
            let again = try await client.json("/static/signin.js", headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)

            let style = try await client.json("/static/sesame.css")
            #expect(style.headers[.contentType] == "text/css; charset=utf-8")

            for path in [
                "/static/..%2Fopenapi.yaml", "/static/nothing.js", "/static/../openapi.yaml", "/static/",
                "/static/SIGNIN.JS",
            ] {
                let response = try await client.json(path)
                #expect(response.status == .notFound, "\(path)")
            }
        }
    }

    /// The account page is the features' cards in a fixed order, each card's script loaded after the shared one in
    /// that order, and no word left untranslated in any language.
    @Test func theAccountPageIsTheFeaturesCardsInOrder() throws {
        let catalog = try PageLanguages.bundled.get()
        let sections = AccountSection.server
        #expect(
            sections.map(\.name) == [
                "header", "language", "email", "passkeys", "totp", "recovery", "sms", "password", "groups", "apps",
                "your-data", "sessions",
            ])
        #expect(
            sections.map(\.owner) == [
                "SesameAccount", "SesameAccount", "SesameEmail", "SesamePasskeys", "SesameSecondFactors",
                "SesameSecondFactors", "SesameSecondFactors", "SesamePasswords", "SesameGroups",
                "SesameIdentityProvider", "SesameAccount", "SesameAccount",
            ])
        let pages = try WebRoutes.renderPages(ServerConfiguration(), catalog: catalog, accountSections: sections)
        for tag in catalog.tags {
            let html = String(buffer: try #require(pages[tag]?[.account]))
            let cards = Self.matches(
                #"<section class="card"(?: id="([a-z-]+)")? aria-labelledby="([a-z-]+)""#, in: html)
            #expect(
                cards == [
                    "account-heading", "language", "email", "passkeys", "totp", "recovery", "sms", "password",
                    "groups", "apps", "your-data", "sessions",
                ], "\(tag)")
            let scripts = Self.matches(#"<script type="module" src="/static/([a-z-]+\.js)"></script>"#, in: html)
            #expect(scripts == ["account.js"] + sections.flatMap(\.scripts), "\(tag)")
            // Every word of the cards is filled in: no placeholder and no key in the page's body.
            let body = try #require(html.components(separatedBy: "<main").last)
            #expect(!body.contains("{{") && !body.contains("web.account."), "\(tag)")
        }
    }

    /// The first capture of each match, or the second where the first did not take part.
    static func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            let first = Range(match.range(at: 1), in: text)
            let range = first ?? (match.numberOfRanges > 2 ? Range(match.range(at: 2), in: text) : nil)
            return range.map { String(text[$0]) }
        }
    }

    /// Every card's script is served under /static with the page's own files.
    @Test func theCardsScriptsAreServed() async throws {
        let server = TestServer(.sqlite)
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let page = try await client.json("/account", headers: [.cookie: session.cookie])
            #expect(page.headers[.contentSecurityPolicy] == WebRoutes.contentSecurityPolicy)
            for script in ["account.js"] + AccountSection.server.flatMap(\.scripts) {
                #expect(page.text.contains(#"<script type="module" src="/static/\#(script)"></script>"#))
                let response = try await client.json("/static/\(script)")
                #expect(response.status == .ok, "\(script)")
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(response.text.contains(#"from "./account.js""#) == (script != "account.js"), "\(script)")
            }
        }
    }

    /// Two cards of one name, position or script, or a card's script named like one of the pages' own files, are
    /// named with their owners; the composition stops on any of them.
    @Test func cardsOfOneNameAreNamedWithTheirOwners() {
        func card(_ name: String, _ owner: String, _ position: Int, _ scripts: [String]) -> AccountSection {
            AccountSection(
                name: name, owner: owner, position: position, folder: nil, scripts: scripts, messagePrefixes: [])
        }
        let one = card("totp", "SesameSecondFactors", 500, ["account-totp.js"])
        #expect(
            AccountSection.duplicates(in: [one, card("sms", "SesameSecondFactors", 700, ["account-sms.js"])]).isEmpty)
        #expect(
            AccountSection.duplicates(in: [one, card("totp", "SesameOther", 510, ["other.js"])])
                == ["account section totp: SesameSecondFactors, SesameOther"])
        #expect(
            AccountSection.duplicates(in: [one, card("other", "SesameOther", 500, ["other.js"])])
                == ["account section position 500: SesameSecondFactors, SesameOther"])
        #expect(
            AccountSection.duplicates(in: [one, card("other", "SesameOther", 510, ["account-totp.js"])])
                == ["account section script account-totp.js: SesameSecondFactors, SesameOther"])
        #expect(
            WebRoutes.accountClashes([card("other", "SesameOther", 510, ["account.js"])], staticFiles: ["account.js"])
                == ["account section script account.js: SesameOther, SesameWeb's Resources/Web/static"])
        #expect(AccountSection.joined([card("b", "B", 2, []), card("a", "A", 1, [])]).map(\.name) == ["a", "b"])
    }

    /// The sign-in page's second step is the features' choices: one per declared factor, in the vocabulary's order,
    /// each with its words filled in every language, and a send button only for the factor whose code is sent on
    /// request, naming its route. `signin.js` names no factor, so a new factor needs no change to this target.
    @Test func theSecondStepIsTheFeaturesChoicesInOrder() throws {
        let catalog = try PageLanguages.bundled.get()
        let choices = SecondStepChoice.server
        #expect(choices.map(\.factor) == Vocabulary.server.factors)
        #expect(choices.map(\.factor.rawValue) == ["totp", "sms", "recovery"])
        let pages = try WebRoutes.renderPages(ServerConfiguration(), catalog: catalog, secondStepChoices: choices)
        for tag in catalog.tags {
            let html = String(buffer: try #require(pages[tag]?[.signin]))
            #expect(
                Self.matches(#"<input type="radio" name="factor" id="factor-([a-z0-9]+)""#, in: html)
                    == ["totp", "sms", "recovery"], "\(tag)")
            for choice in choices {
                let name = choice.factor.rawValue
                func shown(_ key: String) throws -> String { WebRoutes.escapeHTML(try catalog.text(key, in: tag)) }
                #expect(
                    html.contains(#"<label for="factor-\#(name)">\#(try shown(choice.labelKey))</label>"#), "\(tag)")
                #expect(html.contains(#"data-code-label="\#(try shown(choice.codeLabelKey))""#), "\(name) in \(tag)")
                #expect(html.contains(#"data-code-hint="\#(try shown(choice.codeHintKey))""#), "\(name) in \(tag)")
            }
            #expect(
                Self.matches(#"<button type="button" id="send-([a-z0-9]+)-button""#, in: html) == ["sms"], "\(tag)")
            #expect(html.contains(#"data-path="/api/sessions/second-factor/sms""#))
            // Each choice's keyboard for the code field: digits with one-time-code AutoFill, or text (recovery codes).
            let keyboards = Self.matches(
                #"<div class="choice" id="factor-[a-z0-9]+-choice"[^>]*data-inputmode="([a-z]+)"\s+data-autocomplete="[a-z-]+""#,
                in: html)
            #expect(keyboards == ["numeric", "numeric", "text"], "\(tag)")
            #expect(
                html.contains("data-autocomplete=\"off\" hidden>")
                    && html.contains("data-autocomplete=\"one-time-code\""))
            let main = try #require(
                html.components(separatedBy: "<main").last?.components(separatedBy: "</main>").first)
            #expect(!main.contains("{{") && !main.contains("web.signin."), "\(tag)")
        }
        // The page's script names no factor: the choices and their words come from the page.
        let script = try #require(try WebRoutes.loadStaticFiles()["signin.js"])
        let text = String(buffer: script.bytes)
        for factor in Vocabulary.server.factors {
            #expect(!text.contains("\"\(factor.rawValue)\""), "signin.js names \(factor.rawValue)")
        }
    }

    /// A declared factor with no choice or two, and a choice for a factor no feature declares, are named with
    /// their owners; the composition stops on any of them.
    @Test func secondStepChoicesMustMatchTheDeclaredFactors() {
        let factors = Vocabulary.server.factors
        #expect(SecondStepChoice.problems(in: SecondStepChoice.secondFactors, factors: factors).isEmpty)
        let email = Factor("email", makesASecondStep: true, amr: "otp")
        let emailChoice = SecondStepChoice(
            factor: email, owner: "SesameEmail", labelKey: "k", codeLabelKey: "k", codeHintKey: "k", input: .oneTimeCode
        )
        #expect(
            SecondStepChoice.problems(in: SecondStepChoice.secondFactors, factors: factors + [email])
                == ["factor email: no second-step choice"])
        #expect(
            SecondStepChoice.problems(in: SecondStepChoice.secondFactors + [emailChoice], factors: factors)
                == ["second-step choice email: no feature declares the factor"])
        let again = SecondStepChoice(
            factor: .totp, owner: "SesameOther", labelKey: "k", codeLabelKey: "k", codeHintKey: "k", input: .text)
        #expect(
            SecondStepChoice.problems(in: SecondStepChoice.secondFactors + [again], factors: factors)
                == ["second-step choice totp: SesameSecondFactors, SesameOther"])
        let odd = Factor("a\"b", makesASecondStep: true, amr: "otp")
        let oddChoice = SecondStepChoice(
            factor: odd, owner: "SesameOther", labelKey: "k", codeLabelKey: "k", codeHintKey: "k", input: .text)
        #expect(
            SecondStepChoice.problems(in: SecondStepChoice.secondFactors + [oddChoice], factors: factors + [odd])
                == ["second-step choice a\"b: a factor name of a-z and 0-9 only"])
        #expect(
            SecondStepChoice.joined(Array(SecondStepChoice.secondFactors.reversed()), factors: factors).map(\.factor)
                == factors)
    }

    @Test func staticFilesHaveKnownTypes() throws {
        let files = try WebRoutes.loadStaticFiles()
        #expect(
            files.keys.contains("signin.js") && files.keys.contains("account.js") && files.keys.contains("signup.js"))
        for (name, file) in files {
            let ext = String(name.split(separator: ".").last ?? "")
            #expect(WebRoutes.contentTypes[ext] == file.contentType)
        }
    }
}
