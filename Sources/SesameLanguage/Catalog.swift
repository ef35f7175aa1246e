import Foundation

/// A language the catalog holds: its BCP 47 tag, its name in itself, its writing direction and plural rule.
public struct Language: Sendable, Hashable {
    public enum Direction: String, Sendable { case leftToRight = "ltr", rightToLeft = "rtl" }

    public let tag: String
    /// The language's own name (`한국어`), for the account page's choice.
    public let name: String
    public let direction: Direction
    public let plural: PluralRule

    public static func == (lhs: Language, rhs: Language) -> Bool { lhs.tag == rhs.tag }
    public func hash(into hasher: inout Hasher) { hasher.combine(tag) }
}

/// Sesame's one message catalog: every sentence a person reads on the pages, in the page scripts, the console, the
/// mails and the browser extension, keyed by a stable name (`web.signup.heading`).
///
/// The catalog is a folder of gettext files: `messages.pot` holds every key (its `msgctxt`), the English text
/// (`msgid`, `msgid_plural`) and a note for translators (`#.`, naming the placeholders); each other language is one
/// `<tag>.po` with the same entries translated. Placeholders are named, `{site}`; a plural message picks its form by
/// the language's own `Plural-Forms` rule and fills `{count}`. A language file's header also gives `Language`,
/// `X-Language-Name` (its own name) and, for right-to-left scripts, `X-Text-Direction: rtl`.
///
/// A text a language lacks (an empty or `fuzzy` `msgstr`) falls back to English; the catalog tests refuse shipped
/// languages with any such gap. `en-XA` is a pseudo-language made from English (accented, 40 % longer, bracketed)
/// to find text that is cut off or left outside the catalog; it is served only when asked for by its exact tag.
public struct Catalog: Sendable {
    /// One key's English source.
    public struct Source: Sendable, Equatable {
        public let key: String
        public let singular: String
        public let plural: String?
        public let comment: String
    }

    /// The English entries by key, and their order in `messages.pot`.
    public let sources: [String: Source]
    public let keys: [String]
    /// Languages by tag (English and the pseudo-language included).
    public let languages: [String: Language]
    /// Each language's forms by key (one form, or the plural rule's count); English and `en-XA` are made from
    /// `sources`.
    private let texts: [String: [String: [String]]]

    public static let english = "en"
    public static let pseudo = "en-XA"
    static let englishPlural = try! PluralRule(parsing: "nplurals=2; plural=(n != 1);")

    /// Every language tag, English first, then the others by tag; the pseudo-language last.
    public var tags: [String] {
        [Self.english] + languages.keys.filter { $0 != Self.english && $0 != Self.pseudo }.sorted() + [Self.pseudo]
    }

    /// The languages a person can choose (no pseudo-language).
    public var shipped: [Language] { tags.dropLast().compactMap { languages[$0] } }

    /// A catalog of no keys (English only).
    public static let empty = try! Catalog(template: PortableObject(parsing: ""), files: [:])

    /// The catalog in this library's bundle.
    public static func bundled() throws(LanguageError) -> Catalog {
        guard let url = Bundle.module.url(forResource: "Catalog", withExtension: nil, subdirectory: "Resources") else {
            throw LanguageError(.missingCatalog, reason: "the catalog folder is missing from the bundle")
        }
        return try load(directory: url)
    }

    /// Reads `messages.pot` and every `*.po` in `directory`.
    public static func load(directory: URL) throws(LanguageError) -> Catalog {
        func read(_ url: URL) throws(LanguageError) -> String {
            do { return try String(contentsOf: url, encoding: .utf8) } catch {
                throw LanguageError(.missingCatalog, reason: "\(url.lastPathComponent) cannot be read")
            }
        }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() } catch {
            throw LanguageError(.missingCatalog, reason: "the catalog folder cannot be read")
        }
        guard names.contains("messages.pot") else {
            throw LanguageError(.missingCatalog, reason: "messages.pot is missing")
        }
        let template = try PortableObject(
            parsing: try read(directory.appendingPathComponent("messages.pot")), name: "messages.pot")
        var files: [String: PortableObject] = [:]
        for name in names where name.hasSuffix(".po") {
            files[String(name.dropLast(3))] = try PortableObject(
                parsing: try read(directory.appendingPathComponent(name)), name: name)
        }
        return try Catalog(template: template, files: files)
    }

    /// A catalog from parsed files: `files` by tag (the file's name without `.po`).
    public init(template: PortableObject, files: [String: PortableObject]) throws(LanguageError) {
        var sources: [String: Source] = [:]
        var keys: [String] = []
        for entry in template.entries {
            guard let key = entry.context, !key.isEmpty else {
                throw LanguageError(.malformedFile, reason: "messages.pot:\(entry.line): an entry without msgctxt")
            }
            guard sources[key] == nil else {
                throw LanguageError(.duplicateKey, reason: "messages.pot:\(entry.line): \(key) is defined twice")
            }
            try Self.checkPlaceholders(entry.id, key)
            if let plural = entry.idPlural { try Self.checkPlaceholders(plural, key) }
            sources[key] = Source(
                key: key, singular: entry.id, plural: entry.idPlural, comment: entry.extractedComment)
            keys.append(key)
        }
        var languages: [String: Language] = [
            Self.english: Language(
                tag: Self.english, name: "English", direction: .leftToRight, plural: Self.englishPlural),
            Self.pseudo: Language(
                tag: Self.pseudo, name: "Pseudo", direction: .leftToRight, plural: Self.englishPlural),
        ]
        var texts: [String: [String: [String]]] = [:]
        texts[Self.english] = sources.mapValues { [$0.singular] + ($0.plural.map { [$0] } ?? []) }
        texts[Self.pseudo] = texts[Self.english]!.mapValues { $0.map(Self.pseudoText) }
        for (tag, file) in files {
            guard file.header["Language"] == tag, tag != Self.english, tag != Self.pseudo,
                tag.range(of: "^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$", options: .regularExpression) != nil
            else {
                throw LanguageError(.badLanguage, reason: "\(tag).po: its header's Language must be \(tag)")
            }
            guard let rule = file.header["Plural-Forms"] else {
                throw LanguageError(.malformedPluralRule, reason: "\(tag).po has no Plural-Forms")
            }
            let language = Language(
                tag: tag, name: file.header["X-Language-Name"] ?? tag,
                direction: file.header["X-Text-Direction"] == "rtl" ? .rightToLeft : .leftToRight,
                plural: try PluralRule(parsing: rule))
            var own: [String: [String]] = [:]
            for entry in file.entries {
                guard let key = entry.context else { continue }
                guard own[key] == nil else {
                    throw LanguageError(.duplicateKey, reason: "\(tag).po:\(entry.line): \(key) is defined twice")
                }
                // Untranslated or fuzzy: English is shown instead (the catalog tests refuse both in shipped files).
                if entry.flags.contains("fuzzy") || entry.strings.contains(where: \.isEmpty) { continue }
                guard let source = sources[key] else { continue }
                guard (source.plural == nil) == (entry.idPlural == nil),
                    source.plural == nil ? entry.strings.count == 1 : entry.strings.count == language.plural.count
                else { continue }
                for form in entry.strings { try Self.checkPlaceholders(form, key) }
                own[key] = entry.strings
            }
            languages[tag] = language
            texts[tag] = own
        }
        self.sources = sources
        self.keys = keys
        self.languages = languages
        self.texts = texts
    }

    // MARK: Reading

    /// Whether `key` is in the catalog.
    public func contains(_ key: String) -> Bool { sources[key] != nil }

    /// The forms of `key` in `tag`, English where the language lacks it; nil for an unknown key.
    public func forms(_ key: String, in tag: String) -> [String]? {
        texts[tag]?[key] ?? texts[Self.english]![key]
    }

    /// Whether `tag` has its own text for `key` (not English in its place).
    public func translates(_ key: String, in tag: String) -> Bool { texts[tag]?[key] != nil }

    /// `key`'s text in `tag` with its placeholders filled; an unknown key throws.
    public func text(_ key: String, in tag: String, _ values: [String: String] = [:]) throws(LanguageError) -> String {
        guard let forms = forms(key, in: tag) else {
            throw LanguageError(.unknownKey, reason: "the catalog has no key \(key)")
        }
        return Self.fill(forms[0], values)
    }

    /// A plural message's form for `count` in `tag` (by the language's rule), with `{count}` and `values` filled.
    public func plural(_ key: String, count: Int, in tag: String, _ values: [String: String] = [:])
        throws(LanguageError) -> String
    {
        guard let forms = forms(key, in: tag) else {
            throw LanguageError(.unknownKey, reason: "the catalog has no key \(key)")
        }
        let own = translates(key, in: tag) || tag == Self.pseudo
        let rule = own ? (languages[tag]?.plural ?? Self.englishPlural) : Self.englishPlural
        let form = forms[min(rule.index(for: count), forms.count - 1)]
        return Self.fill(form, values.merging(["count": Self.number(count, tag)]) { own, _ in own })
    }

    /// `count` written as the language writes numbers (grouping separators).
    public static func number(_ count: Int, _ tag: String) -> String {
        count.formatted(.number.locale(Locale(identifier: tag == pseudo ? english : tag)))
    }

    // MARK: Placeholders

    /// `{name}` → `values[name]`; a name without a value stays as written.
    public static func fill(_ text: String, _ values: [String: String]) -> String {
        guard text.contains("{") else { return text }
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            output += rest[..<open]
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}") else { break }
            let name = String(after[..<close])
            output += values[name] ?? "{\(name)}"
            rest = after[after.index(after: close)...]
        }
        return output + rest
    }

    /// The placeholder names of a text.
    public static func placeholders(in text: String) -> Set<String> {
        var names: Set<String> = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}") else { break }
            names.insert(String(after[..<close]))
            rest = after[after.index(after: close)...]
        }
        return names
    }

    static func checkPlaceholders(_ text: String, _ key: String) throws(LanguageError) {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}"),
                after[..<close].range(of: "^[a-zA-Z][a-zA-Z0-9_]*$", options: .regularExpression) != nil
            else {
                throw LanguageError(.malformedPlaceholder, reason: "\(key): a { that does not open a {name}")
            }
            rest = after[after.index(after: close)...]
        }
        if rest.contains("}") {
            throw LanguageError(.malformedPlaceholder, reason: "\(key): a } without its {")
        }
    }

    // MARK: The pseudo-language

    private static let accents: [Character: Character] = [
        "a": "á", "b": "ƀ", "c": "ç", "d": "ð", "e": "é", "f": "ƒ", "g": "ĝ", "h": "ĥ", "i": "î", "j": "ĵ", "k": "ķ",
        "l": "ļ", "m": "ɱ", "n": "ñ", "o": "ö", "p": "þ", "r": "ŕ", "s": "š", "t": "ţ", "u": "û", "w": "ŵ", "y": "ý",
        "z": "ž", "A": "Å", "C": "Ç", "E": "É", "I": "Î", "N": "Ñ", "O": "Ö", "S": "Š", "U": "Û", "Y": "Ý",
    ]

    /// Accented letters (placeholders kept), padded to about 140 % of the length, between `[` and `]`.
    static func pseudoText(_ text: String) -> String {
        var output = ""
        var inPlaceholder = false
        var letters = 0  // characters outside placeholders
        for character in text {
            if character == "{" { inPlaceholder = true }
            if inPlaceholder {
                output.append(character)
            } else {
                output.append(accents[character] ?? character)
                letters += 1
            }
            if character == "}" { inPlaceholder = false }
        }
        // Padding in words of at most five characters, so a line can still break as a real language's would.
        let padding = max(1, (letters * 2 + 4) / 5)
        let filler = Array("·ſŧ")
        var pad = ""
        for index in 0..<padding {
            if index > 0 && index % 5 == 0 { pad.append(" ") }
            pad.append(filler[index % 3])
        }
        return "[\(output) \(pad)]"
    }
}
