import Foundation
import Prometheus
import Synchronization

/// Prometheus metrics: one registry per application, served at `/metrics` (see `MetricsEndpoint`).
///
/// Every request counts in one counter and one histogram. The registry checks names and labels and looks the series
/// up under its lock each time it is asked for one, so the series a request lands in are kept here once made: a
/// request then costs a dictionary lookup. The method label is one of the methods RFC 9110 defines or `other`, so
/// the series stay few whatever methods clients send (routes are patterns, `unmatched` for the rest).
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let series = MetricSeries()

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    package static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "http", metricName: "requests", unitName: "total",
            helpText: "HTTP requests answered")
    }
    package static var duration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "http", metricName: "request_duration", unitName: "seconds",
            helpText: "Time to answer HTTP requests"
        )
    }
    package static var authEvents: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "auth", metricName: "events", unitName: "total",
            helpText: "Sign-in and account events")
    }

    package static var mailDeliveries: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "mail", metricName: "deliveries", unitName: "total",
            helpText: "Tries of this node's outbox sender, by result (sent, retried, gave_up)")
    }
    package static var outboxDepth: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "mail", metricName: "outbox_depth", unitName: "",
            helpText: "Mails in the outbox neither sent nor given up (all nodes; read when scraped)")
    }
    package static var outboxOldest: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "sesame", subsystem: "mail", metricName: "outbox_oldest_age", unitName: "seconds",
            helpText: "Age of the oldest mail neither sent nor given up, 0 when none (read when scraped)")
    }

    /// What one try of the outbox's sender came to.
    package enum MailResult: String, Sendable, CaseIterable {
        case sent
        case retried
        case gaveUp = "gave_up"
    }

    package func mail(_ result: MailResult) {
        series.mail.withLock { counters in
            if let found = counters[result] { return found }
            let made = registry.makeCounter(descriptor: Self.mailDeliveries, labels: [("result", result.rawValue)])
            counters[result] = made
            return made
        }.increment()
    }

    /// The outbox as it stands: set just before `/metrics` answers.
    package func outbox(depth: Int, oldestAge: TimeInterval) {
        registry.makeGauge(descriptor: Self.outboxDepth).set(Double(depth))
        registry.makeGauge(descriptor: Self.outboxOldest).set(max(0, oldestAge.rounded()))
    }

    /// The methods counted under their own name; any other is counted as `other`.
    package static let countedMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
    ]

    package func request(method: String, route: String, status: Int, duration: Duration) {
        let method = Self.countedMethods.contains(method) ? method : "other"
        let key = MetricSeries.Key(method: method, route: route, status: status)
        let (counter, histogram) = series.entries.withLock { entries in
            if let found = entries[key] { return found }
            let made = (
                registry.makeCounter(
                    descriptor: Self.requests,
                    labels: [("method", method), ("route", route), ("status", String(status))]),
                registry.makeDurationHistogram(
                    descriptor: Self.duration, labels: [("route", route)],
                    buckets: [
                        .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250), .seconds(1),
                        .seconds(5),
                    ]
                )
            )
            entries[key] = made
            return made
        }
        counter.increment()
        histogram.record(duration)
    }

    /// Kinds and outcomes are the audit vocabulary's (`AuditKind`, `AuditOutcome`): a bounded set of series.
    package func auditEvent(kind: String, outcome: String) {
        let key = MetricSeries.AuditKey(kind: kind, outcome: outcome)
        let counter = series.audit.withLock { counters in
            if let found = counters[key] { return found }
            let made = registry.makeCounter(
                descriptor: Self.authEvents, labels: [("kind", kind), ("outcome", outcome)])
            counters[key] = made
            return made
        }
        counter.increment()
    }
}

/// The counter and histogram of each (method, route, status) a request has landed in so far, and the counter of
/// each (kind, outcome) of the audit events.
private final class MetricSeries: Sendable {
    struct Key: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    let entries = Mutex<[Key: (Counter, DurationHistogram)]>([:])
    struct AuditKey: Hashable {
        let kind: String
        let outcome: String
    }

    let audit = Mutex<[AuditKey: Counter]>([:])
    let mail = Mutex<[ServerMetrics.MailResult: Counter]>([:])
}
