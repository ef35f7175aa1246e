/// An item's identity: 16 random bytes, fixed for the item's life and across every device and export.
///
/// Shown to people as 26 lower-case Crockford Base32 characters (`list` prints them; commands accept any unique
/// prefix of at least four); carried on the wire as base64url.
public struct ItemID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public static let byteCount = 16

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// A new random identifier.
    public static func random() -> ItemID { ItemID(unchecked: SecureRandom.bytes(byteCount)) }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Parses the 26-character text form.
    public init?(text: String) {
        guard text.utf8.count == 26, let values = Crockford32.values(text), values.count == 26,
            let bytes = Crockford32.bits(values, count: 128)
        else { return nil }
        self.bytes = bytes
    }

    public var text: String { Crockford32.encode(bytes).lowercased() }
    public var description: String { text }

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}
