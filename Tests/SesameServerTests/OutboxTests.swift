import Foundation
import Logging
import SQLKit
import Synchronization
import Testing

@testable import SesameCore

/// A transport that answers from a script and records what it was handed.
final class ScriptedTransport: MailTransport, Sendable {
    private let delivered = Mutex<[(mail: OutgoingMail, messageID: String)]>([])
    private let failures = Mutex<[MailDeliveryError]>([])

    /// The next deliveries fail with these, in order; then they succeed.
    func fail(_ errors: MailDeliveryError...) { failures.withLock { $0 += errors } }

    func deliver(_ mail: OutgoingMail, messageID: String) async throws(MailDeliveryError) {
        if let failure = failures.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw failure }
        delivered.withLock { $0.append((mail, messageID)) }
    }

    var all: [(mail: OutgoingMail, messageID: String)] { delivered.withLock { $0 } }
}

@Suite struct OutboxTests {
    let mail = OutgoingMail(
        to: "lin@example.net", subject: "Confirm your address", text: "Your code is 482913.",
        html: "<p>Your code is <b>482913</b>.</p>")

    /// A sender over `store` with a clock the test moves, a scripted transport and a record of the mails given up.
    func harness(_ store: SQLStore) -> (TestClock, ScriptedTransport, GaveUp, OutboxSender) {
        let clock = TestClock()
        let transport = ScriptedTransport()
        let gaveUp = GaveUp()
        var logger = Logger(label: "sesame.test.outbox")
        logger.logLevel = .critical
        let sender = OutboxSender(
            store: store, transport: transport, clock: clock.serverClock, ticks: ContinuousClock(),
            retention: 7 * 86400, host: "sesame.example", logger: logger,
            onGiveUp: { claimed, _ in gaveUp.add(claimed.id) })
        return (clock, transport, gaveUp, sender)
    }

    @Test(arguments: TestDatabase.all)
    func aMailIsWrittenWithItsChangeOrNotAtAll(_ db: TestDatabase) async throws {
        try await TestServer(db).withStore { store in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await store.engine.withTransaction { tx in
                    try await tx.raw(try store.outboxInsert(mail, kind: "test", id: "rolled-back", at: now)).run()
                    throw Refused()
                }
            }
            try await store.engine.withTransaction { tx in
                try await tx.raw(try store.outboxInsert(mail, kind: "test", id: "committed", at: now)).run()
            }
            let claimed = try await store.claimDueMail(now: now, limit: 10, lease: 60)
            #expect(claimed.map(\.id) == ["committed"])
            #expect(claimed.first?.mail == mail && claimed.first?.attempts == 1)
            // Sealed at rest: neither the address nor the code is in the row.
            let row = try await store.db.raw("SELECT payload FROM mail_outbox WHERE id = 'committed'").first()
            let stored = String(decoding: try row!.decode(column: "payload", as: Data.self), as: UTF8.self)
            #expect(!stored.contains("482913") && !stored.contains("lin@example.net"))
            #expect(try await store.sealedSecretCounts().contains { $0.purpose == "mail" && $0.count == 1 })
        }
    }

    @Test(arguments: TestDatabase.all)
    func aLeasedMailIsTakenByOneNodeUntilItsLeaseEnds(_ db: TestDatabase) async throws {
        try await TestServer(db).withStore { store in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            for i in 0..<30 { try await store.enqueueMail(mail, kind: "test", id: "m\(i)", at: now) }
            // Four nodes take at once: every mail goes to exactly one.
            let taken = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<4 {
                    group.addTask { try await store.claimDueMail(now: now, limit: 10, lease: 60).map(\.id) }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(taken.count == 30 && Set(taken).count == 30)
            #expect(try await store.claimDueMail(now: now.addingTimeInterval(59), limit: 50, lease: 60).isEmpty)
            let again = try await store.claimDueMail(now: now.addingTimeInterval(61), limit: 50, lease: 60)
            #expect(again.count == 30 && again.allSatisfy { $0.attempts == 2 })
            #expect(try await store.outboxState(now: now) == OutboxState(depth: 30, oldest: now))
        }
    }

    @Test(arguments: TestDatabase.all)
    func aRelayThatIsDownIsTriedAgainBackingOffAndAMailIsGivenUpAfterADay(_ db: TestDatabase) async throws {
        try await TestServer(db).withStore { store in
            let (clock, transport, gaveUp, sender) = harness(store)
            try await store.enqueueMail(mail, kind: "address_verification", id: "a1", at: clock.now)
            let down = MailDeliveryError(transient: true, reason: "421 try later")
            transport.fail(down, down, down)
            // Each failed try waits twice as long as the one before: 2 s, 4 s, 8 s.
            for wait in [2.0, 4.0, 8.0] {
                #expect(try await sender.sendDue() == 0)
                clock.advance(wait - 0.5)
                #expect(try await sender.sendDue() == 0, "not due before \(wait) s")
                clock.advance(0.5)
            }
            #expect(try await sender.sendDue() == 1)
            #expect(transport.all.map(\.messageID) == ["a1@sesame.example"])
            #expect(try await store.outboxState(now: clock.now).depth == 0)
            #expect(OutboxSchedule().retryDelay(afterAttempts: 30) == 300)

            // A relay down for a day: the mail is given up, the give-up reported, its content gone.
            try await store.enqueueMail(mail, kind: "address_verification", id: "a2", at: clock.now)
            let start = clock.now
            transport.fail(contentsOf: down, count: 400)
            while clock.now.timeIntervalSince(start) < 86400 + 600 {
                try await sender.sendDue()
                clock.advance(300)
            }
            #expect(gaveUp.ids == ["a2"])
            let row = try await store.db.raw("SELECT payload, gave_up_at FROM mail_outbox WHERE id = 'a2'").first()
            #expect(try row?.decode(column: "payload", as: Data?.self) == nil)
            #expect(try row?.decode(column: "gave_up_at", as: Int64?.self) != nil)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aRefusedMailIsGivenUpAtOnceAndSentRowsArePurgedAfterTheRetention(_ db: TestDatabase) async throws {
        try await TestServer(db).withStore { store in
            let (clock, transport, gaveUp, sender) = harness(store)
            try await store.enqueueMail(mail, kind: "test", id: "r1", at: clock.now)
            try await store.enqueueMail(mail, kind: "test", id: "s1", at: clock.now)
            transport.fail(MailDeliveryError(transient: false, reason: "550 no such user"))
            #expect(try await sender.sendDue() == 1)
            #expect(gaveUp.ids == ["r1"])
            #expect(try await store.outboxState(now: clock.now).depth == 0)
            let count = {
                try await store.db.raw("SELECT COUNT(*) AS n FROM mail_outbox").first()!.decode(
                    column: "n", as: Int64.self)
            }
            clock.advance(7 * 86400 - 1)
            try await store.purgeExpired(now: clock.now, rateLimitWindow: 900)
            #expect(try await count() == 2)
            clock.advance(2)
            try await store.purgeExpired(now: clock.now, rateLimitWindow: 900)
            #expect(try await count() == 0)
        }
    }
}

/// The mails the sender reported given up.
final class GaveUp: Sendable {
    private let value = Mutex<[String]>([])
    func add(_ id: String) { value.withLock { $0.append(id) } }
    var ids: [String] { value.withLock { $0 } }
}

extension ScriptedTransport {
    func fail(contentsOf error: MailDeliveryError, count: Int) {
        for _ in 0..<count { fail(error) }
    }
}
