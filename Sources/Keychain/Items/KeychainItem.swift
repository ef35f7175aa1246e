import Foundation

/// One thing the keychain keeps: a passkey, a password or a verification-code generator, with optional notes.
///
/// Everything here, including which kind of item it is, the site names and the user names, is sealed inside the
/// item's ciphertext; the server sees only the item's identifier, version and ciphertext length.
public struct KeychainItem: Sendable, Hashable {
    public var id: ItemID
    public var content: ItemContent
    /// Free text the person attached. At most ``ItemLimits/notesBytes`` bytes.
    public var notes: String?
    public var created: Date
    /// When the content or notes last changed on any device (the merge rule's tie-breaker).
    public var modified: Date

    public init(
        id: ItemID = .random(), content: ItemContent, notes: String? = nil, created: Date, modified: Date? = nil
    )
        throws(KeychainError)
    {
        self.id = id
        self.content = content
        self.notes = notes
        self.created = ItemTime.truncate(created)
        self.modified = ItemTime.truncate(modified ?? created)
        try validate()
    }

    public var kind: ItemKind { content.kind }

    /// A short line naming the item for lists: its sites or RP ID and user name. Never a secret.
    public var title: String {
        switch content {
        case .passkey(let p): "\(p.rpId) — \(p.userName)"
        case .password(let p): "\(p.sites.joined(separator: ", ")) — \(p.username)"
        case .codeGenerator(let c):
            {
                var names = c.sites
                if let issuer = c.key.issuer, !c.sites.contains(issuer.lowercased()) { names.insert(issuer, at: 0) }
                return names.joined(separator: ", ") + " — " + c.key.account
            }()
        }
    }

    /// Every site name the item belongs to, for searching.
    public var sites: [String] {
        switch content {
        case .passkey(let p): [p.rpId]
        case .password(let p): p.sites
        case .codeGenerator(let c):
            c.sites + (c.key.issuer.flatMap { c.sites.contains($0.lowercased()) ? nil : [$0] } ?? [])
        }
    }

    public func validate() throws(KeychainError) {
        if let notes {
            try ItemLimits.checkText(notes, field: "notes", maximum: ItemLimits.notesBytes, allowLineBreaks: true)
        }
        switch content {
        case .passkey(let p): try p.validate()
        case .password(let p): try p.validate()
        case .codeGenerator(let c): try c.validate()
        }
    }
}

/// The three kinds of item.
public enum ItemKind: String, Sendable, Hashable, CaseIterable {
    case passkey
    case password
    case code
}

/// What an item holds.
public enum ItemContent: Sendable, Hashable {
    case passkey(Passkey)
    case password(Password)
    case codeGenerator(CodeGenerator)

    public var kind: ItemKind {
        switch self {
        case .passkey: .passkey
        case .password: .password
        case .codeGenerator: .code
        }
    }
}

/// Item times are kept in whole milliseconds, so an item read back compares equal to the one written.
enum ItemTime {
    /// The times kept, in Unix milliseconds: 0001-01-01 to 9999-12-31. Within it, every whole millisecond survives
    /// `Date` (a `Double` of seconds) and back, so stored times re-encode to the same bytes.
    static let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_000

    static func truncate(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds(date)) / 1000)
    }

    /// The nearest whole millisecond, clamped to ``range`` (nearest, not down: `ms / 1000 * 1000` can land a hair
    /// below `ms` in floating point, and rounding down would then lose a millisecond on every round trip).
    static func milliseconds(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.toNearestOrAwayFromZero)
        guard ms.isFinite else { return 0 }
        return Int64(max(min(ms, Double(range.upperBound)), Double(range.lowerBound)))
    }

    /// A stored time, or nil outside ``range``: a decoder refuses it rather than keep a time it would re-encode
    /// differently.
    static func date(checkedMilliseconds ms: Int64) -> Date? {
        range.contains(ms) ? Date(timeIntervalSince1970: Double(ms) / 1000) : nil
    }
}
