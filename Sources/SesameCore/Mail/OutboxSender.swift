import Foundation
import Logging
import ServiceLifecycle

/// Hands a mail to whatever carries it on (SMTP, or the console in development).
package protocol MailTransport: Sendable {
    /// `messageID` stays the same on every try of one mail.
    func deliver(_ mail: OutgoingMail, messageID: String) async throws(MailDeliveryError)
}

/// Why a delivery failed, and whether trying later may succeed (the relay was unreachable, slow, or said 4xx). The
/// server's error shape (`ServerError`); the message (`reason`) never holds a password or the mail's content.
package typealias MailDeliveryError = ServerError<MailDeliveryErrorCode>

/// The codes of `MailDeliveryError`: whether the outbox tries again.
package struct MailDeliveryErrorCode: ServerErrorCode {
    package let name: String
    private init(_ name: String) { self.name = name }
    package var description: String { name }

    /// Trying later may succeed: the relay was unreachable, slow, or answered 4xx.
    package static let transient = MailDeliveryErrorCode("transient")
    /// The relay refused the mail for good (5xx), or there is no relay: the outbox gives up.
    package static let permanent = MailDeliveryErrorCode("permanent")
}

extension ServerError where Code == MailDeliveryErrorCode {
    package init(transient: Bool, reason: String, file: String = #fileID, line: Int = #line) {
        self.init(code: transient ? .transient : .permanent, message: reason, file: file, line: line)
    }

    /// Whether trying later may succeed.
    package var transient: Bool { code == .transient }
    /// What went wrong, for the outbox row and the audit event.
    package var reason: String { message }
}

/// When the outbox tries again and how long a node holds a mail it took.
package struct OutboxSchedule: Sendable, Equatable {
    /// The wait after the first failed try; each later one waits twice as long, up to ``longestRetry``.
    package var firstRetry: TimeInterval = 2
    package var longestRetry: TimeInterval = 300
    /// How long a node holds a mail it took before another may take it (it crashed, or the relay hung): longer than
    /// one delivery can take, so a live node's mail is never taken twice.
    package var lease: TimeInterval = 450
    /// A mail older than this, still not sent, makes `/health` say the mail is delayed.
    package var delayedAfter: TimeInterval = 900
    /// Given up once this old.
    package var maximumAge: TimeInterval = 24 * 3600

    package init(firstRetry: TimeInterval = 2, lease: TimeInterval = 450) {
        self.firstRetry = firstRetry
        self.lease = lease
    }

    /// The wait before the next try after `attempts` tries.
    package func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(longestRetry, firstRetry * pow(2, Double(max(0, min(attempts - 1, 20)))))
    }
}

/// The outbox's sender, one on every node: each tick (once a second on `ticks`) it takes the due mails one at a time
/// under a lease and hands each to the transport until none is due, marking each sent, to retry, or given up. Retries
/// come after `schedule.firstRetry` (2 s), then twice as long each time up to five minutes; a mail is given up on a
/// permanent refusal or once it is a day old, with `onGiveUp` told (the audit event). One mail per claim: the lease
/// covers one delivery, so a batch behind a slow relay is never taken again by another node while this one still
/// works through it. Times written to the store come from `clock`; waiting is on `ticks`, so tests advance both.
package struct OutboxSender: Service {
    package static let interval = Duration.seconds(1)

    package let store: any OutboxStore
    package let transport: any MailTransport
    package let clock: ServerClock
    package let ticks: any Clock<Duration>
    /// How long sent and given-up rows (without their content) stay for `/metrics` and the console.
    package let retention: TimeInterval
    package let schedule: OutboxSchedule
    package let host: String
    package let logger: Logger
    package let metrics: ServerMetrics?
    package let onGiveUp: @Sendable (ClaimedMail, String) async -> Void

    package init(
        store: any OutboxStore, transport: any MailTransport, clock: ServerClock, ticks: any Clock<Duration>,
        retention: TimeInterval, schedule: OutboxSchedule = .init(), host: String, logger: Logger,
        metrics: ServerMetrics? = nil, onGiveUp: @escaping @Sendable (ClaimedMail, String) async -> Void = { _, _ in }
    ) {
        self.store = store
        self.transport = transport
        self.clock = clock
        self.ticks = ticks
        self.retention = retention
        self.schedule = schedule
        self.host = host
        self.logger = logger
        self.metrics = metrics
        self.onGiveUp = onGiveUp
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await ticks.sleep(for: Self.interval)
                do {
                    _ = try await sendDue()
                } catch {
                    logger.warning(
                        "the outbox could not be read",
                        metadata: ["error_type": .string(String(describing: type(of: error)))])
                }
            }
        }
    }

    /// Sends what is due now, one claim at a time, until none is due or `limit` were tried; returns how many were sent.
    @discardableResult
    package func sendDue(limit: Int = .max) async throws -> Int {
        var sent = 0
        var tried = 0
        while tried < limit, !Task.isCancelled,
            let claimed = try await store.claimDueMail(now: clock.now(), limit: 1, lease: schedule.lease).first
        {
            tried += 1
            let failure: MailDeliveryError?
            do throws(MailDeliveryError) {
                try await transport.deliver(claimed.mail, messageID: "\(claimed.id)@\(host)")
                failure = nil
            } catch {
                failure = error
            }
            guard let error = failure else {
                try await store.markMailSent(id: claimed.id, at: clock.now(), retention: retention)
                metrics?.mail(.sent)
                sent += 1
                continue
            }
            let now = clock.now()
            if error.transient, now.timeIntervalSince(claimed.createdAt) < schedule.maximumAge {
                let next = now.addingTimeInterval(schedule.retryDelay(afterAttempts: claimed.attempts))
                try await store.retryMail(id: claimed.id, at: next, error: error.reason)
                metrics?.mail(.retried)
                logger.info(
                    "a mail will be tried again",
                    metadata: ["kind": .string(claimed.kind), "attempts": .stringConvertible(claimed.attempts)])
            } else {
                try await store.giveUpMail(id: claimed.id, at: now, error: error.reason, retention: retention)
                metrics?.mail(.gaveUp)
                logger.warning(
                    "a mail was given up",
                    metadata: ["kind": .string(claimed.kind), "attempts": .stringConvertible(claimed.attempts)])
                await onGiveUp(claimed, error.reason)
            }
        }
        return sent
    }
}
