import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

import SesameConsole
import SesameForwardAuth
import SesameLanguage
import SesameWeb
@testable import SesameCore
@testable import SesameServer

/// The console in the request's language: `lang` and `dir` on the page, the navigation, headings and the messages
/// its scripts read from the catalog, in Korean and (right to left) Arabic; the gate's refusal too.
@Suite struct ConsoleLanguageTests {
    /// The forward-auth test's every reason is a sentence of the catalog (`console.forward-auth.why-<code>`, and
    /// `…-passkey` for those that tell a passkey apart) that the console's script names.
    /// The audit log names each kind from the catalog: every kind the server declares has its
    /// `console.audit-kind.<kind>`, and every such key is a declared kind.
    @Test func everyAuditKindHasItsNameInTheCatalog() throws {
        let catalog = try Catalog.load(directory: CatalogCoverageTests.catalogFolder)
        let declared = Set(Vocabulary.server.auditKinds.map { "console.audit-kind.\($0.rawValue)" })
        let named = Set(catalog.keys.filter { $0.hasPrefix("console.audit-kind.") })
        #expect(declared.subtracting(named).isEmpty, "kinds without a name: \(declared.subtracting(named).sorted())")
        #expect(named.subtracting(declared).isEmpty, "names of no kind: \(named.subtracting(declared).sorted())")
        #expect(try catalog.text("console.audit-kind.sign_in.passkey", in: "de") == "Anmeldung mit Passkey")
    }

    @Test func everyForwardAuthReasonIsInTheCatalog() throws {
        let catalog = try Catalog.load(directory: CatalogCoverageTests.catalogFolder)
        let script = try String(
            contentsOf: CatalogCoverageTests.root.appendingPathComponent(
                "Sources/SesameConsole/Resources/Console/static/console-forward-auth.js"), encoding: .utf8)
        let withPasskey: Set<ForwardAuthAdminRoutes.TestReason> = [.signIn, .inGroups, .unruled, .passes]
        for reason in ForwardAuthAdminRoutes.TestReason.allCases {
            var keys = ["console.forward-auth.why-\(reason.rawValue)"]
            if withPasskey.contains(reason) { keys.append(keys[0] + "-passkey") }
            for key in keys {
                #expect(catalog.contains(key), "\(key) is not in the catalog")
                #expect(script.contains("\"\(key)\""), "console-forward-auth.js does not say \(key)")
            }
            #expect(script.contains("case \"\(reason.rawValue)\":"), "the script has no case for \(reason.rawValue)")
        }
    }

    /// The text of the first `<h1>` in a page.
    static func heading(_ html: String) -> String? {
        guard let open = html.range(of: "<h1>"),
            let close = html.range(of: "</h1>", range: open.upperBound..<html.endIndex)
        else { return nil }
        return String(html[open.upperBound..<close.lowerBound])
    }

    @Test(arguments: TestDatabase.all)
    func aPageComesInTheAskedLanguageWithLangAndDir(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            try await ConsoleGateTests.makeAdmin(server, "ada")
            let cases: [(language: String, lang: String, dir: String, heading: String, navigation: String)] = [
                ("ko-KR,ko;q=0.9,en;q=0.5", "ko", "ltr", "개요", "사용자"),
                ("ar", "ar", "rtl", "نظرة عامة", "الأشخاص"),
                ("en-US", "en", "ltr", "Overview", "People"),
            ]
            for asked in cases {
                let page = try await client.execute(
                    uri: "/console/overview", method: .get,
                    headers: [.cookie: ada.cookie, .acceptLanguage: asked.language])
                #expect(page.status == .ok)
                #expect(page.headers[.contentLanguage] == asked.lang)
                let html = String(buffer: page.body)
                #expect(html.contains("<html lang=\"\(asked.lang)\" dir=\"\(asked.dir)\">"), "\(asked.lang)")
                #expect(Self.heading(html) == asked.heading, "\(asked.lang): \(Self.heading(html) ?? "no h1")")
                #expect(html.contains(">\(asked.navigation)</a>"), "\(asked.lang): the navigation")
                // The scripts' messages, in the same language, where i18n.js reads them.
                #expect(
                    html.contains(
                        "<script type=\"application/json\" id=\"sesame-messages\">{\"lang\":\"\(asked.lang)\""))
                #expect(html.contains("\"console.overview.refresh\":"))
                #expect(!html.contains("{{"), "\(asked.lang): a template marker left unfilled")
            }
            // `ui_locales` comes before Accept-Language.
            let japanese = try await client.execute(
                uri: "/console/groups?ui_locales=ja", method: .get,
                headers: [.cookie: ada.cookie, .acceptLanguage: "ko"])
            #expect(Self.heading(String(buffer: japanese.body)) == "グループ")
        }
    }

    @Test(arguments: TestDatabase.all)
    func theGatesRefusalIsInTheAskedLanguage(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            let (bob, _) = try await signUpWithPasskey(client, "bob")
            let korean = try await client.execute(
                uri: "/console/overview", method: .get, headers: [.cookie: bob.cookie, .acceptLanguage: "ko"])
            #expect(korean.status == .forbidden)
            let html = String(buffer: korean.body)
            #expect(html.contains("<html lang=\"ko\" dir=\"ltr\">"))
            #expect(Self.heading(html) == "이 계정으로는 사용할 수 없습니다")
            let arabic = try await client.execute(
                uri: "/console/overview", method: .get, headers: [.cookie: bob.cookie, .acceptLanguage: "ar"])
            #expect(String(buffer: arabic.body).contains("<html lang=\"ar\" dir=\"rtl\">"))
            #expect(Self.heading(String(buffer: arabic.body)) == "غير متاح لهذا الحساب")
        }
    }

    /// Every template, the layout and the gate fill in every language of the catalog: no key is missing.
    @Test func everyTemplateFillsInEveryLanguage() throws {
        let catalog = try PageLanguages.bundled.get()
        let resources = try ConsoleRoutes.Resources.load()
        let values = [
            "title": "T", "rpName": "Site", "site": "Site", "rpID": "example.org", "script": "console-overview",
            "csrf": "c", "consoleCSRF": "k", "lang": "en", "dir": "ltr", "item": "", "reason": "forbidden",
            "refusal": "R", "content": "", "messages": "{}",
        ]
        for tag in catalog.tags {
            let words = PageWords(catalog: catalog, tag: tag)
            for (name, body) in resources.bodies.sorted(by: { $0.key < $1.key }) + [("layout", resources.layout)] {
                let filled = try WebRoutes.fill(body, values, words: words)
                #expect(!filled.contains("{{"), "\(name) in \(tag)")
            }
            for page in ConsoleRoutes.pages {
                #expect((try? catalog.text(page.titleKey, in: tag)) != nil, "\(page.titleKey) in \(tag)")
            }
        }
    }
}
