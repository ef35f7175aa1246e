import Foundation

/// An authorization request (OpenID Connect Core 1.0 §3.1.2.1), checked in the order the specification sets:
/// first the client and redirect URI, whose failures are shown on Sesame's own page and never redirected (an
/// unknown client or URI must not turn Sesame into an open redirector); then everything else, whose failures go
/// back to the client's redirect URI with `error`, `state` and `iss` (RFC 9207).
struct AuthorizationRequest: Sendable {
    let client: OAuthClient
    let redirectURI: String
    let state: String?
    let scopes: [String]
    let nonce: String?
    let codeChallenge: String
    let prompts: Set<String>
    let maxAge: Int?
    let loginHint: String?
    let acrValues: [String]
    /// Set by Sesame when it sends the person to sign in again (`prompt=login`, `max_age`): the sign-in must be
    /// newer than this (Unix seconds). A person can only make it stricter by editing it.
    let signedInAfter: Int?
    /// The query as received, to come back to after signing in or consenting.
    let query: String

    var scope: String { scopes.joined(separator: " ") }
    var wantsPasskey: Bool { acrValues.contains("phr") }

    static let supportedScopes = ["openid", "profile", "offline_access"]

    /// A failure shown on Sesame's page (no redirect).
    struct PageError: Error { let message: String }

    /// A failure sent back to the client.
    struct RedirectError: Error {
        let code: OAuthErrorCode
        let description: String
        let redirectURI: String
        let state: String?
    }

    static func parse(_ form: FormParameters, query: String, store: any Store) async throws -> AuthorizationRequest {
        guard let clientID = form["client_id"], clientID.count <= 128, !form.repeated.contains("client_id"),
            let client = try await store.client(id: clientID)
        else { throw PageError(message: "This sign-in link names an application this site does not know.") }
        guard let redirectURI = form["redirect_uri"], !form.repeated.contains("redirect_uri"),
            ClientRegistry.matches(redirectURI, client: client)
        else {
            throw PageError(message: "This sign-in link would send you to an address the application did not register.")
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
        guard challenge.count == 43, challenge.utf8.allSatisfy(Self.isBase64URL) else {
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
            signedInAfter: form["sesame_signed_in_after"].flatMap(Int.init), query: query
        )
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F
    }

    /// Whether a session satisfies the request's freshness and strength, or the person must sign in again.
    func needsSignIn(_ session: SessionRecord?, now: Date) -> Bool {
        guard let session else { return true }
        if let signedInAfter, session.authenticatedAt.timeIntervalSince1970 < Double(signedInAfter) { return true }
        if let maxAge, now.timeIntervalSince(session.authenticatedAt) > Double(maxAge) { return true }
        if wantsPasskey, !IDTokenClaims.isPasskey(session.method) { return true }
        return false
    }

    /// This request as a link to come back to after signing in again: `prompt=login` becomes "signed in after now",
    /// so the return does not ask again.
    func returnPath(signedInAfter now: Date, forceFresh: Bool) -> String {
        var form = FormParameters(Substring(query)).values
        if forceFresh {
            form["prompt"] = nil
            form["sesame_signed_in_after"] = String(Int(now.timeIntervalSince1970))
        }
        return "/oauth/authorize?" + FormParameters.encode(form.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }
}
