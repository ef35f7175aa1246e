import Foundation
import Hummingbird
import Logging
import HummingbirdTesting
import Testing

@testable import SesameCore
@testable import SesameServer
@testable import SesameMail

/// What an operator sees of the outbox: `/health` and `/metrics` report its depth and the age of its oldest mail
/// (across every node), `/health` says `delayed` past 15 minutes without failing, and the sender counts its tries.
@Suite struct OutboxOperationsTests {
    static let token = "metrics-token-0123456789"
    let mail = OutgoingMail(to: "lin@example.net", subject: "Confirm your address", text: "Your code is 482913.")

    /// The server with the sender's ticks on a clock the test moves and mail handed to `transport`.
    func app(_ server: TestServer, ticks: ManualClock, transport: ScriptedTransport) async throws
        -> some ApplicationProtocol
    {
        var environment = server.environment
        environment.serviceClock = ticks
        environment.mailTransport = transport
        return try await buildApplication(configuration: server.configuration, environment: environment)
    }

    @Test(arguments: TestDatabase.all)
    func healthAndMetricsShowTheOutboxDepthAndTheAgeOfItsOldestMail(_ db: TestDatabase) async throws {
        let server = TestServer(db) { $0.metricsToken = Self.token }
        let ticks = ManualClock()
        let transport = ScriptedTransport()
        try await app(server, ticks: ticks, transport: transport).test(.router) { client in
            let metrics = {
                try await client.json("/metrics", headers: [.authorization: "Bearer \(Self.token)"]).text
            }
            var health = try await client.json("/health")
            #expect(health.status == .ok && health.object["status"] as? String == "ok")
            #expect(mailHealth(health) == MailState(status: "ok", depth: 0, oldestSeconds: 0))
            #expect(try await metrics().contains("\nsesame_mail_outbox_depth 0"))

            try await server.withStore { store in
                try await store.enqueueMail(mail, kind: "test", id: "h1", at: server.clock.now)
                try await store.enqueueMail(mail, kind: "test", id: "h2", at: server.clock.now.addingTimeInterval(60))
            }
            server.clock.advance(600)
            health = try await client.json("/health")
            #expect(health.status == .ok && health.object["status"] as? String == "ok")
            #expect(mailHealth(health) == MailState(status: "ok", depth: 2, oldestSeconds: 600))
            var text = try await metrics()
            #expect(text.contains("\nsesame_mail_outbox_depth 2"))
            #expect(text.contains("\nsesame_mail_outbox_oldest_age_seconds 600"))

            // Past 15 minutes the mail is late: said, but the node still answers 200 (a relay's fault is no reason
            // to restart it).
            server.clock.advance(301)
            health = try await client.json("/health")
            #expect(health.status == .ok && health.object["status"] as? String == "degraded")
            #expect(health.object["database"] as? String == "ok")
            #expect(mailHealth(health) == MailState(status: "delayed", depth: 2, oldestSeconds: 901))

            // The sender's turn: one refused for now, then both sent; the counters and the depth follow.
            // (The sender's tick is moved on at each look: it may not be asleep yet when the test looks first.)
            transport.fail(MailDeliveryError(transient: true, reason: "451 try later"))
            #expect(
                try await ManualClock.waitUntil {
                    ticks.advance(by: .seconds(1))
                    let text = try await metrics()
                    return text.contains(#"sesame_mail_deliveries_total{result="retried"} 1"#)
                        && text.contains(#"sesame_mail_deliveries_total{result="sent"} 1"#)
                })
            server.clock.advance(2)
            #expect(
                try await ManualClock.waitUntil {
                    ticks.advance(by: .seconds(1))
                    return try await metrics().contains(#"sesame_mail_deliveries_total{result="sent"} 2"#)
                })
            text = try await metrics()
            #expect(text.contains("\nsesame_mail_outbox_depth 0"))
            #expect(text.contains("\nsesame_mail_outbox_oldest_age_seconds 0"))
            health = try await client.json("/health")
            #expect(health.object["status"] as? String == "ok")
            #expect(mailHealth(health) == MailState(status: "ok", depth: 0, oldestSeconds: 0))
            #expect(Set(transport.all.map(\.messageID)) == ["h1@localhost", "h2@localhost"])
        }
    }

    /// The settings that shorten the schedule: the first retry, and the SMTP timeout the lease is made from.
    @Test func theRetryAndTheLeaseComeFromTheirSettings() throws {
        let defaults = try ServerConfiguration.resolve(flags: [:], environment: [:], configFile: nil)
        #expect(defaults.outboxSchedule == OutboxSchedule(firstRetry: 2, lease: 450))
        let short = try ServerConfiguration.resolve(
            flags: ["smtpTimeout": "1"], environment: ["SESAME_MAIL_FIRST_RETRY_SECONDS": "1"], configFile: nil)
        #expect(short.outboxSchedule == OutboxSchedule(firstRetry: 1, lease: 15))
        #expect(short.outboxSchedule.retryDelay(afterAttempts: 3) == 4)
        for flags in [["smtpTimeout": "0"], ["smtpTimeout": "301"], ["mailFirstRetrySeconds": "0.5"]] {
            #expect(throws: ConfigurationError.self) {
                try ServerConfiguration.resolve(flags: flags, environment: [:], configFile: nil)
            }
        }
    }

    /// One claim per mail, and a turn goes on while mail is due: a backlog is not sent twenty a second.
    @Test(arguments: TestDatabase.all)
    func aBacklogIsSentInOneTurnOneLeaseAtATime(_ db: TestDatabase) async throws {
        try await TestServer(db).withStore { store in
            let clock = TestClock()
            let transport = ScriptedTransport()
            var logger = Logger(label: "sesame.test.outbox")
            logger.logLevel = .critical
            let sender = OutboxSender(
                store: store, transport: transport, clock: clock.serverClock, ticks: ContinuousClock(),
                retention: 86400, schedule: OutboxSchedule(firstRetry: 1, lease: 15), host: "sesame.example",
                logger: logger)
            for i in 0..<45 { try await store.enqueueMail(mail, kind: "test", id: "b\(i)", at: clock.now) }
            transport.fail(MailDeliveryError(transient: true, reason: "421 busy"))
            #expect(try await sender.sendDue() == 44)
            #expect(try await store.outboxState(now: clock.now).depth == 1)
            clock.advance(1)
            #expect(try await sender.sendDue() == 1)
            #expect(Set(transport.all.map(\.messageID)).count == 45)
        }
    }

    struct MailState: Equatable {
        let status: String
        let depth: Int
        let oldestSeconds: Int
    }

    func mailHealth(_ response: TestResponse) -> MailState? {
        guard let mail = response.object["mail"] as? [String: Any], let status = mail["status"] as? String,
            let depth = mail["depth"] as? Int, let oldest = mail["oldest_seconds"] as? Int
        else { return nil }
        return MailState(status: status, depth: depth, oldestSeconds: oldest)
    }
}
