import Foundation
import HTTPTypes
import Hummingbird
import WebAuthn

/// Sessions: 256-bit random tokens, given to the client once and stored only as their SHA-256.
///
/// Pages get the token as the session cookie (`Cookies`); native apps that send `Sesame-Client: native` get it in
/// the JSON body as well (`Authorization: Bearer <token>`). Pages never get it in the body: script injected into a
/// page could read it there, which would undo `HttpOnly`. Each session records how and when its holder last
/// proved who they are (`SessionMethod`, `authenticatedAt`).
package struct SessionIssuer: Sendable {
    package let store: any Store
    package let clock: ServerClock
    package let cookies: Cookies
    package let serverSecret: [UInt8]
    package let lifetime: Int

    package init(store: any Store, clock: ServerClock, cookies: Cookies, serverSecret: [UInt8], lifetime: Int) {
        self.store = store
        self.clock = clock
        self.cookies = cookies
        self.serverSecret = serverSecret
        self.lifetime = lifetime
    }

    /// The request header a native app sends to get the session token in the body.
    package static let clientHeader = HTTPField.Name("Sesame-Client")!

    /// Token shape check before any database work: 43 unpadded base64url characters.
    package static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && (try? Base64URL.decode(token)).map { $0.count == 32 } == true
    }

    /// The session a token opens, if it is live and its account is not disabled; touches `lastSeenAt` at most once
    /// a minute.
    /// The session of a request's cookie, without the CSRF header the session middleware asks of unsafe requests:
    /// for plain HTML forms (consent, sign-out, device pages), which check the form's own CSRF token, and for
    /// authorization requests, which a cross-site form cannot send with the `SameSite=Lax` cookie.
    package func authenticate(cookieOf request: Request) async throws -> Authentication? {
        guard let cookie = request.cookies[cookies.sessionName]?.value else { return nil }
        return try await authenticate(token: cookie, carrier: .cookie)
    }

    /// A limited session (`SessionLimitation`) is none unless `allowingLimited` (the session middleware, which keeps
    /// it apart from full ones): the identity provider, forward auth and every other caller never see one.
    package func authenticate(token: String, carrier: Authentication.Carrier, allowingLimited: Bool = false)
        async throws -> Authentication?
    {
        guard Self.isWellFormed(token) else { return nil }
        return try await authenticate(
            tokenHash: Secrets.sha256(token), carrier: carrier, allowingLimited: allowingLimited)
    }

    /// The same, from the token's hash (forward auth's cookie on an app's host holds the hash, sealed).
    package func authenticate(tokenHash hash: [UInt8], carrier: Authentication.Carrier, allowingLimited: Bool = false)
        async throws -> Authentication?
    {
        let now = clock.now()
        guard let session = try await store.session(tokenHash: hash, now: now),
            allowingLimited || session.limitation == nil,
            let user = try await store.user(id: session.userID), !user.disabled
        else { return nil }
        if now.timeIntervalSince(session.lastSeenAt) > 60 {
            try await store.touchSession(tokenHash: hash, at: now)
        }
        return Authentication(session: session, tokenHash: hash, user: user, carrier: carrier)
    }

    /// The CSRF token of a session: HMAC of its token hash under the server secret. Stateless, the same on every
    /// node, useless without the session cookie, and not derivable from the cookie without the server secret.
    package func csrfToken(for tokenHash: [UInt8]) -> String {
        Base64URL.encode(Secrets.hmac(key: serverSecret, Array("csrf".utf8) + tokenHash))
    }

    /// A new session, not stored yet: the caller stores `record` under `tokenHash` (alone with `issue`, or with
    /// other writes) before handing it out.
    package struct Issued: Sendable {
        package let token: String
        package let tokenHash: [UInt8]
        package let record: SessionRecord
    }

    /// How long a limited session lasts at most: long enough to add a passkey.
    package static let limitedLifetime: TimeInterval = 15 * 60

    /// `passkeyBackupEligible`: for a passkey sign-in, the BE flag of the passkey used (nil otherwise). A limited
    /// session (`limitation`) lasts at most `limitedLifetime`.
    package func prepare(
        user: User, method: SessionMethod, passkeyBackupEligible: Bool? = nil, limitation: SessionLimitation? = nil,
        request: Request
    ) -> Issued {
        let (token, hash) = Secrets.token()
        let now = clock.now()
        let lifetime = min(TimeInterval(self.lifetime), limitation == nil ? .infinity : Self.limitedLifetime)
        let record = SessionRecord(
            id: Base64URL.encode(Secrets.random(12)),
            userID: user.id,
            createdAt: now,
            lastSeenAt: now,
            expiresAt: now.addingTimeInterval(lifetime),
            userAgent: String((request.headers[.userAgent] ?? "").prefix(256)),
            method: method.rawValue,
            authenticatedAt: now,
            passkeyBackupEligible: passkeyBackupEligible,
            limitation: limitation?.rawValue
        )
        return Issued(token: token, tokenHash: hash, record: record)
    }

    /// A new session, stored.
    package func issue(user: User, method: SessionMethod, request: Request) async throws -> Issued {
        let issued = prepare(user: user, method: method, request: request)
        try await store.createSession(tokenHash: issued.tokenHash, issued.record)
        return issued
    }

    /// What a sign-in answers: the session cookie, the CSRF token for pages, and the token itself for native apps.
    package func signedIn(_ issued: Issued, user: User, request: Request, status: HTTPResponse.Status = .ok)
        -> EditedResponse<
            SessionIssuedBody
        >
    {
        let wantsToken = request.headers[Self.clientHeader]?.lowercased() == "native"
        return EditedResponse(
            status: status,
            headers: [.setCookie: cookies.set(.session, issued.token)],
            response: SessionIssuedBody(
                status: "signed_in", sessionToken: wantsToken ? issued.token : nil,
                csrfToken: csrfToken(for: issued.tokenHash),
                expiresAt: issued.record.expiresAt, user: AccountUser(user)
            )
        )
    }
}

/// The JSON a successful sign-in returns.
package struct SessionIssuedBody: ResponseEncodable, Sendable {
    package let status: String
    /// Only for native apps that sent `Sesame-Client: native`: send as `Authorization: Bearer <token>`.
    package let sessionToken: String?
    /// For pages: send as `X-CSRF-Token` on writes.
    package let csrfToken: String
    package let expiresAt: Date
    package let user: AccountUser
}

package struct AccountUser: Codable, Sendable {
    package let id: String
    package let username: String
    package let displayName: String
    /// WebAuthn user handle, base64url.
    package let userHandle: String

    package init(_ user: User) {
        self.id = user.id
        self.username = user.username
        self.displayName = user.displayName
        self.userHandle = Base64URL.encode(user.userHandle)
    }
}
