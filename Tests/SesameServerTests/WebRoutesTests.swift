import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import SesameCore
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
        let languages = try WebRoutes.renderPages(configuration, catalog: catalog)
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
