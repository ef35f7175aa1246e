import Foundation
import Testing

@testable import SesameLanguage

@Suite struct PortableObjectTests {
    @Test func readsEntriesHeaderPluralsAndContinuations() throws {
        let text = """
            # comment
            msgid ""
            msgstr ""
            "Language: ar\\n"
            "Plural-Forms: nplurals=2; plural=(n != 1);\\n"

            #. what it is
            #, fuzzy, c-format
            msgctxt "a.b"
            msgid "Hello "
            "{name}"
            msgstr "Hallo \\"{name}\\"\\n"

            msgctxt "a.count"
            msgid "{count} file"
            msgid_plural "{count} files"
            msgstr[0] "one"
            msgstr[1] "many"

            #~ msgid "obsolete"
            """
        let file = try PortableObject(parsing: text)
        #expect(file.header["Language"] == "ar")
        #expect(file.entries.count == 2)
        #expect(file.entries[0].context == "a.b")
        #expect(file.entries[0].id == "Hello {name}")
        #expect(file.entries[0].strings == ["Hallo \"{name}\"\n"])
        #expect(file.entries[0].flags == ["fuzzy", "c-format"])
        #expect(file.entries[0].extractedComment == "what it is")
        #expect(file.entries[1].idPlural == "{count} files")
        #expect(file.entries[1].strings == ["one", "many"])
    }

    @Test(arguments: [
        "msgid \"a\"\n",  // no msgstr
        "msgid \"a\nmsgstr \"\"\n",  // unterminated
        "msgid \"a\" x\nmsgstr \"\"\n",  // text after a string
        "msgid \"\\q\"\nmsgstr \"\"\n",  // unknown escape
        "msgstr \"\"\n",  // msgstr first
        "msgid \"a\"\nmsgstr[0] \"\"\n",  // indexed without plural
        "msgid \"a\"\nmsgid_plural \"b\"\nmsgstr \"\"\n",  // plural without indexes
        "msgid \"a\"\nmsgid_plural \"b\"\nmsgstr[1] \"\"\n",  // out of order
        "\"floating\"\n",
        "msgfoo \"a\"\n",
    ])
    func refusesMalformedFiles(_ text: String) {
        #expect(throws: LanguageError(.malformedFile)) { try PortableObject(parsing: text) }
    }

    @Test func literalRoundTrips() throws {
        let text = "a \"quoted\" \\ line\nnext\ttab"
        let file = try PortableObject(parsing: "msgctxt \"k\"\nmsgid \(PortableObject.literal(text))\nmsgstr \"\"\n")
        #expect(file.entries[0].id == text)
    }
}

@Suite struct PluralRuleTests {
    static let arabic =
        "nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5);"

    @Test func arabicFormsFollowCLDR() throws {
        let rule = try PluralRule(parsing: Self.arabic)
        #expect(rule.count == 6)
        // CLDR's Arabic categories: zero 0; one 1; two 2; few 3–10, 103–110; many 11–99, 111–199; other 100–102.
        let expected: [(Int, Int)] = [
            (0, 0), (1, 1), (2, 2), (3, 3), (10, 3), (11, 4), (99, 4), (100, 5), (102, 5),
            (103, 3), (111, 4), (1000, 5),
        ]
        for (n, index) in expected { #expect(rule.index(for: n) == index, "n = \(n)") }
    }

    @Test func englishAndSingleForm() throws {
        let english = try PluralRule(parsing: "nplurals=2; plural=(n != 1);")
        #expect([0, 1, 2].map(english.index(for:)) == [1, 0, 1])
        #expect(PluralRule.single.index(for: 7) == 0)
        #expect(english.json == "[\"!=\",\"n\",1]")
    }

    @Test func negationIsNotInequality() throws {
        let rule = try PluralRule(parsing: "nplurals=2; plural=!(n==1);")
        #expect(rule.index(for: 1) == 0 && rule.index(for: 5) == 1)
    }

    @Test(arguments: [
        "plural=0;", "nplurals=7; plural=0;", "nplurals=2; plural=(n;", "nplurals=2; plural=n ? 1;",
        "nplurals=2; plural=x;", "nplurals=2; plural=n 1;", "nplurals=2; plural=0; extra=1",
        "nplurals=2; plural=" + String(repeating: "(", count: 40) + "n" + String(repeating: ")", count: 40) + ";",
    ])
    func refusesRulesItCannotEvaluate(_ header: String) {
        #expect(throws: LanguageError(.malformedPluralRule)) { try PluralRule(parsing: header) }
    }

    @Test func anOutOfRangeAnswerGivesTheLastForm() throws {
        let rule = try PluralRule(parsing: "nplurals=2; plural=n;")
        #expect(rule.index(for: 9) == 1)
        #expect(rule.index(for: -3) == 1)
    }
}

@Suite struct CatalogTests {
    static func catalog(_ ko: String = "") throws -> Catalog {
        let template = try PortableObject(
            parsing: """
                msgctxt "page.hello"
                msgid "Hello, {name}"
                msgstr ""

                msgctxt "page.files"
                msgid "{count} file"
                msgid_plural "{count} files"
                msgstr[0] ""
                msgstr[1] ""
                """)
        let korean = try PortableObject(
            parsing: """
                msgid ""
                msgstr "Language: ko\\nPlural-Forms: nplurals=1; plural=0;\\nX-Language-Name: 한국어\\n"

                """ + ko)
        return try Catalog(template: template, files: ["ko": korean])
    }

    @Test func translatesFillsAndFallsBackToEnglish() throws {
        let catalog = try Self.catalog(
            """
            msgctxt "page.hello"
            msgid "Hello, {name}"
            msgstr "{name}님, 안녕하세요"

            """)
        #expect(try catalog.text("page.hello", in: "ko", ["name": "지민"]) == "지민님, 안녕하세요")
        #expect(try catalog.text("page.hello", in: "en", ["name": "Ada"]) == "Hello, Ada")
        // Untranslated in Korean: English, with English's plural rule.
        #expect(try catalog.plural("page.files", count: 1, in: "ko") == "1 file")
        #expect(try catalog.plural("page.files", count: 1200, in: "en") == "1,200 files")
        #expect(!catalog.translates("page.files", in: "ko"))
        #expect(throws: LanguageError(.unknownKey)) { try catalog.text("page.nope", in: "en") }
        #expect(catalog.tags == ["en", "ko", "en-XA"])
        #expect(catalog.languages["ko"]?.name == "한국어")
    }

    @Test func fuzzyAndWrongFormCountsAreNotUsed() throws {
        let catalog = try Self.catalog(
            """
            #, fuzzy
            msgctxt "page.hello"
            msgid "Hello, {name}"
            msgstr "틀림"

            msgctxt "page.files"
            msgid "{count} file"
            msgid_plural "{count} files"
            msgstr[0] "파일 {count}개"
            msgstr[1] "extra"

            """)
        #expect(!catalog.translates("page.hello", in: "ko"))
        #expect(!catalog.translates("page.files", in: "ko"))
    }

    @Test func refusesABadPlaceholderAndDuplicateKeys() throws {
        #expect(throws: LanguageError(.malformedPlaceholder)) {
            try Self.catalog("msgctxt \"page.hello\"\nmsgid \"x\"\nmsgstr \"{이름}\"\n")
        }
        #expect(throws: LanguageError(.duplicateKey)) {
            try Self.catalog(
                "msgctxt \"page.hello\"\nmsgid \"x\"\nmsgstr \"a\"\n\nmsgctxt \"page.hello\"\nmsgid \"x\"\nmsgstr \"b\"\n"
            )
        }
    }

    @Test func pseudoLanguageKeepsPlaceholdersAndIsLonger() throws {
        let catalog = try Self.catalog()
        let text = try catalog.text("page.hello", in: Catalog.pseudo, ["name": "Ada"])
        #expect(text.hasPrefix("[Héļļö, Ada"))
        let form = try #require(catalog.forms("page.hello", in: Catalog.pseudo)?.first)
        #expect(form.contains("{name}"))
        #expect(Double(form.count - "{name}".count) >= Double("Hello, ".count) * 1.4)
    }

    @Test func scriptMessagesCannotCloseTheirElement() throws {
        let catalog = try Self.catalog()
        let json = catalog.scriptMessages("en", prefixes: ["page."])
        #expect(!json.contains("<"))
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let messages = decoded?["messages"] as? [String: Any]
        #expect(messages?["page.hello"] as? String == "Hello, {name}")
        #expect(
            (messages?["page.files"] as? [String: Any])?["forms"] as? [String] == ["{count} file", "{count} files"])
    }

    @Test func theBundledCatalogLoads() throws {
        let catalog = try Catalog.bundled()
        #expect(catalog.shipped.map(\.tag) == ["en", "ar", "de", "es", "ja", "ko"])
        #expect(catalog.languages["ar"]?.direction == .rightToLeft)
        #expect(catalog.languages["ar"]?.plural.count == 6)
    }
}

@Suite struct LanguageChoiceTests {
    let choice = LanguageChoice(available: ["en", "ar", "de", "ko", "en-XA"], defaultTag: "de")

    @Test func savedThenUILocalesThenAcceptLanguageThenDefault() {
        #expect(choice.choose(saved: "ko", uiLocales: "ar", acceptLanguage: "en") == "ko")
        #expect(choice.choose(saved: "xx", uiLocales: "fr-CA ar-EG", acceptLanguage: "en") == "ar")
        #expect(choice.choose(uiLocales: "fr", acceptLanguage: "fr;q=0.9, ko-KR;q=0.8, en;q=0.5") == "ko")
        #expect(choice.choose(acceptLanguage: "fr") == "de")
        #expect(choice.choose() == "de")
    }

    @Test func weightsOrderAndZeroWeight() {
        #expect(LanguageChoice.acceptLanguage("en;q=0.1, ko;q=0.9, ar") == ["ar", "ko", "en"])
        #expect(LanguageChoice.acceptLanguage("ko;q=0, de;q=1.5, *, en") == ["en"])
        #expect(choice.choose(acceptLanguage: "ko;q=0, en") == "en")
    }

    @Test func thePseudoLanguageNeedsItsExactTag() {
        #expect(choice.match("en-XA") == "en-XA")
        #expect(choice.match("EN-xa") == "en-XA")
        #expect(choice.match("en-GB") == "en")
        #expect(choice.match("en-XB") == "en")
    }

    @Test(arguments: ["", "-", "ko-", String(repeating: "a", count: 40), "k o", "ko\u{0}", "한국어"])
    func malformedTagsAreSkipped(_ tag: String) {
        #expect(choice.match(tag) == nil)
    }

    @Test func longHeadersAreBounded() {
        let header = (0..<1000).map { "x\($0)" }.joined(separator: ",") + ",ko"
        #expect(choice.choose(acceptLanguage: header) == "de")
        #expect(LanguageChoice.acceptLanguage(header).count == 32)
    }
}

/// Replays the fuzzers' regression corpora (FuzzTesting/Corpus/FuzzPortableObject and FuzzLanguageChoice) through the
/// same code without sanitizers: every input is read or refused with a `LanguageError`, never a crash.
@Suite struct LanguageFuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FuzzTesting/Corpus")

    static func inputs(_ target: String) throws -> [String] {
        let folder = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            String(decoding: try Data(contentsOf: folder.appendingPathComponent($0)), as: UTF8.self)
        }
    }

    @Test func portableObjectCorpus() throws {
        let inputs = try Self.inputs("FuzzPortableObject")
        #expect(inputs.count >= 3)
        var read = 0
        for text in inputs {
            if (try? PortableObject(parsing: text)) != nil { read += 1 }
            if let rule = try? PluralRule(parsing: text) {
                #expect((0...200).allSatisfy { (0..<rule.count).contains(rule.index(for: $0)) })
            }
        }
        #expect(read >= 2)
    }

    @Test func languageChoiceCorpus() throws {
        let choice = LanguageChoice(available: ["en", "ar", "de", "es", "ja", "ko", "en-XA"], defaultTag: "en")
        let inputs = try Self.inputs("FuzzLanguageChoice")
        #expect(inputs.count >= 3)
        for text in inputs {
            #expect(choice.available.contains(choice.choose(acceptLanguage: text)))
        }
        let swissFrench = try #require(inputs.first { $0.hasPrefix("fr-CH") } as String?)
        #expect(choice.choose(acceptLanguage: swissFrench) == "en")
    }
}
