import Foundation
import HTTPTypes
import Hummingbird
import SesameBytes

/// Finds the session (cookie or bearer token), applies the forwarded-address policy, and guards writes:
/// unsafe methods with an `Origin` header from elsewhere are refused (a live bearer token excepted), and
/// cookie-authenticated unsafe requests need the `X-CSRF-Token` header that sign-in returned (without it the
/// request is treated as signed out, and routes that need a session say why).
package struct SessionMiddleware: RouterMiddleware {
    package typealias Context = SesameRequestContext
    package let configuration: ServerConfiguration
    package let cookies: Cookies
    package let sessions: SessionIssuer
    package let clock: ServerClock

    package init(configuration: ServerConfiguration, cookies: Cookies, sessions: SessionIssuer, clock: ServerClock) {
        self.configuration = configuration
        self.cookies = cookies
        self.sessions = sessions
        self.clock = clock
    }

    package static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    package static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        context.clientAddress = ClientAddress.resolve(
            peer: context.peerAddress, forwarded: request.headers[values: Self.forwardedFor],
            trustForwardedFor: configuration.trustForwardedFor, hops: configuration.trustedProxyHops
        )
        context.acceptLanguage = request.headers[.acceptLanguage]
        context.reauthenticationWindow = configuration.reauthenticationWindow
        let unsafe = ![.get, .head, .options].contains(request.method)
        var carrier: Authentication.Carrier?
        var token: String?
        if let header = request.headers[.authorization] {
            // Anything but a live bearer token leaves the request signed out; routes that need a session say so.
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                token = String(parts[1])
            }
            carrier = .bearer
        } else if let cookie = request.cookies[cookies.sessionName] {
            token = cookie.value
            carrier = .cookie
        }
        let authentication: Authentication? =
            if let token, let carrier {
                try await sessions.authenticate(token: token, carrier: carrier, allowingLimited: true)
            } else {
                nil
            }
        // A write from a page of another origin is refused. Only a request that authenticates with a live bearer
        // token is exempt (native apps send no Origin, or one that is not a web origin of ours); an Authorization
        // header alone, valid or not, exempts nothing.
        if unsafe, let origin = request.headers[.origin], !(carrier == .bearer && authentication != nil) {
            guard configuration.allowedWebOrigins.contains(where: { $0.lowercased() == origin.lowercased() }) else {
                throw APIError.originNotAllowed
            }
        }
        if let authentication, let carrier {
            var csrfOK = true
            if unsafe, carrier == .cookie {
                let expected = sessions.csrfToken(for: authentication.tokenHash)
                let given = request.headers[Self.csrfHeader] ?? ""
                csrfOK = ConstantTime.equal(Array(given.utf8), Array(expected.utf8))
            }
            if csrfOK, authentication.limitation != nil {
                // Only the contexts that take a limited session see it; it is never recent (never re-authentication).
                context.limitedAuthentication = authentication
                context.logger[metadataKey: "session"] = .string(authentication.session.id)
            } else if csrfOK {
                context.authentication = authentication
                context.authenticatedRecently =
                    clock.now().timeIntervalSince(authentication.session.authenticatedAt)
                    <= TimeInterval(configuration.reauthenticationWindow)
                context.logger[metadataKey: "session"] = .string(authentication.session.id)
            } else {
                // Not signed in for this request; routes that need a session answer with the CSRF error.
                context.csrfFailed = true
            }
        }
        return try await next(request, context)
    }
}
