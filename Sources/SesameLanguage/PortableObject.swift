/// A gettext PO file (`.po`, and its template `.pot`), read strictly.
///
/// The subset read here is what the GNU gettext manual ("The Format of PO Files") defines for one message per entry:
///
/// ```
/// #  translator comment
/// #. extracted comment (what the message is for, its placeholders)
/// #: reference
/// #, flags (fuzzy, …)
/// msgctxt "key"
/// msgid "English text"
/// msgid_plural "English plural"      (plural messages only)
/// msgstr "translation"               (or msgstr[0] "…", msgstr[1] "…" for plurals)
/// ```
///
/// Strings may continue on following lines as further quoted strings, which are joined. Escapes are `\n`, `\t`,
/// `\"` and `\\`. Obsolete entries (`#~`) are skipped. Sesame keys every message by its `msgctxt`; the entry with
/// an empty `msgid` and no context is the header.
public struct PortableObject: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var context: String?
        public var id: String
        public var idPlural: String?
        /// `msgstr`, or `msgstr[0]`, `msgstr[1]`, … in order.
        public var strings: [String]
        /// `#.` lines, joined with a line break.
        public var extractedComment: String
        /// `#,` flags.
        public var flags: Set<String>
        /// The line the entry starts on (1-based).
        public var line: Int
    }

    public var entries: [Entry]
    /// The header's `Name: value` lines (the `msgstr` of the entry whose `msgid` is empty).
    public var header: [String: String]

    /// Reads a file's text; `name` only names the file in errors.
    public init(parsing text: String, name: String = "catalog") throws(LanguageError) {
        var entries: [Entry] = []
        var current = Builder()
        var lineNumber = 0
        var lastKeyword: Builder.Field?

        func fail(_ why: String) -> LanguageError {
            LanguageError(.malformedFile, reason: "\(name):\(lineNumber): \(why)")
        }
        func finish() throws(LanguageError) {
            guard current.started else { return }
            guard let id = current.id else { throw fail("an entry without msgid") }
            guard !current.strings.isEmpty else { throw fail("an entry without msgstr") }
            if current.idPlural != nil {
                guard current.indexedStrings else { throw fail("a plural entry needs msgstr[0], msgstr[1], …") }
            } else {
                guard !current.indexedStrings, current.strings.count == 1 else {
                    throw fail("msgstr[N] without msgid_plural")
                }
            }
            entries.append(
                Entry(
                    context: current.context, id: id, idPlural: current.idPlural, strings: current.strings,
                    extractedComment: current.comments.joined(separator: "\n"), flags: current.flags,
                    line: current.line))
            current = Builder()
            lastKeyword = nil
        }

        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty {
                try finish()
                continue
            }
            if trimmed.hasPrefix("#") {
                if trimmed.hasPrefix("#~") { continue }
                // A comment after a keyword starts the next entry.
                if current.id != nil && !current.strings.isEmpty { try finish() }
                if !current.started { current.line = lineNumber }
                current.started = true
                if trimmed.hasPrefix("#.") {
                    current.comments.append(String(trimmed.dropFirst(2).drop { $0 == " " }))
                } else if trimmed.hasPrefix("#,") {
                    for flag in trimmed.dropFirst(2).split(separator: ",") {
                        current.flags.insert(flag.trimmingSpaces())
                    }
                }
                continue
            }
            if trimmed.hasPrefix("\"") {
                guard let field = lastKeyword else { throw fail("a string without a keyword") }
                let value = try Self.quoted(trimmed, fail)
                current.append(value, to: field)
                continue
            }
            let keyword = trimmed.prefix { $0 != " " && $0 != "\t" && $0 != "\"" }
            let rest = trimmed.dropFirst(keyword.count).drop { $0 == " " || $0 == "\t" }
            let value = try Self.quoted(rest, fail)
            let field: Builder.Field
            switch keyword {
            case "msgctxt":
                if current.id != nil { try finish() }
                guard current.context == nil else { throw fail("msgctxt given twice") }
                field = .context
            case "msgid":
                if current.id != nil { try finish() }
                field = .id
            case "msgid_plural":
                guard current.id != nil, current.idPlural == nil, current.strings.isEmpty else {
                    throw fail("msgid_plural out of place")
                }
                field = .idPlural
            case "msgstr":
                guard current.id != nil, current.strings.isEmpty else { throw fail("msgstr out of place") }
                field = .string(0)
            default:
                guard keyword.hasPrefix("msgstr["), keyword.hasSuffix("]"),
                    let index = Int(keyword.dropFirst(7).dropLast()), index == current.strings.count,
                    current.id != nil, current.idPlural != nil, !(index == 0 && !current.strings.isEmpty)
                else { throw fail("unknown or out-of-order keyword \(keyword.prefix(20))") }
                current.indexedStrings = true
                field = .string(index)
            }
            if !current.started { current.line = lineNumber }
            current.started = true
            current.set(value, field)
            lastKeyword = field
        }
        try finish()

        var header: [String: String] = [:]
        if let index = entries.firstIndex(where: { $0.context == nil && $0.id.isEmpty }) {
            for line in entries[index].strings[0].split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                header[String(line[..<colon]).trimmingSpaces()] = String(line[line.index(after: colon)...])
                    .trimmingSpaces()
            }
            entries.remove(at: index)
        }
        self.entries = entries
        self.header = header
    }

    /// One `"…"` string with its escapes resolved; nothing but spaces may follow it.
    private static func quoted(_ text: Substring, _ fail: (String) -> LanguageError) throws(LanguageError) -> String {
        guard text.first == "\"" else { throw fail("expected a quoted string") }
        var output = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" {
                let after = text[text.index(after: index)...]
                guard after.allSatisfy({ $0 == " " || $0 == "\t" }) else { throw fail("text after a string") }
                return output
            }
            if character == "\\" {
                index = text.index(after: index)
                guard index < text.endIndex else { break }
                switch text[index] {
                case "n": output.append("\n")
                case "t": output.append("\t")
                case "\"": output.append("\"")
                case "\\": output.append("\\")
                default: throw fail("unknown escape \\\(text[index])")
                }
            } else {
                output.append(character)
            }
            index = text.index(after: index)
        }
        throw fail("unterminated string")
    }

    private struct Builder {
        enum Field: Equatable { case context, id, idPlural, string(Int) }
        var started = false
        var line = 0
        var context: String?
        var id: String?
        var idPlural: String?
        var strings: [String] = []
        var indexedStrings = false
        var comments: [String] = []
        var flags: Set<String> = []

        mutating func set(_ value: String, _ field: Field) {
            switch field {
            case .context: context = value
            case .id: id = value
            case .idPlural: idPlural = value
            case .string: strings.append(value)
            }
        }

        mutating func append(_ value: String, to field: Field) {
            switch field {
            case .context: context! += value
            case .id: id! += value
            case .idPlural: idPlural! += value
            case .string: strings[strings.count - 1] += value
            }
        }
    }
}

extension PortableObject {
    /// A PO string literal for `text` (the writer's half of `quoted`), used when files are generated.
    public static func literal(_ text: String) -> String {
        var output = "\""
        for character in text {
            switch character {
            case "\n": output += "\\n"
            case "\t": output += "\\t"
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            default: output.append(character)
            }
        }
        return output + "\""
    }
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
