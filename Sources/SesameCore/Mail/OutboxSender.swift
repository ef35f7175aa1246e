import Foundation
import Logging
import ServiceLifecycle

/// Hands a mail to whatever carries it on (SMTP, or the console in development).
package protocol MailTransport: Sendable {
    /// `messageID` stays the same on every try of one mail.
    func deliver(_ mail: OutgoingMail, messageID: String) async throws(MailDeliveryError)
}

/// Why a delivery failed, and whether trying later may succeed (the relay was unreachable, slow, or said 4xx).
package struct MailDeliveryError: Error, Sendable, CustomStringConvertible {
    package let transient: Bool
    /// Never holds a password or the mail's content.
    package let reason: String

    package init(transient: Bool, reason: String) {
        self.transient = transient
        self.reason = reason
    }

    package var description: String { reason }
}

/// The outbox's sender, one on every node: each tick (once a second on `ticks`) it leases the due mails, hands each to
/// the transport, and marks it sent, to retry, or given up. Retries come after 2 s, then twice as long each time up
/// to five minutes; a mail is given up on a permanent refusal or once it is a day old, with `onGiveUp` told (the
/// audit event). Times written to the store come from `clock`; waiting is on `ticks`, so tests advance both.
package struct OutboxSender: Service {
    package static let interval = Duration.seconds(1)
    /// How long a node holds a mail it took before another may take it (it crashed, or the relay hung).
    package static let lease: TimeInterval = 120
    package static let maximumAge: TimeInterval = 24 * 3600
    package static let firstRetry: TimeInterval = 2
    package static let longestRetry: TimeInterval = 300

    package let store: any OutboxStore
    package let transport: any MailTransport
    package let clock: ServerClock
    package let ticks: any Clock<Duration>
    /// How long sent and given-up rows (without their content) stay for `/metrics` and the console.
    package let retention: TimeInterval
    package let host: String
    package let logger: Logger
    package let onGiveUp: @Sendable (ClaimedMail, String) async -> Void

    package init(
        store: any OutboxStore, transport: any MailTransport, clock: ServerClock, ticks: any Clock<Duration>,
        retention: TimeInterval, host: String, logger: Logger,
        onGiveUp: @escaping @Sendable (ClaimedMail, String) async -> Void = { _, _ in }
    ) {
        self.store = store
        self.transport = transport
        self.clock = clock
        self.ticks = ticks
        self.retention = retention
        self.host = host
        self.logger = logger
        self.onGiveUp = onGiveUp
    }

    /// The wait before the next try after `attempts` tries.
    package static func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(longestRetry, firstRetry * pow(2, Double(max(0, min(attempts - 1, 20)))))
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

    /// Sends what is due now; returns how many were sent.
    @discardableResult
    package func sendDue(limit: Int = 20) async throws -> Int {
        var sent = 0
        for claimed in try await store.claimDueMail(now: clock.now(), limit: limit, lease: Self.lease) {
            let failure: MailDeliveryError?
            do throws(MailDeliveryError) {
                try await transport.deliver(claimed.mail, messageID: "\(claimed.id)@\(host)")
                failure = nil
            } catch {
                failure = error
            }
            guard let error = failure else {
                try await store.markMailSent(id: claimed.id, at: clock.now(), retention: retention)
                sent += 1
                continue
            }
            let now = clock.now()
            if error.transient, now.timeIntervalSince(claimed.createdAt) < Self.maximumAge {
                let next = now.addingTimeInterval(Self.retryDelay(afterAttempts: claimed.attempts))
                try await store.retryMail(id: claimed.id, at: next, error: error.reason)
                logger.info(
                    "a mail will be tried again",
                    metadata: ["kind": .string(claimed.kind), "attempts": .stringConvertible(claimed.attempts)])
            } else {
                try await store.giveUpMail(id: claimed.id, at: now, error: error.reason, retention: retention)
                logger.warning(
                    "a mail was given up",
                    metadata: ["kind": .string(claimed.kind), "attempts": .stringConvertible(claimed.attempts)])
                await onGiveUp(claimed, error.reason)
            }
        }
        return sent
    }
}
