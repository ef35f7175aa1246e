import Crypto
import Foundation
import WebAuthn
import SesameCore
import SesameBytes

/// An authorization request (OpenID Connect Core 1.0 §3.1.2.1), checked in the order the specification sets:
/// first the client and redirect URI, whose failures are shown on Sesame's own page and never redirected (an
/// unknown client or URI must not turn Sesame into an open redirector); then everything else, whose failures go
/// back to the client's redirect URI with `error`, `state` and `iss` (RFC 9207).
package struct AuthorizationRequest: Sendable {
    package let client: OAuthClient
    package let redirectURI: String
    package let state: String?
    package let scopes: [String]
    package let nonce: String?
    package let codeChallenge: String
    package let prompts: Set<String>
    package let maxAge: Int?
    package let loginHint: String?
    package let acrValues: [String]
    /// `ui_locales`: the languages the application asks its pages in, most preferred first (OpenID Connect Core
    /// §3.1.2.1); the sign-in page it sends the person to and the consent page follow it.
    package let uiLocales: String?
    /// Set by Sesame when it sends the person to sign in for this request (`prompt=login`, `max_age`, a stale
    /// session asking for `offline_access`): the sign-in must be newer than this (Unix seconds), and a sign-in that
    /// is meets `max_age` and the need for a recent sign-in however long the round trip took. Only a genuine marker
    /// (``ReturnMarker``: MACed with a key from the server secret over the time and the rest of the request, and
    /// younger than its lifetime) sets it; anything else is ignored.
    package let signedInAfter: Int?
    /// The query as received, to come back to after signing in or consenting.
    package let query: String

    package var scope: String { scopes.joined(separator: " ") }
    package var wantsPasskey: Bool { acrValues.contains("phr") }

    package static var supportedScopes: [String] { ScopeClaims.scopes }

    /// A failure shown on Sesame's page (no redirect): the client or its redirect URI cannot be trusted.
    package typealias PageError = ServerError<AuthorizationPageErrorCode>

    /// A failure sent back to the client: an `OAuthError` rendered as a redirect (RFC 6749 §4.1.2.1).
    package struct RedirectError: Error {
        package let error: OAuthError
        package let redirectURI: String
        package let state: String?
        package init(error: OAuthError, redirectURI: String, state: String?) {
            self.error = error
            self.redirectURI = redirectURI
            self.state = state
        }

        package init(
            code: OAuthErrorCode, description: String, redirectURI: String, state: String?, file: String = #fileID,
            line: Int = #line
        ) {
            self.init(
                error: OAuthError(code, description, file: file, line: line), redirectURI: redirectURI, state: state)
        }

        package var code: OAuthErrorCode { error.code }
        package var description: String { error.message }
    }

    package static func parse(
        _ form: FormParameters, query: String, store: any IdentityProviderStorage, marker: ReturnMarker, now: Date
    )
        async throws -> AuthorizationRequest
    {
        guard let clientID = form["client_id"], clientID.count <= 128, !form.repeated.contains("client_id"),
            let client = try await store.client(id: clientID)
        else {
            throw PageError(
                code: .unknownClient, message: "This sign-in link names an application this site does not know.")
        }
        guard let redirectURI = form["redirect_uri"], !form.repeated.contains("redirect_uri"),
            ClientRegistry.matches(redirectURI, client: client)
        else {
            throw PageError(
                code: .unregisteredRedirectURI,
                message: "This sign-in link would send you to an address the application did not register.")
        }
        let state = form["state"]
        func fail(_ code: OAuthErrorCode, _ why: String) -> RedirectError {
            RedirectError(code: code, description: why, redirectURI: redirectURI, state: state)
        }
        if let name = form.repeated.first { throw fail(.invalidRequest, "\(name) is given more than once") }
        if form["request"] != nil { throw fail(.requestNotSupported, "request objects are not supported") }
        if form["request_uri"] != nil { throw fail(.requestURINotSupported, "request_uri is not supported") }
        guard let responseType = form["response_type"] else { throw fail(.invalidRequest, "response_type is missing") }
        guard responseType == "code" else {
            throw fail(.unsupportedResponseType, "only response_type=code is supported")
        }
        if let mode = form["response_mode"], mode != "query" {
            throw fail(.invalidRequest, "only response_mode=query is supported")
        }
        let asked = (form["scope"] ?? "").split(separator: " ").map(String.init)
        guard asked.contains("openid") else { throw fail(.invalidScope, "scope must include openid") }
        // Scopes Sesame does not know are left out of the grant (RFC 6749 §3.3).
        let scopes = supportedScopes.filter(asked.contains)
        guard let challenge = form["code_challenge"] else {
            throw fail(.invalidRequest, "PKCE is required: send code_challenge with S256")
        }
        guard form["code_challenge_method"] == "S256" else {
            throw fail(.invalidRequest, "code_challenge_method must be S256")
        }
        guard challenge.count == 43, challenge.utf8.allSatisfy(ClientRules.isBase64URL) else {
            throw fail(.invalidRequest, "code_challenge must be the base64url SHA-256 of the verifier")
        }
        let prompts = Set((form["prompt"] ?? "").split(separator: " ").map(String.init))
        guard prompts.isSubset(of: ["none", "login", "consent", "select_account"]) else {
            throw fail(.invalidRequest, "prompt has a value Sesame does not support")
        }
        if prompts.contains("none"), prompts.count > 1 { throw fail(.invalidRequest, "prompt=none cannot be combined") }
        var maxAge: Int?
        if let text = form["max_age"] {
            guard let value = Int(text), value >= 0 else {
                throw fail(.invalidRequest, "max_age must be a number of seconds")
            }
            maxAge = value
        }
        if let nonce = form["nonce"], nonce.count > 512 { throw fail(.invalidRequest, "nonce is too long") }
        return AuthorizationRequest(
            client: client, redirectURI: redirectURI, state: state, scopes: scopes, nonce: form["nonce"],
            codeChallenge: challenge,
            prompts: prompts, maxAge: maxAge, loginHint: form["login_hint"].map { String($0.prefix(64)) },
            acrValues: (form["acr_values"] ?? "").split(separator: " ").map(String.init),
            uiLocales: form["ui_locales"].map { String($0.prefix(200)) }.flatMap { $0.isEmpty ? nil : $0 },
            signedInAfter: marker.verifiedTime(form, now: now), query: query
        )
    }

    /// Whether a session satisfies the request's freshness and strength, or the person must sign in again.
    /// `recentWithin` (seconds) asks for a sign-in that recent as well (a grant with `offline_access`).
    package func needsSignIn(_ session: SessionRecord?, now: Date, recentWithin: Int? = nil) -> Bool {
        guard let session else { return true }
        if wantsPasskey, !IDTokenClaims.isPasskey(session.method) { return true }
        if let signedInAfter {
            // Sesame sent the person to sign in for this request: a sign-in since then is the one it asked for and
            // meets max_age and recency whatever the round trip took (`auth_time` tells the application when it
            // was); an older one is not.
            return session.authenticatedAt.timeIntervalSince1970 < Double(signedInAfter)
        }
        let age = now.timeIntervalSince(session.authenticatedAt)
        if let maxAge, age > Double(maxAge) { return true }
        if let recentWithin, age > Double(recentWithin) { return true }
        return false
    }

    /// This request as a link to come back to after signing in again: `prompt=login` is dropped and a marker saying
    /// "Sesame sent the person to sign in at `now`" is added, MACed so that only Sesame can make one.
    package func returnPath(signedInAfter now: Date, marker: ReturnMarker) -> String {
        var form = FormParameters(Substring(query)).values
        form["prompt"] = nil
        return "/oauth/authorize?" + FormParameters.encode(marker.marked(form, time: Int(now.timeIntervalSince1970)))
    }
}

/// The marker Sesame adds to an authorization request when it sends the person to sign in for it
/// (`sesame_signed_in_after=T&sesame_return_mac=M`): T is when (Unix seconds) and M is
/// `base64url(HMAC-SHA256(key, "T" ‖ 0x0A ‖ the request's other parameters, sorted and form-encoded))` with a key
/// derived from the server secret (HKDF-SHA256, its own `info`). A person can neither make one nor move one to
/// another request (other `state`, `nonce`, `code_challenge`, client or redirect URI); one older than `lifetime` is
/// ignored, so a saved return link does not stand in for a fresh sign-in later.
package struct ReturnMarker: Sendable {
    package static let timeName = "sesame_signed_in_after"
    package static let macName = "sesame_return_mac"
    /// How long after sending the person to sign in the return is taken as that sign-in's.
    package static let lifetime: TimeInterval = 15 * 60

    private let key: SymmetricKey

    package init(serverSecret: [UInt8]) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: serverSecret),
            info: Data("sesame authorization return marker v1".utf8), outputByteCount: 32)
    }

    private func mac(_ rest: [String: String], time: Int) -> [UInt8] {
        let canonical = FormParameters.encode(rest.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        return Array(HMAC<SHA256>.authenticationCode(for: Array("\(time)\n\(canonical)".utf8), using: key))
    }

    /// The request's parameters with a fresh marker for `time`, sorted.
    package func marked(_ values: [String: String], time: Int) -> [(String, String)] {
        var rest = values
        rest[Self.timeName] = nil
        rest[Self.macName] = nil
        var marked = rest
        marked[Self.timeName] = String(time)
        marked[Self.macName] = Base64URL.encode(mac(rest, time: time))
        return marked.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The time of a genuine, unexpired marker in `form`; nil when there is none, or it is forged, moved or old.
    package func verifiedTime(_ form: FormParameters, now: Date) -> Int? {
        guard let text = form[Self.timeName], let time = Int(text), let given = form[Self.macName],
            now.timeIntervalSince1970 - Double(time) <= Self.lifetime
        else { return nil }
        var rest = form.values
        rest[Self.timeName] = nil
        rest[Self.macName] = nil
        let expected = Base64URL.encode(mac(rest, time: time))
        guard ConstantTime.equal(Array(given.utf8), Array(expected.utf8)) else { return nil }
        return time
    }
}

/// The codes of `AuthorizationRequest.PageError`.
package struct AuthorizationPageErrorCode: ServerErrorCode {
    package let name: String
    private init(_ name: String) { self.name = name }
    package var description: String { name }

    /// `client_id` names no registered client.
    package static let unknownClient = AuthorizationPageErrorCode("unknownClient")
    /// `redirect_uri` is not one the client registered: never redirect there.
    package static let unregisteredRedirectURI = AuthorizationPageErrorCode("unregisteredRedirectURI")
}
