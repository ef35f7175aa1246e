import Foundation
import HTTPTypes
import Hummingbird
import SesameBytes

/// What an admin caller may touch: a word each feature declares for its part of the admin API (`people`,
/// `groups`, …). A console session holds every scope; an admin API token only those it was made with.
package struct AdminScope: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let rawValue: String
    package init(_ rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }
    package static func < (a: AdminScope, b: AdminScope) -> Bool { a.rawValue < b.rawValue }
}

/// Who is acting through the admin API or the console, as the gate (`AdminGate`) found them.
package struct AdminPrincipal: Sendable {
    package enum Via: Sendable {
        /// A member of the administrators' group, signed in with a passkey recently (the console, or the API with
        /// that session's cookie or bearer token).
        case session(Authentication)
        /// An admin API token (`sesame admin-tokens create`): its public id and name, for the audit log.
        case token(id: String, name: String)
    }

    package let via: Via
    /// The scopes held; nil for a session, which holds them all.
    package let scopes: Set<AdminScope>?

    package init(via: Via, scopes: Set<AdminScope>?) {
        self.via = via
        self.scopes = scopes
    }

    /// The administrator's account when a person acts; nil for a token.
    package var user: User? {
        if case .session(let authentication) = via { return authentication.user }
        return nil
    }

    /// The actor as the audit log names it: `admin <username>` or `token <name> (<id>)`.
    package var actor: String {
        switch via {
        case .session(let authentication): "admin \(authentication.user.username)"
        case .token(let id, let name): "token \(name) (\(id))"
        }
    }

    package func holds(_ scope: AdminScope) -> Bool { scopes?.contains(scope) ?? true }

    /// 403 `admin_scope_missing` unless the principal holds `scope`.
    package func require(_ scope: AdminScope) throws {
        guard holds(scope) else {
            throw APIError(.forbidden, .adminScopeMissing, "This admin token does not hold the scope \(scope).")
        }
    }
}

/// Admin API tokens as the gate checks them: the token feature answers whether a bearer value is a live token and
/// with which scopes (nil: not an admin token, so the request falls back to its session).
package protocol AdminTokenCheck: Sendable {
    /// Whether a bearer value has the shape of an admin token (so a session token is never looked up there).
    func looksLikeAdminToken(_ value: String) -> Bool
    /// The token's principal, or an `APIError` (expired, revoked, unknown: one answer, 401 `unauthenticated`;
    /// too many tries from this address: 429).
    func principal(token: String, clientAddress: String) async throws -> AdminPrincipal
}

/// No admin tokens: every bearer value is a session's.
package struct NoAdminTokens: AdminTokenCheck {
    package init() {}
    package func looksLikeAdminToken(_ value: String) -> Bool { false }
    package func principal(token: String, clientAddress: String) async throws -> AdminPrincipal {
        throw APIError.unauthenticated
    }
}

/// The one rule of who may use the admin API and the console. A person: a full session, signed in (or
/// re-authenticated) with a passkey (`acr` `phr`) within `window` seconds, a member of `adminGroup` (read at every
/// request, so taking someone out ends their access at once); with a cookie, unsafe requests also carry the
/// console's own CSRF token (`X-Console-CSRF`, `consoleCSRFToken`) besides the session's. Or an admin API token.
package struct AdminGate: Sendable {
    package let adminGroup: String
    package let window: Int
    package let groups: any AccountGroups
    package let tokens: any AdminTokenCheck
    package let sessions: SessionIssuer
    package let clock: ServerClock

    package init(
        adminGroup: String, window: Int, groups: any AccountGroups, tokens: any AdminTokenCheck,
        sessions: SessionIssuer, clock: ServerClock
    ) {
        self.adminGroup = adminGroup
        self.window = window
        self.groups = groups
        self.tokens = tokens
        self.sessions = sessions
        self.clock = clock
    }

    package static let csrfHeader = HTTPField.Name("X-Console-CSRF")!

    /// The console's CSRF token for a session: a MAC of its token hash under a key of its own, so the account
    /// pages' token is not the console's.
    package func consoleCSRFToken(for tokenHash: [UInt8]) -> String {
        sessions.csrfToken(for: Array("console".utf8) + tokenHash)
    }

    /// Whether a session method is a passkey sign-in (`acr` `phr`).
    package static func isPasskey(_ method: String) -> Bool {
        method == SessionMethod.passkey.rawValue || method == SessionMethod.passkeyPresence.rawValue
    }

    /// The principal of a request, or the `APIError` that says why not.
    package func principal(_ request: Request, context: SesameRequestContext) async throws -> AdminPrincipal {
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer", tokens.looksLikeAdminToken(String(parts[1])) {
                return try await tokens.principal(token: String(parts[1]), clientAddress: context.clientAddress)
            }
        }
        guard let authentication = context.authentication else {
            throw context.csrfFailed
                ? APIError.csrf
                : context.limitedAuthentication != nil ? APIError.sessionLimited : APIError.unauthenticated
        }
        guard try await groups.groupSlugs(userID: authentication.user.id).contains(adminGroup) else {
            throw APIError(.forbidden, .notAnAdmin, "Only members of the administrators' group may do this.")
        }
        guard Self.isPasskey(authentication.session.method) else {
            throw APIError(
                .forbidden, .passkeyRequired, "The console needs a sign-in with a passkey; confirm it is you with one.")
        }
        guard clock.now().timeIntervalSince(authentication.session.authenticatedAt) <= TimeInterval(window) else {
            throw APIError.reauthenticationRequired(window: window)
        }
        if authentication.carrier == .cookie, ![.get, .head, .options].contains(request.method) {
            let given = request.headers[Self.csrfHeader] ?? ""
            let expected = consoleCSRFToken(for: authentication.tokenHash)
            guard ConstantTime.equal(Array(given.utf8), Array(expected.utf8)) else { throw APIError.csrf }
        }
        return AdminPrincipal(via: .session(authentication), scopes: nil)
    }
}

/// Runs the gate for the routes it wraps (`/api/admin`, `/console`): the principal, or the refusal, goes into the
/// context; `AdminRequestContext` takes the first and throws the second. Every answer is `no-store`.
package struct AdminMiddleware: RouterMiddleware {
    package typealias Context = SesameRequestContext
    package let gate: AdminGate

    package init(gate: AdminGate) { self.gate = gate }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var context = context
        do {
            context.admin = try await gate.principal(request, context: context)
        } catch let error as APIError {
            context.adminRefusal = error
        }
        // Errors are `no-store` already (`ServerError`).
        var response = try await next(request, context)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// The context of admin routes: the gate let the caller in (`AdminGate`), else its refusal is thrown.
package struct AdminRequestContext: ChildRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let admin: AdminPrincipal
    package let clientAddress: String
    package let acceptLanguage: String?

    package init(context: SesameRequestContext) throws {
        guard let admin = context.admin else { throw context.adminRefusal ?? APIError.unauthenticated }
        self.coreContext = context.coreContext
        self.admin = admin
        self.clientAddress = context.clientAddress
        self.acceptLanguage = context.acceptLanguage
    }

    package var maxUploadSize: Int { SesameRequestDecoder.maxBytes }
    package var requestDecoder: SesameRequestDecoder { SesameRequestDecoder() }
    package var responseEncoder: SesameResponseEncoder { SesameResponseEncoder() }
}

extension AdminRequestContext: ClientContext {}

/// Who makes an operator's change: an operator at the command line (client address `cli`), or an admin through
/// the admin API or the console (their principal and address). Every such change is an audit event that names
/// them, written by `event` alone.
package enum AdminActor: Sendable {
    case commandLine
    case admin(AdminPrincipal, clientAddress: String)

    /// The audit event of a change: about `subject` (the account changed; for a change to no account, the admin
    /// who made it), with `detail`, plus ` by <actor>` for an admin; `client`, the app the change concerns, if any.
    package func event(
        _ kind: AuditKind, _ outcome: AuditOutcome = .success, subject: User?, detail: String, at: Date,
        client: String? = nil
    ) -> AuditEvent {
        switch self {
        case .commandLine:
            var event = AuditEvent.byOperator(kind, outcome, user: subject, detail: detail)
            event.at = at
            event.clientID = client
            return event
        case .admin(let principal, let address):
            let about = subject ?? principal.user
            return AuditEvent(
                at: at, kind: kind.rawValue, outcome: outcome.rawValue, userID: about?.id, username: about?.username,
                clientAddress: address,
                detail: detail.isEmpty ? "by \(principal.actor)" : "\(detail) by \(principal.actor)", clientID: client)
        }
    }
}

extension AdminRequestContext {
    /// The actor of this request's changes.
    package var actor: AdminActor { .admin(admin, clientAddress: clientAddress) }
}
