import Foundation
import Prometheus

/// Prometheus metrics: one registry per application, served at `/metrics` (see `MetricsEndpoint`).
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "http", metricName: "requests", unitName: "total",
            helpText: "HTTP requests answered")
    }
    static var duration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "http", metricName: "request_duration", unitName: "seconds",
            helpText: "Time to answer HTTP requests"
        )
    }
    static var authEvents: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "auth", metricName: "events", unitName: "total",
            helpText: "Sign-in and account events")
    }

    func request(method: String, route: String, status: Int, duration: Duration) {
        let labels = [("method", method), ("route", route), ("status", String(status))]
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: Self.duration, labels: [("route", route)],
            buckets: [
                .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
            ]
        ).record(duration)
    }

    func auditEvent(kind: String, outcome: String) {
        registry.makeCounter(descriptor: Self.authEvents, labels: [("kind", kind), ("outcome", outcome)]).increment()
    }
}
