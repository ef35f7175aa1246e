import Foundation

/// Where the store lives.
public enum DatabaseLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(url: String)

    public init(parsing value: String) throws(ConfigurationError) {
        let lower = value.lowercased()
        if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") {
            guard let url = URL(string: value), url.host != nil, url.user != nil else {
                throw ConfigurationError("database: expected postgres://user[:password]@host[:port]/database")
            }
            self = .postgres(url: value)
        } else if lower.hasPrefix("sqlite:") {
            let path = String(value.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ConfigurationError("database: sqlite: needs a file path") }
            self = .sqlite(path: path)
        } else if value.contains("://") {
            throw ConfigurationError("database: only SQLite paths and postgres:// URLs are supported")
        } else {
            guard !value.isEmpty else { throw ConfigurationError("database: empty") }
            self = .sqlite(path: value)
        }
    }

    /// A description safe to log (no password).
    public var redacted: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url):
            return URLRedaction.redacting(url, mask: "redacted") ?? "postgres://(unparseable)"
        }
    }
}
