import Foundation
import HTTPTypes
import Hummingbird
import WebAuthn

/// Session tokens: 256-bit random values, given to the client once (cookie and/or JSON for native apps) and
/// stored only as their SHA-256. The cookie is `HttpOnly; SameSite=Lax; Path=/`, plus `Secure` and the
/// `__Host-` name prefix when the origin is https.
enum Sessions {
    static func cookieName(_ configuration: ServerConfiguration) -> String {
        configuration.isSecureOrigin ? "__Host-sesame_session" : "sesame_session"
    }

    /// Names of the short-lived cookies (ceremony token, pending second step): `__Secure-` prefixed on https
    /// origins, so a network attacker on plain http cannot plant them. (They are path-scoped, so not `__Host-`.)
    static func secureName(_ name: String, _ configuration: ServerConfiguration) -> String {
        configuration.isSecureOrigin ? "__Secure-" + name : name
    }

    /// Token shape check before any database work: 43 unpadded base64url characters.
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && (try? Base64URL.decode(token)).map { $0.count == 32 } == true
    }

    static func authenticate(token: String, carrier: Authentication.Carrier, sesame: Sesame) async throws -> Authentication? {
        guard isWellFormed(token) else { return nil }
        let hash = Secrets.sha256(token)
        let now = sesame.now
        guard let session = try await sesame.store.session(tokenHash: hash, now: now),
            let user = try await sesame.store.user(id: session.userID), !user.disabled
        else { return nil }
        if now.timeIntervalSince(session.lastSeenAt) > 60 {
            try await sesame.store.touchSession(tokenHash: hash, at: now)
        }
        return Authentication(session: session, tokenHash: hash, user: user, carrier: carrier)
    }

    /// The CSRF token of a session: HMAC of its token hash under the server secret. Stateless, the same on every
    /// node, useless without the session cookie, and not derivable from the cookie without the server secret.
    static func csrfToken(for tokenHash: [UInt8], sesame: Sesame) -> String {
        Base64URL.encode(Secrets.hmac(key: sesame.serverSecret, Array("csrf".utf8) + tokenHash))
    }

    /// What a sign-in returns: the session token (for native apps), its CSRF token (for pages), and the cookie.
    struct Issued: Sendable {
        let token: String
        let tokenHash: [UInt8]
        let record: SessionRecord
        let csrfToken: String
        let setCookie: String
    }

    static func issue(user: User, method: String, request: Request, sesame: Sesame) async throws -> Issued {
        let issued = prepare(user: user, method: method, request: request, sesame: sesame)
        try await sesame.store.createSession(tokenHash: issued.tokenHash, issued.record)
        return issued
    }

    /// A new session for `user`, not stored yet: the caller stores `record` under `tokenHash` before handing it out.
    static func prepare(user: User, method: String, request: Request, sesame: Sesame) -> Issued {
        let (token, hash) = Secrets.token()
        let now = sesame.now
        let record = SessionRecord(
            id: Base64URL.encode(Secrets.random(12)),
            userID: user.id,
            createdAt: now,
            lastSeenAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(sesame.configuration.sessionLifetime)),
            userAgent: String((request.headers[.userAgent] ?? "").prefix(256)),
            method: method,
            authenticatedAt: now
        )
        return Issued(
            token: token, tokenHash: hash, record: record, csrfToken: csrfToken(for: hash, sesame: sesame),
            setCookie: cookie(value: token, maxAge: sesame.configuration.sessionLifetime, sesame.configuration)
        )
    }

    static func cookie(value: String, maxAge: Int, _ configuration: ServerConfiguration) -> String {
        var parts = ["\(cookieName(configuration))=\(value)", "Path=/", "Max-Age=\(maxAge)", "HttpOnly", "SameSite=Lax"]
        if configuration.isSecureOrigin { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }

    static func clearingCookie(_ configuration: ServerConfiguration) -> String {
        cookie(value: "", maxAge: 0, configuration)
    }
}

/// The JSON a successful sign-in returns.
struct SessionIssuedBody: Codable, Sendable {
    let status: String
    /// For native apps, which ask for it with the `Sesame-Client: native` request header: send it as
    /// `Authorization: Bearer <token>`. Pages never get it: their session is the HttpOnly cookie, which script on the
    /// page cannot read, and a token in the body would undo that.
    let sessionToken: String?
    /// For pages: send as `X-CSRF-Token` on writes.
    let csrfToken: String
    let expiresAt: Date
    let user: AccountUser
}

struct AccountUser: Codable, Sendable {
    let id: String
    let username: String
    let displayName: String
    /// WebAuthn user handle, base64url.
    let userHandle: String

    init(_ user: User) {
        self.id = user.id
        self.username = user.username
        self.displayName = user.displayName
        self.userHandle = Base64URL.encode(user.userHandle)
    }
}

extension Sessions {
    /// The request header a native app sends to get the session token in the body.
    static let clientHeader = HTTPField.Name("Sesame-Client")!

    /// Whether the request comes from a native app that keeps the session token itself.
    static func wantsToken(_ request: Request) -> Bool {
        request.headers[clientHeader]?.lowercased() == "native"
    }

    static func signedIn(_ issued: Issued, user: User, request: Request, status: HTTPResponse.Status = .ok) -> JSONResponse<SessionIssuedBody> {
        JSONResponse(
            SessionIssuedBody(
                status: "signed_in", sessionToken: wantsToken(request) ? issued.token : nil, csrfToken: issued.csrfToken,
                expiresAt: issued.record.expiresAt,
                user: AccountUser(user)
            ),
            status: status,
            headers: [.setCookie: issued.setCookie]
        )
    }
}
