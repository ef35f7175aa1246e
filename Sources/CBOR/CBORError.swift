/// Why CBOR input was refused.
///
/// The code is opaque and extensible: compare errors with `==` (which compares codes only) or switch on
/// `code` against the static members. `offset` is where in the input the problem was found.
public struct CBORError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case truncated, nonCanonicalInteger, indefiniteLength, reservedAdditionalInfo, invalidUTF8
            case unsortedMapKeys, duplicateMapKey, depthLimitExceeded, sizeLimitExceeded, trailingBytes
            case unsupportedSimpleValue, nonCanonicalFloat, integerOverflow
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The input ended inside an item.
        public static let truncated = Code(.truncated)
        /// An integer, length or tag argument did not use the shortest encoding.
        public static let nonCanonicalInteger = Code(.nonCanonicalInteger)
        /// An indefinite-length string, array or map (additional information 31).
        public static let indefiniteLength = Code(.indefiniteLength)
        /// Additional information 28, 29 or 30, which RFC 8949 reserves.
        public static let reservedAdditionalInfo = Code(.reservedAdditionalInfo)
        /// A text string that is not valid UTF-8.
        public static let invalidUTF8 = Code(.invalidUTF8)
        /// Map keys not in CTAP2 canonical order.
        public static let unsortedMapKeys = Code(.unsortedMapKeys)
        /// The same key twice in one map.
        public static let duplicateMapKey = Code(.duplicateMapKey)
        /// Items nested deeper than the decoder's limit.
        public static let depthLimitExceeded = Code(.depthLimitExceeded)
        /// More bytes, elements or entries than the decoder's limit or the remaining input allows.
        public static let sizeLimitExceeded = Code(.sizeLimitExceeded)
        /// Bytes left over after the top-level item.
        public static let trailingBytes = Code(.trailingBytes)
        /// A two-byte simple value below 32, which RFC 8949 forbids.
        public static let unsupportedSimpleValue = Code(.unsupportedSimpleValue)
        /// A float that a shorter float encoding represents exactly.
        public static let nonCanonicalFloat = Code(.nonCanonicalFloat)
        /// A length that does not fit the platform's integers.
        public static let integerOverflow = Code(.integerOverflow)

        public var description: String { String(describing: value) }
    }

    public let code: Code
    /// Byte offset in the input where the problem was found.
    public let offset: Int
    public let file: String
    public let line: Int

    public init(_ code: Code, offset: Int, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.offset = offset
        self.file = file
        self.line = line
    }

    public static func == (lhs: CBORError, rhs: CBORError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "CBORError.\(code) at byte \(offset)" }
}
