import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SesameCore
import SesameBytes

/// `GET /metrics`: the Prometheus text of the application's registry.
///
/// It is not public. On the main listener it is served only when `metricsToken` is set, and then only to requests
/// that send `Authorization: Bearer <metricsToken>`; `metricsAddress` adds a listener of its own that serves nothing
/// else (and wants the token too when one is set). Without either, the main listener answers 404.
package enum MetricsEndpoint {
    /// The metrics answer, or 401 when a token is configured and the request does not carry it. A request that
    /// sends a token counts against its address's `guesses` before the comparison (429 with `Retry-After` once the
    /// window's budget is spent), and a correct token gives its count back. The outbox's depth and oldest age are
    /// read from `outbox` then (one query; a database that cannot answer leaves the last values).
    package static func response(
        to request: Request, address: String, now: Date, metrics: ServerMetrics, token: String?,
        guesses: NodeCeremonyBudget, outbox: (any OutboxStore)?
    ) async throws -> Response {
        if let token {
            try guesses.start(address: address, now: now)
            let given = request.headers[.authorization] ?? ""
            guard ConstantTime.equal(Array(given.utf8), Array("Bearer \(token)".utf8)) else {
                throw APIError(.unauthorized, .unauthenticated, "Send the metrics token as a bearer token.")
            }
            guesses.giveBack(address: address, now: now)
        }
        if let outbox, let state = try? await outbox.outboxState(now: now) {
            metrics.outbox(depth: state.depth, oldestAge: state.oldest.map { now.timeIntervalSince($0) } ?? 0)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer()))
        )
    }

    /// The separate metrics listener, when `metricsAddress` is set.
    package static func listener(
        _ configuration: ServerConfiguration, metrics: ServerMetrics, guesses: NodeCeremonyBudget, clock: ServerClock,
        outbox: any OutboxStore, logger: Logger
    ) throws -> (any Service)? {
        guard let address = configuration.metricsAddress else { return nil }
        let (host, port) = try ServerConfiguration.hostAndPort(address, key: "metrics-address")
        let router = Router(context: SesameRequestContext.self)
        let token = configuration.metricsToken
        router.get("/metrics") { request, context -> Response in
            do {
                return try await response(
                    to: request, address: context.peerAddress, now: clock.now(), metrics: metrics, token: token,
                    guesses: guesses, outbox: outbox)
            } catch let error as APIError {
                var headers: HTTPFields = [.wwwAuthenticate: "Bearer"]
                if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
                return Response(status: error.status, headers: headers)
            }
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "sesame-metrics"),
            logger: logger)
    }
}
