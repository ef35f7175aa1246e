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
    /// Set by `SessionMiddleware`.
    package var authentication: Authentication?
    /// A session cookie came with an unsafe request but without the right CSRF token.
    package var csrfFailed = false
    /// Whether the session's holder signed in or re-authenticated within the configured window (`SessionMiddleware`).
    package var authenticatedRecently = false
    /// The re-authentication window, in seconds, for the error that asks for it.
    package var reauthenticationWindow = 0
    /// Client address after the `X-Forwarded-For` policy; set by `SessionMiddleware`.
    package var clientAddress: String

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
}

/// The context of routes that need a session: made from the parent context when the route matches, or 401
/// `unauthenticated` (403 `csrf_check_failed` when a cookie came without its CSRF token).
package struct SignedInRequestContext: ChildRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let authentication: Authentication
    package let clientAddress: String

    package init(context: SesameRequestContext) throws {
        guard let authentication = context.authentication else {
            throw context.csrfFailed ? APIError.csrf : APIError.unauthenticated
        }
        self.coreContext = context.coreContext
        self.authentication = authentication
        self.clientAddress = context.clientAddress
    }

    package var user: User { authentication.user }
    package var maxUploadSize: Int { SesameRequestDecoder.maxBytes }
    package var requestDecoder: SesameRequestDecoder { SesameRequestDecoder() }
    package var responseEncoder: SesameResponseEncoder { SesameResponseEncoder() }
}

/// The context of sensitive changes (ways in and second factors): a session whose holder signed in or
/// re-authenticated within `reauthenticationWindow` seconds, else 403 `reauthentication_required`.
package struct RecentlySignedInRequestContext: ChildRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let authentication: Authentication
    package let clientAddress: String

    package init(context: SesameRequestContext) throws {
        let signedIn = try SignedInRequestContext(context: context)
        guard context.authenticatedRecently else {
            throw APIError.reauthenticationRequired(window: context.reauthenticationWindow)
        }
        self.coreContext = signedIn.coreContext
        self.authentication = signedIn.authentication
        self.clientAddress = signedIn.clientAddress
    }

    package var user: User { authentication.user }
    package var maxUploadSize: Int { SesameRequestDecoder.maxBytes }
    package var requestDecoder: SesameRequestDecoder { SesameRequestDecoder() }
    package var responseEncoder: SesameResponseEncoder { SesameResponseEncoder() }
}

/// What handlers read from any of the three contexts.
package protocol ClientContext: RequestContext {
    var clientAddress: String { get }
}

extension SesameRequestContext: ClientContext {}
extension SignedInRequestContext: ClientContext {}
extension RecentlySignedInRequestContext: ClientContext {}
