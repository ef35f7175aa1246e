/// The one error type of the `SesameLanguage` library: a catalog file, a plural rule or a message that cannot be
/// used.
///
/// Callers branch on ``code``, an opaque, extensible value; two errors are equal when their codes are equal. The
/// reason names the file and line where there is one; it quotes catalog text only (never a request's bytes beyond a
/// language tag).
public struct LanguageError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A `.po` file that is not well formed: a keyword out of place, an unterminated or badly escaped string, a
        /// plural entry without its forms (GNU gettext manual, "The Format of PO Files").
        public static let malformedFile = Code("malformedFile")
        /// A `Plural-Forms` header that is missing or that this reader cannot evaluate (the C expression subset of
        /// the gettext manual, "Additional functions for plural forms").
        public static let malformedPluralRule = Code("malformedPluralRule")
        /// A key defined twice in one file.
        public static let duplicateKey = Code("duplicateKey")
        /// A message whose `{placeholder}` is not closed or not a name.
        public static let malformedPlaceholder = Code("malformedPlaceholder")
        /// A language file whose header has no usable `Language`, or a second file for one language.
        public static let badLanguage = Code("badLanguage")
        /// A key the catalog does not hold, asked for by code or a template.
        public static let unknownKey = Code("unknownKey")
        /// The catalog folder or its template (`messages.pot`) is missing.
        public static let missingCatalog = Code("missingCatalog")
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: UInt

    public init(_ code: Code, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public init(_ code: Code) { self.init(code, reason: "", file: "", line: 0) }

    public static func == (lhs: LanguageError, rhs: LanguageError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "LanguageError.\(code): \(reason)" }
}
