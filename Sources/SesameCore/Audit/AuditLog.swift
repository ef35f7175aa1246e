import Foundation
import Logging

/// Appends audit events (and counts them in `sesame_auth_events_total`). Kinds and outcomes are the
/// ``AuditKind`` and ``AuditOutcome`` vocabulary; the detail is a non-secret reason (an error code, a factor).
package struct AuditLog: Sendable {
    package let store: any Store
    package let metrics: ServerMetrics
    package let clock: ServerClock
    package let logger: Logger

    package init(store: any Store, metrics: ServerMetrics, clock: ServerClock, logger: Logger) {
        self.store = store
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
    }

    /// Records an event; a failure to store it is logged (by error type) and does not fail the request. `client` is
    /// the OpenID Connect client (app) the event concerns, by its id, when it concerns one.
    package func record(
        _ kind: AuditKind, _ outcome: AuditOutcome, user: User?, username: String? = nil, clientAddress: String,
        detail: String = "", client: String? = nil
    ) async {
        let event = self.event(
            kind, outcome, user: user, username: username, clientAddress: clientAddress, detail: detail,
            client: client)
        do { try await store.appendAudit(event) } catch {
            logger.error(
                "audit event not stored",
                metadata: ["kind": .string(kind.rawValue), "error": .string(String(describing: type(of: error)))])
        }
        counted(event)
    }

    /// The event `record` would store, for a caller that stores it with other writes (then calls `counted`).
    package func event(
        _ kind: AuditKind, _ outcome: AuditOutcome, user: User?, username: String? = nil, clientAddress: String,
        detail: String = "", client: String? = nil
    ) -> AuditEvent {
        AuditEvent(
            at: clock.now(), kind: kind.rawValue, outcome: outcome.rawValue, userID: user?.id,
            username: user?.username ?? username,
            clientAddress: clientAddress, detail: detail, clientID: client
        )
    }

    /// Counts an event stored by its caller.
    package func counted(_ event: AuditEvent) {
        metrics.auditEvent(kind: event.kind, outcome: event.outcome)
    }
}

extension AuditLog {
    /// `record` with the request's client address.
    package func record(
        _ kind: AuditKind, _ outcome: AuditOutcome, user: User?, username: String? = nil, context: some ClientContext,
        detail: String = "", client: String? = nil
    ) async {
        await record(
            kind, outcome, user: user, username: username, clientAddress: context.clientAddress, detail: detail,
            client: client)
    }
}
