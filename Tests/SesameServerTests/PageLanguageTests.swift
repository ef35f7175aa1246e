import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import SesameCore
@testable import SesameIdentityProvider
@testable import SesameWeb

/// The pages in the person's language: `Accept-Language`, an application's `ui_locales` (carried to the sign-in
/// page and the consent page), `lang`, `dir` and `Content-Language`, and every page in every catalog language.
@Suite struct PageLanguageTests {
    static let catalog = (try? PageLanguages.bundled.get()) ?? .empty

    /// `key` in `tag` as a page shows it: filled, then escaped.
    static func shown(_ key: String, _ tag: String, _ values: [String: String] = [:]) throws -> String {
        WebRoutes.escapeHTML(try catalog.text(key, in: tag, values))
    }

    @Test func theStaticPagesFollowAcceptLanguageAndUILocales() async throws {
        let server = TestServer(.sqlite)
        let site = ["site": server.configuration.rpName]
        try await server.app().test(.router) { client in
            let korean = try await client.json("/signin", headers: [.acceptLanguage: "ko-KR,ko;q=0.9,en;q=0.5"])
            #expect(korean.status == .ok)
            #expect(korean.headers[.contentLanguage] == "ko")
            #expect(korean.text.contains(#"<html lang="ko" dir="ltr">"#))
            #expect(korean.text.contains(try Self.shown("web.signin.heading", "ko", site)))
            #expect(!korean.text.contains(try Self.shown("web.signin.heading", "en", site)))
            // The page's scripts get the same language's sentences, the API's error sentences among them.
            #expect(korean.text.contains(try Self.catalog.text("error.invalid_code", in: "ko")))

            // ui_locales comes before Accept-Language; Arabic pages run right to left.
            let arabic = try await client.json("/signup?ui_locales=ar", headers: [.acceptLanguage: "ko"])
            #expect(arabic.headers[.contentLanguage] == "ar")
            #expect(arabic.text.contains(#"<html lang="ar" dir="rtl">"#))
            #expect(arabic.text.contains(try Self.shown("web.signup.heading", "ar", site)))
            #expect(arabic.text.contains("<title>\(try Self.shown("web.signup.title", "ar")) · "))

            // A language the catalog does not ship: the default.
            let other = try await client.json("/signin", headers: [.acceptLanguage: "tlh"])
            #expect(other.headers[.contentLanguage] == "en")
            #expect(other.text.contains(try Self.shown("web.signin.heading", "en", site)))
        }
    }

    /// Every page (the static ones and those the server fills per request) renders in every language of the
    /// catalog with its `lang`, `dir` and translated title, and no template value or key is left unfilled.
    @Test func everyPageRendersInEveryLanguage() throws {
        let configuration = ServerConfiguration()
        let rendered = try WebRoutes.renderPages(configuration, catalog: Self.catalog)
        let dynamic: [(String, String)] = [
            ("consent", "web.consent.title"), ("app-error", "web.consent.error-title"), ("logout", "web.logout.title"),
            ("signed-out", "web.signed-out.title"), ("device", "web.device.title"),
            ("device-approve", "web.device-approve.title"), ("device-done", "web.device.title"),
            ("forward-denied", "web.forward-denied.title"),
        ]
        let values = [
            "clientName": "Wiki", "username": "ada", "scopeText": "…", "request": "q", "csrf": "c", "message": "m",
            "heading": "h", "userCode": "BCDF-GHJK", "host": "wiki.example",
        ]
        #expect(Self.catalog.tags.count >= 6)
        for tag in Self.catalog.tags {
            let direction = Self.catalog.languages[tag]?.direction.rawValue ?? "ltr"
            let pages = try #require(rendered[tag])
            var htmls = pages.map { (page, buffer) in (page.rawValue, page.titleKey, String(buffer: buffer)) }
            for (name, title) in dynamic {
                let page = try WebRoutes.DynamicPage.load(name, title: title)
                let words = PageWords(catalog: Self.catalog, tag: tag)
                htmls.append((name, title, try page.render(configuration, script: "consent", values, words: words)))
            }
            for (name, title, html) in htmls {
                #expect(html.contains(#"<html lang="\#(tag)" dir="\#(direction)">"#), "\(name) in \(tag)")
                #expect(html.contains("<title>\(try Self.shown(title, tag)) · "), "\(name) in \(tag)")
                #expect(!html.contains("{{"), "\(name) in \(tag)")
                // A shipped language has its own title for every page (English is not shown in its place); the
                // account page's words come with the account page's own change.
                if tag != "en", tag != "en-XA", name != "account" {
                    #expect(Self.catalog.translates(title, in: tag), "\(title) in \(tag)")
                }
            }
        }
        #expect(Self.catalog.languages["ar"]?.direction == .rightToLeft)
    }

    @Test func theConsentPageFollowsTheApplicationsUILocales() async throws {
        let server = TestServer(.sqlite)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await IdentityProviderTests.register(server, firstParty: false, alg: .rs256)
        let heading = ["clientName": "Example App"]
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let korean = try await client.execute(
                uri: IdentityProviderTests.authorizePath(registered.client.id, extra: [("ui_locales", "ko en")]),
                method: .get, headers: [.cookie: session.cookie, .acceptLanguage: "de"], body: nil)
            #expect(korean.status == .ok)
            #expect(korean.headers[.contentLanguage] == "ko")
            #expect(korean.text.contains(#"<html lang="ko" dir="ltr">"#))
            #expect(korean.text.contains(try Self.shown("web.consent.heading", "ko", heading)))
            #expect(korean.text.contains(try Self.shown("web.consent.scope-profile", "ko")))

            // Without ui_locales the page follows Accept-Language.
            let german = try await client.execute(
                uri: IdentityProviderTests.authorizePath(registered.client.id), method: .get,
                headers: [.cookie: session.cookie, .acceptLanguage: "de-CH, en;q=0.5"], body: nil)
            #expect(german.headers[.contentLanguage] == "de")
            #expect(german.text.contains(try Self.shown("web.consent.heading", "de", heading)))

            // The error page of a link naming an unknown application is in the link's language too.
            let unknown = try await client.execute(
                uri: IdentityProviderTests.authorizePath("nobody", extra: [("ui_locales", "ar")]), method: .get,
                headers: [.cookie: session.cookie], body: nil)
            #expect(unknown.status == .badRequest)
            #expect(unknown.text.contains(#"<html lang="ar" dir="rtl">"#))
            #expect(unknown.text.contains(try Self.shown("web.app-error.unknown-client", "ar")))
        }
    }

    @Test func theSignInPageAnApplicationSendsTheSignedOutToKeepsItsUILocales() async throws {
        let server = TestServer(.sqlite)
        let registered = try await IdentityProviderTests.register(server, firstParty: false, alg: .rs256)
        try await server.app().test(.router) { client in
            let redirect = try await client.execute(
                uri: IdentityProviderTests.authorizePath(registered.client.id, extra: [("ui_locales", "ar de")]),
                method: .get, headers: [:], body: nil)
            #expect(redirect.status == .seeOther)
            let location = try #require(redirect.headers[.location])
            #expect(location.hasPrefix("/signin?"))
            let query = try #require(URLComponents(string: location)?.queryItems)
            #expect(query.first { $0.name == "ui_locales" }?.value == "ar de")
            // The way back keeps it too, so the consent page after signing in follows it.
            let back = try #require(query.first { $0.name == "return" }?.value)
            #expect(back.contains("ui_locales=ar"))

            let signin = try await client.json(location, headers: [.acceptLanguage: "ko"])
            #expect(signin.status == .ok)
            #expect(signin.headers[.contentLanguage] == "ar")
            #expect(signin.text.contains(#"<html lang="ar" dir="rtl">"#))
        }
    }

    @Test func theSignOutPagesFollowAcceptLanguage() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let page = try await client.json("/oauth/logout", headers: [.acceptLanguage: "ja"])
            #expect(page.status == .ok)
            #expect(page.headers[.contentLanguage] == "ja")
            #expect(page.text.contains(try Self.shown("web.signed-out.not-signed-in", "ja")))
            #expect(page.text.contains(try Self.shown("web.signed-out.sign-in-again", "ja")))
        }
    }
}
