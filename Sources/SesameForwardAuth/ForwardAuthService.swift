import Foundation
import HTTPTypes
import Hummingbird
import WebAuthn
import SesameCore
import SesameIdentityProvider

/// Forward auth's rules (docs/integrations.md): which hosts Sesame answers for, which need a passkey, which session a
/// proxied request carries, where a signed-out person is sent, and the one-time code that carries a session to an
/// app on another domain.
///
/// The flow for an app on another domain than Sesame's cookie reaches:
/// 1. The proxy asks `GET /forward-auth` with the `X-Forwarded-*` headers; without a session the answer sends the
///    person to `<app origin>/_sesame/callback?rd=<the address they asked for>`, which the app's proxy forwards to
///    `GET /forward-auth/callback`: it sets a random state cookie on the app's host (`sesame_forward_state`,
///    path-scoped to the callback, as long as a challenge lives) and sends the person to
///    `/forward-auth/return?rd=…&state=<SHA-256 of the state>` on Sesame.
/// 2. There, signed in (else sent to `/signin` first, and back), Sesame makes a one-time code (32 random bytes,
///    stored as its SHA-256 with the session's token hash and the address, bound to the app's origin and the state
///    hash, 60 seconds, consumed once) and redirects to `<app origin>/_sesame/callback?code=…`.
/// 3. The callback consumes the code for the origin in `X-Forwarded-Proto`/`X-Forwarded-Host` and the state cookie
///    the browser sends there, sets the host-only `sesame_forward` cookie (`ForwardAuthCookie`), clears the state
///    and redirects to the address, without the code. The code is dead after that one use; a code made for another
///    browser (someone pushing their own sign-in on you) finds no matching state.
/// Apps under `cookieDomain` skip all this: Sesame's own session cookie reaches them, and the check sends people to
/// the return endpoint directly.
package struct ForwardAuthService: Sendable {
    package let configuration: ServerConfiguration
    package let sessions: SessionIssuer
    package let ceremonies: Ceremonies
    package let cookieSealer: ForwardAuthCookie
    package let clock: ServerClock
    package let audit: AuditLog
    /// The second factors the server declares, for `Remote-Amr`.
    package let factors: [Factor]
    /// The checked `forwardAuthRules`.
    package let rules: ForwardAuthRules
    /// Membership for the `groups` policy and `Remote-Groups`, read at every check.
    package let groups: any AccountGroups

    /// The path on the app's host that its proxy forwards to `/forward-auth/callback`.
    package static let callbackPath = "/_sesame/callback"
    package static let codeLifetime: TimeInterval = 60

    package static let remoteUser = HTTPField.Name("Remote-User")!
    package static let remoteName = HTTPField.Name("Remote-Name")!
    package static let remoteAmr = HTTPField.Name("Remote-Amr")!
    /// The account's verified email address; never sent for an unverified one. (Addresses are printable ASCII
    /// without spaces or line breaks: `EmailAddresses.validate`.)
    package static let remoteEmail = HTTPField.Name("Remote-Email")!
    /// The slugs of the account's groups, comma-separated, sorted.
    package static let remoteGroups = HTTPField.Name("Remote-Groups")!

    package init(_ sesame: ServerCore) {
        configuration = sesame.configuration
        sessions = sesame.sessions
        ceremonies = sesame.ceremonies
        cookieSealer = ForwardAuthCookie(serverSecret: sesame.serverSecret)
        clock = sesame.clock
        audit = sesame.audit
        factors = sesame.factors
        groups = sesame.accountGroups
        // Checked at start (`validateForwardAuth`); a configuration that skipped the check and fails it lets no one by.
        rules =
            (try? ForwardAuthRules(
                sesame.configuration.forwardAuthRules, domains: sesame.configuration.forwardAuthDomains))
            ?? .refuseAll
    }

    // MARK: Rules

    /// A target Sesame answers for: its host is within `forwardAuthDomains`, and it is on https unless Sesame itself
    /// is served over plain http (development).
    package func accepts(_ target: ForwardTarget) -> Bool {
        (target.scheme == "https" || !configuration.isSecureOrigin)
            && configuration.forwardAuthDomains.contains { DomainName.covers($0, host: target.host) }
    }

    /// The rule that decides at the target (`ForwardAuthRules.match`).
    package func rule(_ target: ForwardTarget) -> ForwardAuthRules.Match {
        rules.match(host: target.host, path: target.path)
    }

    /// Whether the target needs a passkey sign-in: its host is in `forwardAuthPasskeyDomains`, or the rule that
    /// decides there has the `passkey` policy.
    package func demandsPasskey(_ target: ForwardTarget) -> Bool {
        if configuration.forwardAuthPasskeyDomains.contains(where: { DomainName.covers($0, host: target.host) }) {
            return true
        }
        if case .rule(let rule) = rule(target) { return rule.policy == .passkey }
        return false
    }

    /// What a check comes to once the session that may pass is known (`admittedSession`, which has applied the
    /// passkey requirement): the groups of a signed-in person (for the `groups` policy and `Remote-Groups`), read
    /// from the store now, so a removal counts at the next check on every node.
    package enum Decision: Sendable, Equatable {
        case pass(groups: [String])
        case signIn
        case denied
    }

    package func decide(_ match: ForwardAuthRules.Match, _ authentication: Authentication?) async throws -> Decision {
        try await decide(match, userID: authentication?.user.id)
    }

    /// `decide` for an account by its id (nil: no one signed in); the admin API's rule test asks this too.
    package func decide(_ match: ForwardAuthRules.Match, userID: String?) async throws -> Decision {
        switch match {
        case .refused: return .denied
        case .rule(let rule) where rule.policy == .nobody: return .denied
        default: break
        }
        guard let userID else { return .signIn }
        let slugs = try await groups.groupSlugs(userID: userID)
        if case .rule(let rule) = match, rule.policy == .groups, !rule.groups.contains(where: slugs.contains) {
            return .denied
        }
        return .pass(groups: slugs)
    }

    /// Whether a session may pass at this target: any session, or at a passkey-only host one that signed in with
    /// a passkey (`acr` `phr` as the identity provider states it).
    package func admits(_ session: SessionRecord, at target: ForwardTarget) -> Bool {
        !demandsPasskey(target) || IDTokenClaims.acr(session.method) == "phr"
    }

    /// Whether Sesame's own session cookie reaches the target's host (`cookieDomain`), so no code exchange is needed.
    package func sharesCookie(_ target: ForwardTarget) -> Bool {
        guard let domain = configuration.cookieDomain else { return false }
        return DomainName.covers(domain, host: target.host)
    }

    /// Whether a browser sends Sesame's session cookie to the target's host: under the cookie domain, or Sesame's
    /// own host. Elsewhere that cookie is not read (a proxy cannot lend it to a host it never reaches).
    package func receivesSessionCookie(_ target: ForwardTarget) -> Bool {
        sharesCookie(target) || URLComponents(string: configuration.origin)?.host?.lowercased() == target.host
    }

    // MARK: The check

    /// The session a proxied request carries for `target` that may pass there: Sesame's session cookie (under a
    /// `cookieDomain`) or the sealed `sesame_forward` cookie made for this origin. An `Authorization` header is the
    /// app's own business and is ignored.
    package func admittedSession(_ request: Request, at target: ForwardTarget) async throws -> Authentication? {
        if receivesSessionCookie(target), let token = request.cookies[sessions.cookies.sessionName]?.value,
            let authentication = try await sessions.authenticate(token: token, carrier: .cookie),
            admits(authentication.session, at: target)
        {
            return authentication
        }
        let name = Cookies.forwardName(secure: target.scheme == "https")
        if let value = request.cookies[name]?.value,
            let hash = cookieSealer.open(value, origin: target.origin),
            let authentication = try await sessions.authenticate(tokenHash: hash, carrier: .cookie),
            admits(authentication.session, at: target)
        {
            return authentication
        }
        return nil
    }

    /// The identity headers a passing check answers with. `Remote-Amr` lists the RFC 8176 methods the identity
    /// provider's ID tokens state for this session, comma-separated. Control characters in the display name become
    /// spaces.
    /// Every identity header is always sent (empty when there is nothing to say), so a proxy that copies them
    /// replaces any header of the same name the client sent.
    package func identityHeaders(_ authentication: Authentication, groups: [String] = [], email: String? = nil)
        -> HTTPFields
    {
        let name = String(
            authentication.user.displayName.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }
                .map(Character.init))
        return [
            Self.remoteUser: authentication.user.username, Self.remoteName: name,
            Self.remoteEmail: email ?? "", Self.remoteGroups: groups.joined(separator: ","),
            Self.remoteAmr: IDTokenClaims.amr(
                authentication.session.method, passkeyBackupEligible: authentication.session.passkeyBackupEligible,
                factors: factors
            ).joined(separator: ","),
            .cacheControl: "no-store",
        ]
    }

    /// Where a person without a session (or without the passkey the host needs) goes: under the cookie domain,
    /// Sesame's return endpoint; else the callback on the app's own host, which starts the code exchange.
    package func signInLocation(_ target: ForwardTarget) -> String {
        if sharesCookie(target) { return configuration.origin + returnPath(target, state: nil) }
        return target.origin + Self.callbackPath + "?" + FormParameters.encode([("rd", target.url)])
    }

    package func returnPath(_ target: ForwardTarget, state: String?) -> String {
        var pairs = [("rd", target.url)]
        if let state { pairs.append(("state", state)) }
        return "/forward-auth/return?" + FormParameters.encode(pairs)
    }

    /// Sesame's sign-in page, coming back to the return endpoint; asking for a passkey where the host needs one.
    package func signInPage(_ target: ForwardTarget, state: String?) -> String {
        var page = "/signin?" + FormParameters.encode([("return", returnPath(target, state: state))])
        if demandsPasskey(target) { page += "&passkey=required" }
        return page
    }

    // MARK: The code exchange

    package struct CodePayload: Codable, Sendable {
        /// The session's token hash, base64url.
        package let session: String
        /// The address to go on to after the callback.
        package let rd: String
    }

    package static func codeBinding(origin: String, state: String) -> [UInt8] {
        Secrets.sha256(Array("forward-auth:".utf8) + Array(origin.utf8) + [0] + Array(state.utf8))
    }

    /// Step 1 at the app's host: `rd` must be on the origin the proxy names. Returns the state cookie to set there
    /// and the address on Sesame to go to.
    package func start(rd: String, at origin: ForwardTarget) throws -> (setCookie: String, location: String) {
        guard let target = ForwardTarget(url: rd), target.origin == origin.origin, accepts(target) else {
            throw APIError.hostNotAllowed
        }
        let (state, hash) = Secrets.token()
        let secure = target.scheme == "https"
        return (
            Cookies.forwardState(state, secure: secure, path: Self.callbackPath, maxAge: ceremonies.lifetime),
            configuration.origin + returnPath(target, state: Base64URL.encode(hash))
        )
    }

    /// A one-time code for `authentication`'s session at `target`'s origin and the browser holding `state`, and the
    /// callback address carrying it. Each code counts against the client address's ceremony budget (429 past it),
    /// like every other stored challenge a client can ask for.
    package func callback(
        for target: ForwardTarget, state: String, _ authentication: Authentication, clientAddress: String
    ) async throws -> String {
        let (code, hash) = Secrets.token()
        try await ceremonies.begin(
            .forwardAuthCode, id: hash, binding: Self.codeBinding(origin: target.origin, state: state),
            userID: authentication.user.id,
            payload: CodePayload(session: Base64URL.encode(authentication.tokenHash), rd: target.url),
            countedFor: clientAddress, lifetime: Self.codeLifetime)
        return target.origin + Self.callbackPath + "?" + FormParameters.encode([("code", code)])
    }

    /// Consumes a code at the origin the proxy names and returns the cookie to set there and where to go on to.
    /// Unknown, spent, expired and foreign codes are all `challenge_invalid` (and a code presented with the wrong
    /// or no state is burnt); a code whose session ended since is `unauthenticated`.
    package func redeem(code: String, state: String?, at origin: ForwardTarget, clientAddress: String) async throws -> (
        setCookies: [String], location: String
    ) {
        guard SessionIssuer.isWellFormed(code) else { throw APIError.challengeInvalid }
        let id = Secrets.sha256(code)
        // A code that reaches a browser without its state (a code made for someone else's state, pushed on this
        // browser) is burnt: whoever holds that state cannot use it after this browser saw it.
        guard let state, SessionIssuer.isWellFormed(state) else {
            try await ceremonies.discard(id: id)
            throw APIError.challengeInvalid
        }
        let record: ChallengeRecord
        do {
            record = try await ceremonies.finish(
                .forwardAuthCode, id: id,
                binding: Self.codeBinding(origin: origin.origin, state: Base64URL.encode(Secrets.sha256(state))))
        } catch {
            try await ceremonies.discard(id: id)
            throw error
        }
        let payload = try ceremonies.payload(record, as: CodePayload.self)
        guard let hash = try? Base64URL.decode(payload.session), let target = ForwardTarget(url: payload.rd),
            target.origin == origin.origin
        else { throw APIError.challengeInvalid }
        guard let authentication = try await sessions.authenticate(tokenHash: hash, carrier: .cookie),
            admits(authentication.session, at: target)
        else { throw APIError.unauthenticated }
        let maxAge = max(0, Int(authentication.session.expiresAt.timeIntervalSince(clock.now())))
        let value = try cookieSealer.seal(tokenHash: hash, origin: target.origin)
        await audit.record(
            .forwardAuthSignedIn, .success, user: authentication.user, clientAddress: clientAddress,
            detail: target.origin)
        let secure = target.scheme == "https"
        return (
            [
                Cookies.forward(value, secure: secure, maxAge: maxAge),
                Cookies.forwardState("", secure: secure, path: Self.callbackPath, maxAge: 0),
            ], target.url
        )
    }
}
