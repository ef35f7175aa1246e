import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `GET /metrics`: the Prometheus text of the application's registry.
///
/// It is not public. On the main listener it is served only when `metricsToken` is set, and then only to requests
/// that send `Authorization: Bearer <metricsToken>`; `metricsAddress` adds a listener of its own that serves nothing
/// else (and wants the token too when one is set). Without either, the main listener answers 404.
enum MetricsEndpoint {
    /// The metrics answer, or 401 when a token is configured and the request does not carry it.
    static func response(to request: Request, metrics: ServerMetrics, token: String?) throws -> Response {
        if let token {
            let given = request.headers[.authorization] ?? ""
            guard Secrets.constantTimeEqual(Array(given.utf8), Array("Bearer \(token)".utf8)) else {
                throw APIError(.unauthorized, .unauthenticated, "Send the metrics token as a bearer token.")
            }
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer()))
        )
    }

    /// The separate metrics listener, when `metricsAddress` is set.
    static func listener(_ configuration: ServerConfiguration, metrics: ServerMetrics, logger: Logger) throws -> (
        any Service
    )? {
        guard let address = configuration.metricsAddress else { return nil }
        let (host, port) = try ServerConfiguration.hostAndPort(address, key: "metrics-address")
        let router = Router()
        let token = configuration.metricsToken
        router.get("/metrics") { request, _ -> Response in
            do {
                return try response(to: request, metrics: metrics, token: token)
            } catch let error as APIError {
                return Response(status: error.status, headers: [.wwwAuthenticate: "Bearer"])
            }
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "sesame-metrics"),
            logger: logger)
    }
}
