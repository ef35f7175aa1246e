import Foundation
import WebAuthn

extension SessionIssuedBody: FastPathEncodable {
    /// The sign-in answer as `SesameResponseEncoder` writes it (sorted keys, ISO 8601 time in UTC to the second),
    /// without `JSONEncoder`; nil when a name needs an escape or the expiry is outside years 2000 to 9999, which the
    /// encoder then writes. `FastPathEncodingTests` compares both.
    package func fastPathJSON() -> [UInt8]? {
        guard let expires = Self.internetDateTime(expiresAt) else { return nil }
        var out = JSONTextWriter()
        var first = true
        out.raw("{")
        out.key("csrfToken", first: &first)
        out.string(csrfToken)
        out.key("expiresAt", first: &first)
        out.string(expires)
        if let sessionToken {
            out.key("sessionToken", first: &first)
            out.string(sessionToken)
        }
        out.key("status", first: &first)
        out.string(status)
        out.key("user", first: &first)
        var inner = true
        out.raw("{")
        out.key("displayName", first: &inner)
        out.string(user.displayName)
        out.key("id", first: &inner)
        out.string(user.id)
        out.key("userHandle", first: &inner)
        out.string(user.userHandle)
        out.key("username", first: &inner)
        out.string(user.username)
        out.raw("}}")
        return out.failed ? nil : out.bytes
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC, the seconds truncated, as `JSONEncoder.DateEncodingStrategy.iso8601` writes a
    /// date; nil outside years 2000 to 9999.
    package static func internetDateTime(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= 946_684_800, seconds < 253_402_300_800 else { return nil }
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return nil }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
