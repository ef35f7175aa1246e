import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SQLKit
import Testing

@testable import SesameConsole
@testable import SesameCore
@testable import SesameGroups
@testable import SesameServer

/// The console's Overview on both engines: its figures against a seeded store (accounts, today's sign-ins from the
/// audit log, the outbox, nodes), the heartbeats of the nodes seen (a manual clock: a node appears, ages out of the
/// last minute, beats again, is purged a day after it stopped), and the first account made by sign-up becoming an
/// administrator (`firstSignUpAdmin`), also when two sign-ups race on an empty server.
@Suite struct ConsoleOverviewTests {
    static func event(_ kind: String, _ outcome: AuditOutcome, at: Date) -> AuditEvent {
        AuditEvent(
            at: at, kind: kind, outcome: outcome.rawValue, userID: nil, username: nil, clientAddress: "192.0.2.9",
            detail: "")
    }

    /// Makes `username` an administrator, as an operator would.
    static func makeAdmin(_ server: TestServer, _ username: String) async throws {
        try await server.withStore { store in
            let admin = GroupsAdmin(store: store, adminGroup: "admins")
            try await admin.add("admins", name: nil, claims: nil)
            try await admin.addMember(username, to: "admins")
        }
    }

    @Test(arguments: TestDatabase.all)
    func theOverviewCountsWhatTheStoreHolds(_ db: TestDatabase) async throws {
        var seeded = TestServer(db)
        seeded.serviceClock = ManualClock()
        let server = seeded
        let now = server.clock.now
        let disabled = try await server.seedUser("dan")
        _ = try await server.seedUser("eve")
        _ = try await server.seedUser("fay")
        try await server.withStore { store in
            try await store.db.raw("UPDATE users SET disabled = 1 WHERE id = \(bind: disabled.id)").run()
            for event in [
                Self.event("sign_in.passkey", .success, at: now),
                Self.event("sign_in.passkey", .success, at: now.addingTimeInterval(-60)),
                Self.event("sign_in.password", .failure, at: now),
                Self.event("sign_in.password", .refused, at: now),
                Self.event("sign_in.password", .pendingSecondFactor, at: now),
                Self.event("sign_in.second_factor", .success, at: now),
                // Yesterday's and other kinds are not today's sign-ins.
                Self.event("sign_in.passkey", .success, at: OverviewRoutes.startOfDay(now).addingTimeInterval(-1)),
                Self.event("passkey.added", .success, at: now),
            ] {
                try await store.db.raw(SQLStore.auditInsert(event)).run()
            }
            let mail = OutgoingMail(to: "a@example.org", subject: "s", text: "t")
            for id in ["m1", "m2"] {
                try await store.db.raw(try store.outboxInsert(mail, kind: "test", id: id, at: now)).run()
            }
            let claimed = try await store.claimDueMail(now: now, limit: 1, lease: 60)
            try await store.retryMail(id: try #require(claimed.first).id, at: now.addingTimeInterval(60), error: "4xx")
        }
        try await server.app().test(.router) { client in
            let (session, _) = try await signUpWithPasskey(client, "ada")
            #expect(try await client.json("/api/admin/overview", headers: session.bearerHeaders).status == .forbidden)
            try await Self.makeAdmin(server, "ada")
            // The heartbeat is written when the node starts, before its first wait.
            #expect(
                await ManualClock.waitUntil {
                    let answer = try? await client.json("/api/admin/overview", headers: session.bearerHeaders)
                    return (answer?.object["nodes"] as? [Any])?.count == 1
                })
            let answer = try await client.json("/api/admin/overview", headers: session.bearerHeaders)
            #expect(answer.status == .ok, "\(answer.text)")
            let body = answer.object
            let accounts = try #require(body["accounts"] as? [String: Any])
            #expect(accounts["total"] as? Int == 4 && accounts["disabled"] as? Int == 1)
            let signIns = try #require(body["signIns"] as? [String: Any])
            let methods = try #require(signIns["byMethod"] as? [[String: Any]])
            var counts: [String: Int] = [:]
            for method in methods { counts[method["method"] as? String ?? ""] = method["count"] as? Int }
            #expect(counts["passkey"] == 2 && counts["password"] == 0 && counts["second_factor"] == 1)
            #expect(counts["email_recovery.signed_in"] == 0 && counts["recovery_link.used"] == 0)
            #expect(signIns["failed"] as? Int == 2)
            let outbox = try #require(body["outbox"] as? [String: Any])
            #expect(outbox["queued"] as? Int == 2 && outbox["failing"] as? Int == 1 && outbox["oldest"] != nil)
            #expect(body["metadata"] == nil || body["metadata"] is NSNull)
            #expect((body["signingKeys"] as? [Any])?.isEmpty == true)
            #expect(body["version"] as? String == SesameVersion.description)
            let node = try #require((body["nodes"] as? [[String: Any]])?.first)
            #expect(node["version"] as? String == SesameVersion.description)
            #expect((node["id"] as? String)?.count == 16)
        }
    }

    @Test(arguments: TestDatabase.all)
    func theSignInCountsReadTheIndexByKindAndTime(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.withStore { store in
            let kinds = ["sign_in.passkey", "sign_in.password"]
            let plan: [String]
            switch db.engine {
            case .sqlite:
                plan = try await store.db.raw(
                    """
                    EXPLAIN QUERY PLAN SELECT kind, outcome, COUNT(*) AS n FROM audit_events
                    WHERE kind IN ('sign_in.passkey', 'sign_in.password') AND at >= 0 GROUP BY kind, outcome
                    """
                ).all().map { try $0.decode(column: "detail", as: String.self) }
            case .postgres:
                try await store.db.raw("SET enable_seqscan = off").run()
                plan = try await store.db.raw(
                    """
                    EXPLAIN SELECT kind, outcome, COUNT(*) AS n FROM audit_events
                    WHERE kind IN ('sign_in.passkey', 'sign_in.password') AND at >= 0 GROUP BY kind, outcome
                    """
                ).all().map { try $0.decode(column: "QUERY PLAN", as: String.self) }
            }
            #expect(plan.contains { $0.contains("audit_events_kind_at") }, "\(plan)")
            #expect(try await store.auditCounts(kinds: kinds, since: Date(timeIntervalSince1970: 0)).isEmpty)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aNodeIsSeenWhileItBeatsAndPurgedADayAfterItStops(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.withStore { store in
            let ticks = ManualClock()
            let clock = server.clock
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let heartbeats = NodeHeartbeats(
                store: store, clock: clock.serverClock, ticks: ticks, logger: logger, version: "9.9.9 (test)")
            func seen() async throws -> [NodeRecord] {
                try await store.nodes(seenSince: clock.now.addingTimeInterval(-NodeHeartbeats.recent))
            }
            let task = Task { try await heartbeats.run() }
            // It appears at once.
            #expect(await ManualClock.waitUntil { (try? await seen())?.map(\.id) == [heartbeats.id] })
            #expect(try await seen().first?.version == "9.9.9 (test)")
            // Sixty-one seconds without a heartbeat: no longer in the last minute.
            clock.advance(61)
            #expect(try await seen().isEmpty)
            // The next beat (15 s on its own clock) brings it back, with the new time.
            #expect(await ManualClock.waitUntil { ticks.sleepsStarted >= 1 })
            ticks.advance(by: NodeHeartbeats.interval)
            #expect(await ManualClock.waitUntil { (try? await seen())?.first?.lastSeenAt == clock.now })
            #expect(try await seen().first?.startedAt == clock.now.addingTimeInterval(-61))
            task.cancel()
            _ = await task.result
            // Stopped: kept for a day after its last heartbeat, then the purge deletes it.
            let everything = Date(timeIntervalSince1970: 0)
            clock.advance(NodeHeartbeats.keep - 1)
            try await store.purgeExpired(now: clock.now, rateLimitWindow: 900)
            #expect(try await store.nodes(seenSince: everything).count == 1)
            clock.advance(2)
            try await store.purgeExpired(now: clock.now, rateLimitWindow: 900)
            #expect(try await store.nodes(seenSince: everything).isEmpty)
        }
    }

    @Test(arguments: TestDatabase.all)
    func theFirstAccountBySignUpBecomesAnAdministratorWhenAsked(_ db: TestDatabase) async throws {
        var first = TestServer(db) { $0.firstSignUpAdmin = true }
        first.serviceClock = ManualClock()
        let server = first
        try await server.app().test(.router) { client in
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            let (bob, _) = try await signUpWithPasskey(client, "bob")
            #expect(try await client.json("/api/admin/overview", headers: ada.bearerHeaders).status == .ok)
            let refused = try await client.json("/api/admin/overview", headers: bob.bearerHeaders)
            #expect(refused.status == .forbidden && refused.errorCode == "not_an_admin")
        }
        let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 50) }
        #expect(events.filter { $0.kind == "group.first_admin" }.map(\.username) == ["ada"])
        #expect(events.filter { $0.kind == "group.added" }.count == 1)

        // Off (the default): nobody is made an administrator.
        var off = TestServer(db)
        off.serviceClock = ManualClock()
        try await off.app().test(.router) { client in
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            #expect(try await client.json("/api/admin/overview", headers: ada.bearerHeaders).status == .forbidden)
        }
        // On a server with accounts already (made at the command line), sign-up makes nobody an administrator.
        var later = TestServer(db) { $0.firstSignUpAdmin = true }
        later.serviceClock = ManualClock()
        _ = try await later.seedUser("root")
        try await later.app().test(.router) { client in
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            #expect(try await client.json("/api/admin/overview", headers: ada.bearerHeaders).status == .forbidden)
        }
    }

    @Test(arguments: TestDatabase.all)
    func ofTwoSignUpsRacingOnAnEmptyServerExactlyOneIsTheAdministrator(_ db: TestDatabase) async throws {
        // The claim itself, in two transactions at once, a few times over: exactly one wins each round.
        for round in 0..<4 {
            let server = TestServer(db)
            try await server.withStore { store in
                let now = server.clock.now
                let users = (0..<2).map { i in
                    User(
                        id: UUID().uuidString.lowercased(), username: "racer\(round)-\(i)", displayName: "Racer",
                        userHandle: Secrets.random(32), disabled: false, createdAt: now)
                }
                let claim = FirstSignUpAdmin(adminGroup: "admins")
                let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for user in users {
                        group.addTask {
                            try await store.engine.withTransaction { db in
                                try await db.raw(SQLStore.userInsert(user)).run()
                                return try await claim.claim(user: user, clientAddress: "t", at: now, in: db)
                            }
                        }
                    }
                    var wins = 0
                    for try await won in group where won { wins += 1 }
                    return wins
                }
                #expect(wins == 1, "round \(round)")
                let members = try await store.groupMembers(slug: "admins")
                #expect(members?.count == 1)
            }
        }
    }
}
