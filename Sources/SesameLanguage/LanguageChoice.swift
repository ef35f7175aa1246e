/// Which catalog language answers a request, in the order the issue of languages fixed: the person's saved choice,
/// OpenID Connect `ui_locales` (space-separated tags, RFC 5646, OpenID Connect Core 1.0 §3.1.2.1), the
/// `Accept-Language` header (RFC 9110 §12.5.4, weights `q` from 0 to 1), then the server's default.
///
/// A tag matches a language by its whole tag or, failing that, by its primary subtag (`ko-KR` → `ko`); the
/// pseudo-language matches only its exact tag. Every input is outside bytes: each is bounded (at most 32 tags of at
/// most 35 characters) and anything malformed is skipped, never an error.
public struct LanguageChoice: Sendable {
    public let available: [String]
    public let defaultTag: String

    public init(available: [String], defaultTag: String) {
        self.available = available
        self.defaultTag = available.contains(defaultTag) ? defaultTag : Catalog.english
    }

    public func choose(saved: String? = nil, uiLocales: String? = nil, acceptLanguage: String? = nil) -> String {
        if let saved, let tag = match(saved) { return tag }
        if let uiLocales {
            for tag in uiLocales.split(separator: " ").prefix(32) {
                if let found = match(String(tag)) { return found }
            }
        }
        if let acceptLanguage {
            for tag in Self.acceptLanguage(acceptLanguage) {
                if let found = match(tag) { return found }
            }
        }
        return defaultTag
    }

    /// The catalog tag for a requested tag, or nil.
    public func match(_ requested: String) -> String? {
        guard Self.wellFormed(requested) else { return nil }
        let lower = requested.lowercased()
        if let exact = available.first(where: { $0.lowercased() == lower }) { return exact }
        let primary = lower.split(separator: "-").first.map(String.init) ?? lower
        return available.first { $0 == primary && $0 != Catalog.pseudo }
    }

    static func wellFormed(_ tag: String) -> Bool {
        guard (1...35).contains(tag.utf8.count), tag.first != "-", tag.last != "-" else { return false }
        return tag.utf8.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D
        }
    }

    /// The header's tags by weight, highest first, the header's order among equals; `q=0` and `*` are left out.
    public static func acceptLanguage(_ header: String) -> [String] {
        var weighted: [(tag: String, q: Double, order: Int)] = []
        for (order, item) in header.split(separator: ",", omittingEmptySubsequences: true).prefix(32).enumerated() {
            let parts = item.split(separator: ";")
            guard let first = parts.first else { continue }
            let tag = first.filter { $0 != " " && $0 != "\t" }
            guard tag != "*", wellFormed(tag) else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let p = parameter.filter { $0 != " " && $0 != "\t" }
                if p.hasPrefix("q=") || p.hasPrefix("Q=") {
                    guard p.count <= 7, let value = Double(p.dropFirst(2)), value >= 0, value <= 1 else {
                        q = -1
                        break
                    }
                    q = value
                }
            }
            if q > 0 { weighted.append((tag, q, order)) }
        }
        return weighted.sorted { $0.q != $1.q ? $0.q > $1.q : $0.order < $1.order }.map(\.tag)
    }
}
