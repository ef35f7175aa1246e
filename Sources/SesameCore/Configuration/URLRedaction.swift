import Foundation

/// A URL as it may be shown or logged: `scheme://user:MASK@host:port/path`, its password replaced by `mask` and its
/// query left out (drivers read passwords from it too, e.g. PostgreSQL's `?password=`). Used wherever a URL setting
/// that can carry a password is shown: the database in the log, the database and the mail relay on the console.
package enum URLRedaction {
    /// The redacted URL, or nil when `url` does not parse as one.
    package static func redacting(_ url: String, mask: String) -> String? {
        guard var parts = URLComponents(string: url) else { return nil }
        let hadPassword = parts.password != nil
        if hadPassword { parts.password = "x" }
        parts.query = nil
        guard let shown = parts.string else { return nil }
        guard hadPassword, let at = shown.range(of: ":x@") else { return shown }
        return shown.replacingCharacters(in: at, with: ":\(mask)@")
    }
}
