import Foundation

/// Every cookie the server sets, built in one place.
///
/// - the session: `sesame_session`, `Path=/`, `SameSite=Lax`; on https `__Host-` prefixed and `Secure`;
/// - the ceremony token: `sesame_ceremony`, `Path=/api`, `SameSite=Strict`, for the challenge's lifetime;
/// - the pending second step: `sesame_pending`, `Path=/api/sessions`, `SameSite=Strict`, for the challenge's lifetime.
///
/// All are `HttpOnly`. The short-lived ones are `__Secure-` prefixed on https (path-scoped, so not `__Host-`), so a
/// network attacker on plain http cannot plant them.
struct Cookies: Sendable {
    enum Kind: Sendable {
        case session, ceremony, pending

        var baseName: String {
            switch self {
            case .session: "sesame_session"
            case .ceremony: "sesame_ceremony"
            case .pending: "sesame_pending"
            }
        }

        var path: String {
            switch self {
            case .session: "/"
            case .ceremony: "/api"
            case .pending: "/api/sessions"
            }
        }

        var sameSite: String { self == .session ? "Lax" : "Strict" }
    }

    let secure: Bool
    let sessionLifetime: Int
    let challengeLifetime: Int

    init(_ configuration: ServerConfiguration) {
        secure = configuration.isSecureOrigin
        sessionLifetime = configuration.sessionLifetime
        challengeLifetime = configuration.challengeTimeout
    }

    /// The cookie's name as the browser sends it back.
    func name(_ kind: Kind) -> String {
        guard secure else { return kind.baseName }
        return (kind == .session ? "__Host-" : "__Secure-") + kind.baseName
    }

    var sessionName: String { name(.session) }

    /// `Set-Cookie` giving `value` to the cookie for its lifetime.
    func set(_ kind: Kind, _ value: String) -> String {
        header(kind, value: value, maxAge: kind == .session ? sessionLifetime : challengeLifetime)
    }

    /// `Set-Cookie` removing the cookie.
    func clear(_ kind: Kind) -> String { header(kind, value: "", maxAge: 0) }

    private func header(_ kind: Kind, value: String, maxAge: Int) -> String {
        var parts = [
            "\(name(kind))=\(value)", "Path=\(kind.path)", "Max-Age=\(maxAge)", "HttpOnly", "SameSite=\(kind.sameSite)",
        ]
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }
}
