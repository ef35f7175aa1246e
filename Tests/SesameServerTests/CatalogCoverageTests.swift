import Foundation
import SesameConsole
import SesameCore
import SesameLanguage
import SesameServer
import SesameWeb
import Spawn
import Testing

/// The catalog against everything that reads it (issue 32's checks): every key used in templates, page and console
/// scripts, Swift and the browser extension exists; every key is used; every shipped language has every key,
/// translated, with the English placeholders and its own number of plural forms; and no sentence a person reads is
/// left outside the catalog in a template or a script.
@Suite struct CatalogCoverageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let catalogFolder = root.appendingPathComponent("Sources/SesameLanguage/Resources/Catalog")

    static func files(under folder: String, extensions: Set<String>) -> [URL] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter {
            extensions.contains($0.pathExtension) && !$0.path.contains("/.build")
        }.sorted { $0.path < $1.path }
    }

    static func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    static func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// The pages' templates, and the account page's cards, which each feature keeps in its own target.
    static let templates = files(under: "Sources", extensions: ["html"]).filter {
        $0.path.contains("/templates/") || $0.path.contains("/Resources/AccountPage/")
    }
    static let scripts = files(under: "Sources", extensions: ["js"])
    static let extensionFiles = files(under: "Extensions/browser", extensions: ["js", "html", "json"]).filter {
        !$0.path.contains("/_locales/")
    }
    static let swiftFiles = files(under: "Sources", extensions: ["swift"]).filter {
        !$0.path.contains("/SesameLanguage/")
    }

    /// `area.page.name`: lower case, digits, `-`, and `_` (the API's error codes are `error.<code>`, `too_many_attempts`).
    /// A key's shape: an area and at least one more part (`error.<code>` has just one); a setting's help is named by
    /// the setting's own camelCase key (`console.setting-help.rpID`).
    static let keyShape = #"(?:web|console|mail|error|extension)(?:\.[a-z0-9_-]+)*\.[A-Za-z0-9_-]+"#
    /// What the scan of Swift sources takes for a key: an area and at least two more parts.
    static let keyPattern = #"((?:web|console|mail|error|extension)\.[a-z0-9_-]+(?:\.[a-z0-9_-]+)+)"#

    /// Every key something reads, with where.
    static func uses(_ catalog: Catalog) -> [String: String] {
        var used: [String: String] = [:]
        for file in templates {
            for key in matches(#"\{\{t:([^}]+)\}\}"#, in: text(file)) { used[key] = file.lastPathComponent }
        }
        for file in scripts {
            // `t("key")`, and a key written whole anywhere else (`t(cond ? "a.b.c" : "a.b.d")`).
            for key in matches(#"\btn?\(\s*["']([^"']+)["']"#, in: text(file))
                + matches("[\"']" + keyPattern + "[\"']", in: text(file))
            {
                used[key] = file.lastPathComponent
            }
        }
        for file in swiftFiles {
            for key in matches("\"" + keyPattern + "\"", in: text(file)) { used[key] = file.lastPathComponent }
        }
        let names = Dictionary(
            catalog.keys.filter { $0.hasPrefix("extension.") }.map { (ExtensionLocales.messageName($0), $0) }
        ) { first, _ in first }
        for file in extensionFiles {
            let body = text(file)
            for name in matches(#"getMessage\(\s*["'](\w+)["']"#, in: body) + matches(#"__MSG_(\w+)__"#, in: body)
            where !name.hasPrefix("@@") {
                used[names[name] ?? "extension.<\(name)>"] = file.lastPathComponent
            }
            // The extension's scripts name keys whole (`t("extension.popup.title")`), popup.html by `data-i18n`,
            // `data-i18n-aria-label` and `data-i18n-placeholder`.
            for key in matches(#"\btn?\(\s*["']([^"']+)["']"#, in: body)
                + matches(#"data-i18n[a-z-]*="([^"]+)""#, in: body) + matches("[\"']" + keyPattern + "[\"']", in: body)
            {
                used[key] = file.lastPathComponent
            }
        }
        // Keys made by code from a list the compiler holds: page titles, and a sentence per API error code
        // (`VocabularyTests` ties those to `APIErrorCode`).
        for page in WebRoutes.Page.allCases { used[page.titleKey] = "WebRoutes.Page" }
        for page in ConsoleRoutes.pages { used[page.titleKey] = "ConsoleRoutes.pages" }
        for kind in Vocabulary.server.auditKinds { used["console.audit-kind.\(kind.rawValue)"] = "AuditKind" }
        for setting in Vocabulary.server.settings { used[Self.settingHelpKey(setting)] = "the settings table" }
        for key in catalog.keys where key.hasPrefix("error.") { used[key] = "APIErrorCode" }
        // A session method's words (account-sessions.js) and a factor's name (console-people.js), made from the
        // method and the factor: every one the server's features declare must have its words.
        for key in Self.methodAndFactorKeys { used[key] = "SessionMethod and Factor" }
        return used
    }

    /// The keys the account page's sessions card and the console's person page make from a session method or a
    /// factor (`web.account.sessions.method.<method, + as ->`, `console.people.factor-<factor>`), for every method and
    /// factor the server's features declare.
    static var methodAndFactorKeys: [String] {
        let factors = Vocabulary.server.factors
        return SessionMethod.all(factors: factors).map {
            "web.account.sessions.method.\($0.rawValue.replacingOccurrences(of: "+", with: "-"))"
        } + factors.map { "console.people.factor-\($0.rawValue)" }
    }

    /// The scripts make those keys by the rule `methodAndFactorKeys` writes, so a new factor needs only its words.
    @Test func theScriptsMakeTheMethodAndFactorKeysByOneRule() throws {
        let sessions = try #require(Self.scripts.first { $0.path.hasSuffix("AccountPage/account-sessions.js") })
        #expect(
            Self.text(sessions).contains(
                #"const key = `web.account.sessions.method.${String(method).replace("+", "-")}`;"#))
        let people = try #require(Self.scripts.first { $0.path.hasSuffix("console-people.js") })
        #expect(Self.text(people).contains("const key = `console.people.factor-${factor}`;"))
        let catalog = try Catalog.load(directory: Self.catalogFolder)
        for key in Self.methodAndFactorKeys { #expect(catalog.contains(key), "\(key) is not in messages.pot") }
        #expect(Self.methodAndFactorKeys.contains("web.account.sessions.method.password-sms"))
    }

    @Test func everyKeyUsedIsInTheCatalogAndEveryKeyIsUsed() throws {
        let catalog = try Catalog.load(directory: Self.catalogFolder)
        let used = Self.uses(catalog)
        let missing = used.filter { !catalog.contains($0.key) }.map { "\($0.key) (\($0.value))" }.sorted()
        #expect(missing.isEmpty, "used but not in messages.pot: \(missing)")
        let unused = catalog.keys.filter { used[$0] == nil }
        #expect(unused.isEmpty, "in messages.pot but used nowhere: \(unused)")
        for key in catalog.keys {
            #expect(
                key.range(of: "^" + Self.keyShape + "$", options: .regularExpression) != nil,
                "\(key) is not a key of the catalog's shape")
        }
    }

    /// Every card of the account page is among the templates scanned above, and its script among the scripts; each
    /// key a card's script reads is given to the page by the card's prefixes or the page's own (else the script
    /// would show the key itself).
    @Test func everyAccountSectionIsScannedAndGetsTheKeysItsScriptReads() throws {
        let sections = AccountSection.server
        #expect(!sections.isEmpty)
        for section in sections {
            let folder = "Sources/\(section.owner)/Resources/AccountPage/"
            #expect(
                Self.templates.contains { $0.path.hasSuffix(folder + section.template) },
                "\(section.name)'s fragment is not where the scan looks")
            let prefixes = WebRoutes.Page.account.scriptPrefixes + section.messagePrefixes
            for script in section.scripts {
                let file = try #require(
                    Self.scripts.first { $0.path.hasSuffix(folder + script) }, "\(script) is not where the scan looks")
                let body = Self.text(file)
                let keys =
                    Self.matches(#"\btn?\(\s*["']([^"']+)["']"#, in: body)
                    + Self.matches("[\"']" + Self.keyPattern + "[\"']", in: body)
                for key in keys {
                    #expect(
                        prefixes.contains { key.hasPrefix($0) }, "\(script) reads \(key), which its page is not given")
                }
            }
        }
    }

    /// The console shows each setting's help from the catalog: its English is the settings table's own sentence.
    static func settingHelpKey(_ setting: Setting) -> String { "console.setting-help.\(setting.key)" }

    @Test func theSettingsHelpInTheCatalogIsTheSettingsTables() throws {
        let catalog = try Catalog.load(directory: Self.catalogFolder)
        for setting in Vocabulary.server.settings {
            let source = catalog.sources[Self.settingHelpKey(setting)]
            #expect(source?.singular == setting.help, "\(setting.key): the catalog's help differs from the table's")
        }
    }

    @Test func everyLanguageHasEveryKeyWithItsPlaceholdersAndForms() throws {
        let catalog = try Catalog.load(directory: Self.catalogFolder)
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.catalogFolder.path).filter {
            $0.hasSuffix(".po")
        }
        #expect(Set(names) == ["ko.po", "ja.po", "de.po", "es.po", "ar.po"])
        for name in names {
            let tag = String(name.dropLast(3))
            let file = try PortableObject(
                parsing: Self.text(Self.catalogFolder.appendingPathComponent(name)), name: name)
            let language = try #require(catalog.languages[tag])
            var seen: Set<String> = []
            for entry in file.entries {
                let key = entry.context ?? "(no msgctxt)"
                seen.insert(key)
                guard let source = catalog.sources[key] else {
                    Issue.record("\(name):\(entry.line): \(key) is not in messages.pot")
                    continue
                }
                #expect(entry.id == source.singular, "\(name): \(key)'s msgid differs from messages.pot")
                #expect(!entry.flags.contains("fuzzy"), "\(name): \(key) is marked fuzzy")
                #expect(entry.strings.allSatisfy { !$0.isEmpty }, "\(name): \(key) is not translated")
                let english = Catalog.placeholders(in: source.singular)
                    .union(source.plural.map(Catalog.placeholders(in:)) ?? [])
                if source.plural == nil {
                    #expect(entry.idPlural == nil, "\(name): \(key) is plural here only")
                    #expect(
                        Catalog.placeholders(in: entry.strings.first ?? "") == english,
                        "\(name): \(key) has other placeholders than English")
                } else {
                    #expect(
                        entry.strings.count == language.plural.count,
                        "\(name): \(key) has \(entry.strings.count) forms, the language has \(language.plural.count)")
                    for form in entry.strings {
                        // A form may leave the number out ("one file" in words), nothing else.
                        let own = Catalog.placeholders(in: form)
                        #expect(
                            own.isSubset(of: english) && english.subtracting(["count"]).isSubset(of: own),
                            "\(name): a form of \(key) has other placeholders than English")
                    }
                }
                #expect(catalog.translates(key, in: tag), "\(name): \(key) is not used (untranslated or malformed)")
            }
            let absent = catalog.keys.filter { !seen.contains($0) }
            #expect(absent.isEmpty, "\(name) lacks \(absent.count) keys: \(absent.prefix(20))")
        }
    }

    /// Letters left once tags, `{{…}}`, comments, script blocks and entities are taken out of a template are text
    /// outside the catalog; so is a non-empty `alt`, `title`, `placeholder` or `aria-label` that is not `{{…}}`.
    @Test func noTemplateTextOutsideTheCatalog() {
        for file in Self.templates {
            var body = Self.text(file)
            for pattern in [#"<!--[\s\S]*?-->"#, #"<script[\s\S]*?</script>"#] {
                body = body.replacingOccurrences(of: pattern, with: " ", options: .regularExpression)
            }
            // An example URL in a placeholder is not words to translate.
            let attributes = Self.matches(#"\b(?:alt|title|placeholder|aria-label)="([^"]+)""#, in: body).filter {
                $0.range(of: #"^https?://\S+$"#, options: .regularExpression) == nil
                    && $0.replacingOccurrences(of: #"\{\{[^}]*\}\}"#, with: "", options: .regularExpression)
                        .range(of: #"\p{L}"#, options: .regularExpression) != nil
            }
            #expect(attributes.isEmpty, "\(file.lastPathComponent): attribute text outside the catalog: \(attributes)")
            for pattern in [#"\{\{[^}]*\}\}"#, #"&[#a-zA-Z0-9]+;"#] {
                body = body.replacingOccurrences(of: pattern, with: " ", options: .regularExpression)
            }
            let outside = body.replacingOccurrences(of: #"<[^>]*>"#, with: " ", options: .regularExpression)
            let words = Self.matches(#"(\p{L}[\p{L}'’]*)"#, in: outside)
            #expect(words.isEmpty, "\(file.lastPathComponent): text outside the catalog: \(words.prefix(12))")
        }
    }

    /// A string literal in a page or console script that reads like a sentence (capitalised with a space, or
    /// ending in `.`, `?` or `!` after a word) is text outside the catalog, unless its line says `i18n-ignore`.
    @Test func noScriptSentenceOutsideTheCatalog() {
        for file in Self.scripts + Self.extensionFiles.filter({ $0.pathExtension == "js" }) {
            var found: [String] = []
            for line in Self.text(file).split(separator: "\n") where !line.contains("i18n-ignore") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") || code.hasPrefix("*") || code.hasPrefix("/*") || code.hasPrefix("import ") {
                    continue
                }
                for literal in Self.literals(in: code)
                where Self.readsLikeASentence(literal) {
                    found.append(literal)
                }
            }
            #expect(found.isEmpty, "\(file.lastPathComponent): sentences outside the catalog: \(found.prefix(8))")
        }
    }

    /// The string literals of one line of script (`"…"`, `'…'`, `` `…` ``), a `//` comment outside them ending it.
    static func literals(in line: String) -> [String] {
        var found: [String] = []
        var quote: Character?
        var current = ""
        var escaped = false
        var previous: Character = " "
        for character in line {
            if let open = quote {
                if escaped {
                    escaped = false
                    current.append(character)
                } else if character == "\\" {
                    escaped = true
                } else if character == open {
                    found.append(current)
                    quote = nil
                    current = ""
                } else {
                    current.append(character)
                }
            } else if character == "/" && previous == "/" {
                break
            } else if character == "\"" || character == "'" || character == "`" {
                quote = character
            }
            previous = character
        }
        return found
    }

    static func readsLikeASentence(_ literal: String) -> Bool {
        let text = literal.replacingOccurrences(of: #"\$\{[^}]*\}"#, with: "", options: .regularExpression)
        if text.range(of: #"^[A-Z][a-z’']+\s+\p{L}"#, options: .regularExpression) != nil { return true }
        return text.range(of: #"\p{Ll}{2,}\s+\p{L}+[.?!]$"#, options: .regularExpression) != nil
    }

    /// The page scripts' plural rule (`/static/i18n.js`, run by Node) answers as the Swift rule does, for every
    /// shipped language and every count from 0 to 300.
    @Test func theScriptsPluralRuleAnswersAsSwiftDoes() throws {
        let node = ["/usr/bin/node", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) }
        try #require(
            node != nil || ProcessInfo.processInfo.environment["SESAME_TEST_REQUIRE_COMPONENTS"] == nil,
            "node (Debian nodejs) is required here; scripts/test installs it")
        guard let node else { return }
        let catalog = try Catalog.load(directory: Self.catalogFolder)
        let script = Self.root.appendingPathComponent("Sources/SesameWeb/Resources/Web/static/i18n.js")
        let source = Self.text(script).replacingOccurrences(of: "export ", with: "")
            .replacingOccurrences(
                of: "const element = document.getElementById(\"sesame-messages\");", with: "const element = null;")
        for language in catalog.shipped {
            let program =
                source
                + "\nconst out = []; for (let n = 0; n <= 300; n++) out.push(pluralIndex(\(language.plural.json), n, \(language.plural.count)));\nconsole.log(out.join(','));\n"
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("plural-\(UUID().uuidString).js")
            try program.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try Spawn.run(node, [file.path])
            #expect(result.status == 0, "node: \(String(decoding: result.error, as: UTF8.self))")
            let answers = String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                answers == (0...300).map { String(language.plural.index(for: $0)) }.joined(separator: ","),
                "\(language.tag)")
        }
    }
}
