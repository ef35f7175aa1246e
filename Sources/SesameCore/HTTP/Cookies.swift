import Foundation

/// Every cookie the server sets, built in one place.
///
/// - the session: `sesame_session`, `Path=/`, `SameSite=Lax`; on https `__Host-` prefixed and `Secure`. With a
///   `cookieDomain` it carries `Domain=<cookieDomain>` and is sent to that domain's subdomains too, so it is
///   `__Secure-` prefixed instead (`__Host-` forbids `Domain`);
/// - the ceremony token: `sesame_ceremony`, `Path=/api`, `SameSite=Strict`, for the challenge's lifetime;
/// - the pending second step: `sesame_pending`, `Path=/api/sessions`, `SameSite=Strict`, for the challenge's lifetime;
/// - the devices an account signed in from (`KnownDevices`): `sesame_device`, `Path=/api`, `SameSite=Strict`, for
///   400 days (the longest a browser keeps a cookie).
///
/// - forward auth's cookie on an app's own host: `sesame_forward`, host-only, `Path=/`, `SameSite=Lax`; `__Host-`
///   prefixed and `Secure` when the app is on https (its scheme, not Sesame's, decides).
///
/// - the state of forward auth's code exchange on an app's host: `sesame_forward_state`, `Path=/_sesame/callback`,
///   `SameSite=Lax`, for the challenge's lifetime; `__Secure-` prefixed on https.
///
/// All are `HttpOnly`. The short-lived ones are `__Secure-` prefixed on https (path-scoped, so not `__Host-`), so a
/// network attacker on plain http cannot plant them.
package struct Cookies: Sendable {
    package enum Kind: Sendable {
        case session, ceremony, pending, device

        package var baseName: String {
            switch self {
            case .session: "sesame_session"
            case .ceremony: "sesame_ceremony"
            case .pending: "sesame_pending"
            case .device: "sesame_device"
            }
        }

        package var path: String {
            switch self {
            case .session: "/"
            case .ceremony: "/api"
            case .pending: "/api/sessions"
            case .device: "/api"
            }
        }

        package var sameSite: String { self == .session ? "Lax" : "Strict" }
    }

    package let secure: Bool
    /// `Domain=` of the session cookie (`cookieDomain`); nil: host-only.
    package let domain: String?
    package let sessionLifetime: Int
    package let challengeLifetime: Int

    package init(_ configuration: ServerConfiguration) {
        secure = configuration.isSecureOrigin
        domain = configuration.cookieDomain
        sessionLifetime = configuration.sessionLifetime
        challengeLifetime = configuration.challengeTimeout
    }

    /// The cookie's name as the browser sends it back.
    package func name(_ kind: Kind) -> String {
        guard secure else { return kind.baseName }
        return (kind == .session && domain == nil ? "__Host-" : "__Secure-") + kind.baseName
    }

    package var sessionName: String { name(.session) }

    /// How long the device cookie is kept: 400 days, the most browsers allow.
    package static let deviceLifetime = 400 * 24 * 60 * 60

    /// `Set-Cookie` giving `value` to the cookie for its lifetime.
    package func set(_ kind: Kind, _ value: String) -> String {
        let maxAge =
            switch kind {
            case .session: sessionLifetime
            case .device: Self.deviceLifetime
            case .ceremony, .pending: challengeLifetime
            }
        return header(kind, value: value, maxAge: maxAge)
    }

    /// `Set-Cookie` removing the cookie.
    package func clear(_ kind: Kind) -> String { header(kind, value: "", maxAge: 0) }

    private func header(_ kind: Kind, value: String, maxAge: Int) -> String {
        var parts = [
            "\(name(kind))=\(value)", "Path=\(kind.path)", "Max-Age=\(maxAge)", "HttpOnly", "SameSite=\(kind.sameSite)",
        ]
        if kind == .session, let domain { parts.insert("Domain=\(domain)", at: 1) }
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }

    /// The name of forward auth's cookie on an app's host served over https (`secure`) or http.
    package static func forwardName(secure: Bool) -> String { secure ? "__Host-sesame_forward" : "sesame_forward" }

    /// `Set-Cookie` for forward auth's cookie on the app's host (the response reaches the browser through the app's
    /// proxy, so the cookie is the app host's, host-only).
    package static func forward(_ value: String, secure: Bool, maxAge: Int) -> String {
        var parts = [
            "\(forwardName(secure: secure))=\(value)", "Path=/", "Max-Age=\(maxAge)", "HttpOnly", "SameSite=Lax",
        ]
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }

    package static func forwardStateName(secure: Bool) -> String {
        secure ? "__Secure-sesame_forward_state" : "sesame_forward_state"
    }

    /// `Set-Cookie` for the state of a code exchange on the app's host: scoped to the callback path, for a
    /// challenge's lifetime.
    package static func forwardState(_ value: String, secure: Bool, path: String, maxAge: Int) -> String {
        var parts = [
            "\(forwardStateName(secure: secure))=\(value)", "Path=\(path)", "Max-Age=\(maxAge)", "HttpOnly",
            "SameSite=Lax",
        ]
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }
}
