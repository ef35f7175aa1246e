import Foundation
import Hummingbird
import Logging
import NIOCore

/// Per-request state: the client address (for rate limits and audit) and, once `SessionMiddleware` ran, who is
/// signed in and how. Routes that need a session take ``SignedInRequestContext`` or
/// ``RecentlySignedInRequestContext`` (child contexts made from this one), so a handler never checks by hand.
public struct SesameRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address, or `unknown` (in-process tests have no socket).
    public let peerAddress: String
    /// Set by `SessionMiddleware`: a full session. A limited one (`SessionLimitation`) is never here, so every route
    /// that reads this, or takes a child context made from it, sees no session.
    package var authentication: Authentication?
    /// Set by `SessionMiddleware` for a limited session: only `LimitedSessionRequestContext` and
    /// `PasskeyEnrolmentRequestContext` take it.
    package var limitedAuthentication: Authentication?
    /// A session cookie came with an unsafe request but without the right CSRF token.
    package var csrfFailed = false
    /// Whether the session's holder signed in or re-authenticated within the configured window (`SessionMiddleware`).
    package var authenticatedRecently = false
    /// The re-authentication window, in seconds, for the error that asks for it.
    package var reauthenticationWindow = 0
    /// Client address after the `X-Forwarded-For` policy; set by `SessionMiddleware`.
    package var clientAddress: String
    /// The request's `Accept-Language`, for what a change writes to the person outside its answer (a notice, a text
    /// message) when they saved no language of their own; set by `SessionMiddleware`.
    package var acceptLanguage: String?
    /// Set by `AdminMiddleware` on the admin routes: who the gate let in, or why it did not.
    package var admin: AdminPrincipal?
    package var adminRefusal: APIError?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        self.clientAddress = self.peerAddress
        self.authentication = nil
    }

    /// Request bodies are read by ``SesameRequestDecoder`` with its own smaller limit.
    public var maxUploadSize: Int { SesameRequestDecoder.maxBytes }
    public var requestDecoder: SesameRequestDecoder { SesameRequestDecoder() }
    public var responseEncoder: SesameResponseEncoder { SesameResponseEncoder() }
}

/// A signed-in request.
package struct Authentication: Sendable {
    package enum Carrier: Sendable { case cookie, bearer }
    package let session: SessionRecord
    package let tokenHash: [UInt8]
    package let user: User
    package let carrier: Carrier

    /// What the session is limited to; nil for a full session.
    package var limitation: SessionLimitation? {
        session.limitation.map { SessionLimitation(rawValue: $0) ?? .unknown }
    }
}

/// What a limited session may do: never sign in elsewhere (the identity provider, forward auth), never a sensitive
/// change, never re-authentication; only the routes whose context takes it (`LimitedSessionRequestContext`,
/// `PasskeyEnrolmentRequestContext`): view the account and its passkeys, add a passkey or security key, sign out.
/// Every other route that needs a session answers 403 `session_limited`.
package enum SessionLimitation: String, Sendable {
    /// Signed in with a code mailed to the verified address (recovery by email).
    case emailRecovery = "email_recovery"
    /// A limitation this version does not know (written by a newer one): as limited as can be.
    case unknown
}

/// The context of routes that need a session: made from the parent context when the route matches, or 401
/// `unauthenticated` (403 `csrf_check_failed` when a cookie came without its CSRF token).
package struct SignedInRequestContext: SessionRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let authentication: Authentication
    package let clientAddress: String
    package let acceptLanguage: String?

    package init(context: SesameRequestContext) throws {
        guard let authentication = context.authentication else {
            throw context.csrfFailed
                ? APIError.csrf
                : context.limitedAuthentication != nil ? APIError.sessionLimited : APIError.unauthenticated
        }
        self.coreContext = context.coreContext
        self.authentication = authentication
        self.clientAddress = context.clientAddress
        self.acceptLanguage = context.acceptLanguage
    }

}

/// The context of sensitive changes (ways in and second factors): a session whose holder signed in or
/// re-authenticated within `reauthenticationWindow` seconds, else 403 `reauthentication_required`.
package struct RecentlySignedInRequestContext: SessionRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let authentication: Authentication
    package let clientAddress: String
    package let acceptLanguage: String?

    package init(context: SesameRequestContext) throws {
        let signedIn = try SignedInRequestContext(context: context)
        guard context.authenticatedRecently else {
            throw APIError.reauthenticationRequired(window: context.reauthenticationWindow)
        }
        self.coreContext = signedIn.coreContext
        self.authentication = signedIn.authentication
        self.clientAddress = signedIn.clientAddress
        self.acceptLanguage = signedIn.acceptLanguage
    }

}

/// The context of the few routes a limited session may use as well as a full one: viewing the account and its
/// passkeys, finishing a passkey's registration, signing out.
package struct LimitedSessionRequestContext: SessionRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let authentication: Authentication
    package let clientAddress: String
    package let acceptLanguage: String?

    package init(context: SesameRequestContext) throws {
        guard let authentication = context.authentication ?? context.limitedAuthentication else {
            throw context.csrfFailed ? APIError.csrf : APIError.unauthenticated
        }
        self.coreContext = context.coreContext
        self.authentication = authentication
        self.clientAddress = context.clientAddress
        self.acceptLanguage = context.acceptLanguage
    }

}

/// The context of starting a passkey's registration on the account: a full session that signed in recently (as
/// `RecentlySignedInRequestContext`), or a limited session from recovery by email, which exists to do exactly this.
package struct PasskeyEnrolmentRequestContext: SessionRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let authentication: Authentication
    package let clientAddress: String
    package let acceptLanguage: String?

    package init(context: SesameRequestContext) throws {
        if let limited = context.limitedAuthentication, limited.limitation == .emailRecovery {
            self.coreContext = context.coreContext
            self.authentication = limited
            self.clientAddress = context.clientAddress
            self.acceptLanguage = context.acceptLanguage
            return
        }
        let recent = try RecentlySignedInRequestContext(context: context)
        self.coreContext = recent.coreContext
        self.authentication = recent.authentication
        self.clientAddress = recent.clientAddress
        self.acceptLanguage = recent.acceptLanguage
    }

}

/// What handlers read from any of the contexts.
package protocol ClientContext: RequestContext {
    var clientAddress: String { get }
    /// The request's `Accept-Language` (`SesameRequestContext.acceptLanguage`).
    var acceptLanguage: String? { get }
}

extension SesameRequestContext: ClientContext {}
extension SignedInRequestContext: ClientContext {}
extension RecentlySignedInRequestContext: ClientContext {}
extension LimitedSessionRequestContext: ClientContext {}
extension PasskeyEnrolmentRequestContext: ClientContext {}

/// A child context of a route that acts for a session's holder (`SignedInRequestContext` and its kin): the session
/// and the person it was given to, with the server's request decoder, response encoder and body limit, written once.
package protocol SessionRequestContext: ChildRequestContext
where Decoder == SesameRequestDecoder, Encoder == SesameResponseEncoder {
    var authentication: Authentication { get }
}

extension SessionRequestContext {
    package var user: User { authentication.user }
    package var maxUploadSize: Int { SesameRequestDecoder.maxBytes }
    package var requestDecoder: SesameRequestDecoder { SesameRequestDecoder() }
    package var responseEncoder: SesameResponseEncoder { SesameResponseEncoder() }
}
