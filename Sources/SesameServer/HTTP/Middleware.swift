import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Prometheus metrics: one registry per application, served at `/metrics`.
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    static var requests: MetricNameDescriptor { MetricNameDescriptor(
        namespace: "sesame", subsystem: "http", metricName: "requests", unitName: "total", helpText: "HTTP requests answered"
    ) }
    static var duration: MetricNameDescriptor { MetricNameDescriptor(
        namespace: "sesame", subsystem: "http", metricName: "request_duration", unitName: "seconds", helpText: "Time to answer HTTP requests"
    ) }
    static var authEvents: MetricNameDescriptor { MetricNameDescriptor(
        namespace: "sesame", subsystem: "auth", metricName: "events", unitName: "total", helpText: "Sign-in and account events"
    ) }

    func request(method: String, route: String, status: Int, duration: Duration) {
        let labels = [("method", method), ("route", route), ("status", String(status))]
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: Self.duration, labels: [("route", route)],
            buckets: [.milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5)]
        ).record(duration)
    }

    func auditEvent(kind: String, outcome: String) {
        registry.makeCounter(descriptor: Self.authEvents, labels: [("kind", kind), ("outcome", outcome)]).increment()
    }
}

/// Turns every error into the JSON error shape, counts requests, and adds headers every answer carries.
/// Unexpected errors are logged by type only (their descriptions can contain SQL binds) and answered with 500.
struct ErrorAndMetricsMiddleware: RouterMiddleware {
    typealias Context = SesameRequestContext
    let metrics: ServerMetrics
    let logger: Logger
    /// Known paths and their methods: a known path with another method answers 405, not 404.
    var methods: MethodIndex?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError {
            response = try error.response(from: request, context: context)
        } catch let error as HTTPError {
            let mapped: APIError
            switch error.status {
            case .notFound:
                if let allow = await methods?.allowedMethods(for: request, context: context) {
                    mapped = .methodNotAllowed(allow: allow)
                } else {
                    mapped = .notFound
                }
            case .methodNotAllowed: mapped = APIError(.methodNotAllowed, "method_not_allowed", "This method is not allowed here.")
            case .contentTooLarge: mapped = .bodyTooLarge
            case let status where status.code < 500:
                mapped = APIError(status, "bad_request", "The request is not acceptable.")
            default:
                mapped = .internalError
            }
            response = try mapped.response(from: request, context: context)
        } catch StoreError.undecryptable(let purpose) {
            // A stored secret failed authentication (damaged, moved between rows, or another server secret).
            // Logged by purpose only; the answer says no more than any server error.
            context.logger.error("stored secret failed authentication", metadata: ["purpose": .string(purpose)])
            response = try APIError.internalError.response(from: request, context: context)
        } catch StoreError.unknownSealingKey(let purpose, let keyID) {
            // The value was sealed under a file key this node does not have (key file missing a line).
            context.logger.error(
                "stored secret names a sealing key that is not in the key file",
                metadata: ["purpose": .string(purpose), "key_id": .string(keyID)]
            )
            response = try APIError.internalError.response(from: request, context: context)
        } catch {
            context.logger.error("request failed", metadata: ["error_type": .string(String(describing: type(of: error)))])
            response = try APIError.internalError.response(from: request, context: context)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        response.headers[.init("X-Frame-Options")!] = "DENY"
        // A HEAD answer never has a body; errors (404, 405) built here keep their headers and Content-Length.
        if request.method == .head { response = response.createHeadResponse() }
        let route = context.endpointPath ?? "unmatched"
        let duration = ContinuousClock.now - start
        metrics.request(method: request.method.rawValue, route: route, status: response.status.code, duration: duration)
        // The route pattern, never the raw path or query (paths carry session and credential IDs); no headers.
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue), "route": .string(route), "status": .stringConvertible(response.status.code),
                "ms": .stringConvertible(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000),
                "client": .string(context.clientAddress),
            ]
        )
        return response
    }
}

/// Finds the session (cookie or bearer token), applies the forwarded-address policy, and guards writes:
/// unsafe methods with an `Origin` header from elsewhere are refused (bearer requests excepted), and
/// cookie-authenticated unsafe requests need the `X-CSRF-Token` header that sign-in returned (without it the
/// request is treated as signed out, and endpoints that need a session say why).
struct SessionMiddleware: RouterMiddleware {
    typealias Context = SesameRequestContext
    let sesame: Sesame

    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let configuration = sesame.configuration
        context.clientAddress = ClientAddress.resolve(
            peer: context.peerAddress, forwarded: request.headers[values: Self.forwardedFor],
            trustForwardedFor: configuration.trustForwardedFor, hops: configuration.trustedProxyHops
        )
        let unsafe = ![.get, .head, .options].contains(request.method)
        var carrier: Authentication.Carrier?
        var token: String?
        if let header = request.headers[.authorization] {
            // Anything but a live bearer token leaves the request signed out; endpoints that need a session say so.
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                token = String(parts[1])
            }
            carrier = .bearer
        } else if let cookie = request.cookies[Sessions.cookieName(sesame.configuration)] {
            token = cookie.value
            carrier = .cookie
        }
        let authentication: Authentication? =
            if let token, let carrier { try await Sessions.authenticate(token: token, carrier: carrier, sesame: sesame) } else { nil }
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
                let expected = Sessions.csrfToken(for: authentication.tokenHash, sesame: sesame)
                let given = request.headers[Self.csrfHeader] ?? ""
                csrfOK = Secrets.constantTimeEqual(Array(given.utf8), Array(expected.utf8))
            }
            if csrfOK {
                context.authentication = authentication
                context.logger[metadataKey: "session"] = .string(authentication.session.id)
            } else {
                // Not signed in for this request; endpoints that need a session answer with the CSRF error.
                context.csrfFailed = true
            }
        }
        return try await next(request, context)
    }
}

/// Minimal HTTP POST for the SMS webhook, with a timeout.
enum HTTPPost {
    struct Failed: Error {}

    static func send(url: URL, body: Data) async throws {
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        let (_, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else { throw Failed() }
    }
}
