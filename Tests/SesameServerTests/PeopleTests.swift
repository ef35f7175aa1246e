import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Synchronization
import Testing
import VirtualAuthenticator
import WebAuthn

@testable import SesameCore
@testable import SesameGroups
@testable import SesameOperations
@testable import SesameServer

/// The people admin API (`/api/admin/people…`) and the console's People page on both engines: the search and its
/// pages, one person, every change with its audit event naming the admin, the gate's refusals, and the rule that
/// nobody can lock everyone out, from the API, the groups API and the command line alike, two admins at once too.
@Suite struct PeopleTests {
    /// An administrator signed in with a passkey (ada, in `admins`), on a server whose `admins` group exists.
    static func withAdmin(
        _ db: TestDatabase,
        _ body:
            @escaping @Sendable (TestServer, any TestClientProtocol, SignedIn, VirtualAuthenticator) async throws
            -> Void
    ) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            let (session, va) = try await signUpWithPasskey(client, "ada")
            try await server.withStore { store in
                let groups = GroupsAdmin(store: store, adminGroup: "admins")
                try await groups.add("admins", name: nil, claims: nil)
                try await groups.addMember("ada", to: "admins")
            }
            try await body(server, client, session, va)
        }
    }

    /// The console's own CSRF token for a cookie session, as the People page carries it.
    static func consoleCSRF(_ client: some TestClientProtocol, _ session: SignedIn) async throws -> String {
        let page = try await client.json("/console/people", headers: [.cookie: session.cookie])
        #expect(page.status == .ok, "\(page.text)")
        let match = page.text.firstMatch(of: #/<meta name="sesame-console-csrf" content="([^"]+)">/#)
        return match.map { String($0.1) } ?? ""
    }

    static func seedPeople(_ server: TestServer, count: Int) async throws -> [User] {
        var users: [User] = []
        try await server.withStore { store in
            for i in 0..<count {
                let user = User(
                    id: UUID().uuidString.lowercased(), username: String(format: "user%03d", i),
                    displayName: i.isMultiple(of: 2) ? "Even \(i)" : "Odd \(i)", userHandle: Secrets.random(64),
                    disabled: false, createdAt: server.clock.now)
                try await store.createUser(user)
                users.append(user)
            }
            // One with a verified address that shares no prefix with the username or the display name.
            try await store.db.raw(
                """
                INSERT INTO email_addresses (user_id, address, address_key, verified_at, updated_at)
                VALUES (\(bind: users[7].id), 'Zed@Example.org', 'zed@example.org', 0, 0)
                """
            ).run()
        }
        return users
    }

    @Test(arguments: TestDatabase.all)
    func theSearchFindsUsernamesDisplayNamesAndEmailsPageByPage(_ db: TestDatabase) async throws {
        try await Self.withAdmin(db) { server, client, session, _ in
            let users = try await Self.seedPeople(server, count: 30)
            // Every page of the list, 7 at a time: each account once, in username order.
            var seen: [String] = []
            var after: String?
            var pages = 0
            repeat {
                let query = "/api/admin/people?limit=7" + (after.map { "&after=\($0)" } ?? "")
                let page = try await client.json(query, headers: session.bearerHeaders)
                #expect(page.status == .ok, "\(page.text)")
                seen += (page.object["people"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }
                after = page.object["next"] as? String
                pages += 1
            } while after != nil && pages < 10
            #expect(seen == (users.map(\.username) + ["ada"]).sorted())
            #expect(pages == 5)

            func found(_ q: String) async throws -> [String] {
                let answer = try await client.json(
                    "/api/admin/people?q=\(q)&limit=100", headers: session.bearerHeaders)
                #expect(answer.status == .ok, "\(q): \(answer.text)")
                return (answer.object["people"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }
            }
            #expect(try await found("USER02") == (20...29).map { String(format: "user%03d", $0) })
            #expect(
                try await found("odd%201") == ["user001"]
                    + (11...19).filter { !$0.isMultiple(of: 2) }.map {
                        String(format: "user%03d", $0)
                    })
            #expect(try await found("zed") == ["user007"])
            #expect(try await found("ZED%40EXAMPLE") == ["user007"])
            #expect(try await found("nobody").isEmpty)
            // A username that matches by its display name too is listed once.
            #expect(try await found("ad") == ["ada"])
            let emailShown = try await client.json("/api/admin/people?q=zed", headers: session.bearerHeaders)
            #expect((emailShown.object["people"] as? [[String: Any]])?.first?["email"] as? String == "Zed@Example.org")

            for bad in ["limit=0", "limit=101", "limit=x", "after=!!", "q=" + String(repeating: "a", count: 129)] {
                let refused = try await client.json("/api/admin/people?\(bad)", headers: session.bearerHeaders)
                #expect(refused.status == .badRequest && refused.errorCode == "bad_request", "\(bad): \(refused.text)")
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func theSearchReadsIndexesOnly(_ db: TestDatabase) async throws {
        let recorder = QueryPlanTests.Recorder()
        var configured = TestServer(db)
        configured.statementObserver = recorder.observer
        let server = configured
        _ = try await Self.seedPeople(server, count: 30)
        try await server.withStore { store in
            recorder.record(true)
            let service = PeopleService(store: store, groups: NoAccountGroups(), adminGroup: "admins")
            _ = try await service.search("", cursor: nil, limit: 10)
            let first = try await service.search("us", cursor: nil, limit: 10)
            _ = try await service.search("us", cursor: first.next, limit: 10)
            recorder.record(false)
            let statements = recorder.statements.filter { $0.sql.contains("username_key") }
            #expect(statements.count == 2)
            // SQLite reads each branch's page (at most `limit` rows) back from its subquery: `SCAN by_username`
            // walks those rows, not a table. Every line is looked at, not only the first scan.
            let pages: Set<String> = ["by_username", "by_display_name", "by_email"]
            for statement in statements {
                for plan in try await QueryPlanTests.plans(of: statement, in: store) {
                    let scanned = plan.split(separator: "\n").compactMap {
                        QueryPlanTests.scannedTable(in: "plan\n" + $0, engine: store.engine.kind)
                    }
                    #expect(scanned.allSatisfy(pages.contains), "\(db) people search scans a table:\n\(plan)")
                }
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func onePersonAndEveryChangeAuditedNamingTheAdmin(_ db: TestDatabase) async throws {
        try await Self.withAdmin(db) { server, client, session, _ in
            let (bobSession, _) = try await signUpWithPasskey(client, "bob")
            let bob = try #require(try await server.withStore { try await $0.user(usernameKey: "bob") })
            try await server.withStore { store in
                try await store.replaceRecoveryCodes(
                    userID: bob.id, salt: Secrets.random(16), hashes: [Secrets.random(32)], at: server.clock.now)
            }
            let shown = try await client.json("/api/admin/people/\(bob.id)", headers: session.bearerHeaders)
            #expect(shown.status == .ok, "\(shown.text)")
            let passkeys = try #require(shown.object["passkeys"] as? [[String: Any]])
            #expect(passkeys.count == 1)
            #expect(shown.object["secondFactors"] as? [String] == ["recovery"])
            #expect((shown.object["sessions"] as? [[String: Any]])?.count == 1)
            #expect((shown.object["person"] as? [String: Any])?["username"] as? String == "bob")
            #expect(shown.object["administrator"] as? Bool == false)
            #expect((shown.object["events"] as? [[String: Any]])?.isEmpty == false)
            // By username too.
            #expect(try await client.json("/api/admin/people/BOB", headers: session.bearerHeaders).status == .ok)
            #expect(
                try await client.json("/api/admin/people/nobody", headers: session.bearerHeaders).errorCode
                    == "account_not_found")

            // Disable: bob's session ends at once.
            let disabled = try await client.json(
                "/api/admin/people/\(bob.id)/disable", .post, headers: session.bearerHeaders)
            #expect(disabled.status == .ok, "\(disabled.text)")
            #expect((disabled.object["person"] as? [String: Any])?["disabled"] as? Bool == true)
            #expect(try await client.json("/api/account", headers: bobSession.bearerHeaders).status == .unauthorized)
            let enabled = try await client.json(
                "/api/admin/people/\(bob.id)/enable", .post, headers: session.bearerHeaders)
            #expect((enabled.object["person"] as? [String: Any])?["disabled"] as? Bool == false)

            let signedOut = try await client.json(
                "/api/admin/people/\(bob.id)/sign-out", .post, headers: session.bearerHeaders)
            #expect(signedOut.status == .ok && signedOut.object["sessionsEnded"] as? Int == 0, "\(signedOut.text)")

            // Second factors: a word outside the list, one not set up, then the recovery codes.
            #expect(
                try await client.json(
                    "/api/admin/people/\(bob.id)/factors/password", .delete,
                    headers: session.bearerHeaders
                ).errorCode == "invalid_factor")
            #expect(
                try await client.json(
                    "/api/admin/people/\(bob.id)/factors/totp", .delete,
                    headers: session.bearerHeaders
                ).errorCode == "factor_not_enabled")
            #expect(
                try await client.json(
                    "/api/admin/people/\(bob.id)/factors/recovery", .delete,
                    headers: session.bearerHeaders
                ).status == .noContent)

            // A passkey: someone else's id is unknown here; bob's own goes.
            let adaPasskey = try #require(
                try await server.withStore { store -> String? in
                    guard let ada = try await store.user(usernameKey: "ada") else { return nil }
                    return try await store.credentials(userID: ada.id).first.map { Base64URL.encode($0.id) }
                })
            #expect(
                try await client.json(
                    "/api/admin/people/\(bob.id)/passkeys/\(adaPasskey)", .delete,
                    headers: session.bearerHeaders
                ).errorCode == "unknown_credential")
            let bobPasskey = try #require(passkeys.first?["id"] as? String)
            #expect(
                try await client.json(
                    "/api/admin/people/\(bob.id)/passkeys/\(bobPasskey)", .delete,
                    headers: session.bearerHeaders
                ).status == .noContent)

            // Delete: the username typed again, exactly.
            for body in [#"{"confirm": "Bob"}"#, #"{"confirm": ""}"#] {
                let refused = try await client.json(
                    "/api/admin/people/\(bob.id)", .delete, body: body, headers: session.bearerHeaders)
                #expect(refused.status == .badRequest && refused.errorCode == "confirmation_mismatch")
            }
            let noBody = try await client.json("/api/admin/people/\(bob.id)", .delete, headers: session.bearerHeaders)
            #expect(noBody.status == .unsupportedMediaType, "\(noBody.text)")
            #expect(
                try await client.json(
                    "/api/admin/people/\(bob.id)", .delete, body: #"{"confirm": "bob"}"#,
                    headers: session.bearerHeaders
                ).status == .noContent)
            #expect(
                try await client.json("/api/admin/people/\(bob.id)", headers: session.bearerHeaders).status
                    == .notFound)

            let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 50) }
                .filter { $0.kind.hasPrefix("admin.") }
            #expect(
                Set(events.map(\.kind)) == [
                    "admin.disabled", "admin.enabled", "admin.signed_out", "admin.factor_removed",
                    "admin.passkey_removed", "admin.deleted",
                ])
            #expect(events.count == 6)
            #expect(
                events.allSatisfy {
                    $0.detail.hasSuffix("by admin ada") && $0.clientAddress == "192.0.2.1" && $0.username == "bob"
                })
        }
    }

    @Test(arguments: TestDatabase.all)
    func theGateRefusesWhoMayNot(_ db: TestDatabase) async throws {
        try await Self.withAdmin(db) { server, client, session, _ in
            let carol = try await server.seedUser("carol", password: "correct horse battery")
            let (dan, _) = try await signUpWithPasskey(client, "dan")
            // Signed out; a passkey session outside the group; a password session in it.
            #expect(try await client.json("/api/admin/people").status == .unauthorized)
            let outsider = try await client.json("/api/admin/people", headers: dan.bearerHeaders)
            #expect(outsider.status == .forbidden && outsider.errorCode == "not_an_admin")
            _ = try await server.withStore { store in
                try await GroupsAdmin(store: store, adminGroup: "admins").addMember("carol", to: "admins")
            }
            let password = try await signInWithPassword(client, "carol", "correct horse battery")
            let noPasskey = try await client.json(
                "/api/admin/people/\(carol.id)/disable", .post, headers: password.bearerHeaders)
            #expect(noPasskey.status == .forbidden && noPasskey.errorCode == "passkey_required")

            // A cookie: the console's CSRF header is needed besides the session's.
            let consoleCSRF = try await Self.consoleCSRF(client, session)
            #expect(!consoleCSRF.isEmpty)
            let forged = try await client.json(
                "/api/admin/people/\(carol.id)/sign-out", .post, headers: session.cookieHeaders)
            #expect(forged.status == .forbidden && forged.errorCode == "csrf_check_failed")
            var headers = session.cookieHeaders
            headers[AdminGate.csrfHeader] = consoleCSRF
            #expect(
                try await client.json("/api/admin/people/\(carol.id)/sign-out", .post, headers: headers).status == .ok)
            // The person's page is the list's template with the id, behind the same gate.
            let page = try await client.json("/console/people/\(carol.id)", headers: [.cookie: session.cookie])
            #expect(page.status == .ok && page.text.contains("data-item=\"\(carol.id)\""))
            #expect(
                try await client.json("/console/people/a%20b", headers: [.cookie: session.cookie]).status == .notFound)
            let signedOutPage = try await client.json("/console/people/\(carol.id)")
            #expect(signedOutPage.status == .seeOther)
            let back = URLComponents(string: signedOutPage.headers[.location] ?? "")?.queryItems ?? []
            #expect(back.first { $0.name == "return" }?.value == "/console/people/\(carol.id)", "\(back)")

            // Past the console's window, the passkey is asked for again.
            server.clock.advance(TimeInterval(server.configuration.consoleReauthenticationWindow + 1))
            let stale = try await client.json("/api/admin/people", headers: session.bearerHeaders)
            #expect(stale.errorCode == "reauthentication_required", "\(stale.text)")
            let stalePage = try await client.json("/console/people", headers: [.cookie: session.cookie])
            #expect(stalePage.status == .unauthorized)
        }
    }

    @Test(arguments: TestDatabase.all)
    func nobodyCanLockEveryoneOut(_ db: TestDatabase) async throws {
        try await Self.withAdmin(db) { server, client, session, _ in
            let ada = try #require(try await server.withStore { try await $0.user(usernameKey: "ada") })
            let passkey = try #require(
                try await server.withStore {
                    try await $0.credentials(userID: ada.id).first.map { Base64URL.encode($0.id) }
                })
            // A member with a password only does not count: nobody could open the console with it.
            _ = try await server.seedUser("pat", password: "correct horse battery")
            _ = try await server.withStore { store in
                try await GroupsAdmin(store: store, adminGroup: "admins").addMember("pat", to: "admins")
            }
            let refusals: [(String, HTTPRequest.Method, String?)] = [
                ("/api/admin/people/\(ada.id)/disable", .post, nil),
                ("/api/admin/people/\(ada.id)", .delete, #"{"confirm": "ada"}"#),
                ("/api/admin/people/\(ada.id)/passkeys/\(passkey)", .delete, nil),
                ("/api/admin/groups/admins/members/ada", .delete, nil),
                ("/api/admin/groups/admins", .delete, nil),
            ]
            for (path, method, body) in refusals {
                let refused = try await client.json(path, method, body: body, headers: session.bearerHeaders)
                #expect(
                    refused.status == .conflict && refused.errorCode == "last_administrator", "\(path): \(refused.text)"
                )
                #expect(refused.text.contains("admins"))
            }
            // The command line answers the same rule.
            try await server.withStore { store in
                let admin = Admin(store: store, groups: StoredAccountGroups(store: store), adminGroup: "admins")
                await #expect(throws: AdminError.self) { try await admin.setDisabled("ada", true) }
                await #expect(throws: AdminError.self) { try await admin.deleteUser("ada") }
                let groups = GroupsAdmin(store: store, adminGroup: "admins")
                await #expect(throws: AdminError.self) { try await groups.removeMember("ada", from: "admins") }
                await #expect(throws: AdminError.self) { try await groups.remove("admins") }
            }
            // Nothing was written: ada is enabled, in the group, with her passkey, and no event says otherwise.
            try await server.withStore { store in
                #expect(try await store.user(id: ada.id)?.disabled == false)
                #expect(try await store.credentials(userID: ada.id).count == 1)
                #expect(try await StoredAccountGroups(store: store).groupSlugs(userID: ada.id) == ["admins"])
                let events = try await store.auditEvents(userID: ada.id, limit: 50)
                #expect(events.allSatisfy { !$0.kind.hasPrefix("admin.") })
            }
            #expect(try await client.json("/api/admin/people", headers: session.bearerHeaders).status == .ok)

            // With a second administrator, the first may go.
            _ = try await signUpWithPasskey(client, "eve")
            _ = try await server.withStore { store in
                try await GroupsAdmin(store: store, adminGroup: "admins").addMember("eve", to: "admins")
            }
            #expect(
                try await client.json("/api/admin/groups/admins/members/pat", .delete, headers: session.bearerHeaders)
                    .status == .noContent)
            let disabledSelf = try await client.json(
                "/api/admin/people/\(ada.id)/disable", .post, headers: session.bearerHeaders)
            #expect(disabledSelf.status == .ok, "\(disabledSelf.text)")
        }
    }

    /// Where two transactions wait for each other: each says it arrived, then waits until the other has too, or
    /// until `atMost` passed (the rule's lock holds the other back before it can arrive: then the first goes on).
    final class Meeting: Sendable {
        private let arrived = Mutex(0)

        func arrive(waitingFor count: Int, atMost: Duration) async {
            arrived.withLock { $0 += 1 }
            let end = ContinuousClock.now + atMost
            while arrived.withLock({ $0 }) < count, ContinuousClock.now < end {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func twoAdminsAtOnceCannotBothSucceed(_ db: TestDatabase) async throws {
        try await Self.withAdmin(db) { server, client, _, _ in
            _ = try await signUpWithPasskey(client, "eve")
            // On PostgreSQL two handles on the database, as two nodes have: each admin's change goes through its
            // own, and each transaction, its change made and counted, waits for the other to get as far before it
            // commits. Without the rule's lock each would count one administrator left (its own write seen, the
            // other's not yet committed) and both would commit; with it, the second waits for the first's commit. SQLite serves one
            // node: its changes share the node's handle, whose writers take turns.
            _ = try await server.withStore { store in
                try await server.withStore { second in
                    let other = db.engine == .sqlite ? store : second
                    try await GroupsAdmin(store: store, adminGroup: "admins").addMember("eve", to: "admins")
                    let service = PeopleService(
                        store: store, groups: StoredAccountGroups(store: store), adminGroup: "admins")
                    for round in 0..<3 {
                        let ada = try #require(try await store.user(usernameKey: "ada"))
                        let eve = try #require(try await store.user(usernameKey: "eve"))
                        let meeting = Meeting()
                        let held: @Sendable () async -> Void = {
                            await meeting.arrive(waitingFor: 2, atMost: .milliseconds(500))
                        }
                        let rule = AdministratorRule(
                            groups: StoredAccountGroups(store: store, afterCounting: held), adminGroup: "admins")
                        let otherRule = AdministratorRule(
                            groups: StoredAccountGroups(store: other, afterCounting: held), adminGroup: "admins")
                        let now = server.clock.now
                        // ada disabled (even rounds) or deleted (odd rounds) while eve is disabled.
                        async let first: Result<Bool?, any Error> = Self.attempt {
                            try await store.peopleChange(
                                rule: rule,
                                audit: AdminActor.commandLine.event(.adminDisabled, subject: ada, detail: "", at: now)
                            ) { db in
                                round.isMultiple(of: 2)
                                    ? try await store.setDisabled(userID: ada.id, true, at: now, in: db)
                                    : try await store.deleteUser(id: ada.id, in: db)
                            }
                        }
                        async let second: Result<Bool?, any Error> = Self.attempt {
                            try await other.peopleChange(
                                rule: otherRule,
                                audit: AdminActor.commandLine.event(.adminDisabled, subject: eve, detail: "", at: now)
                            ) { db in
                                try await other.setDisabled(userID: eve.id, true, at: now, in: db)
                            }
                        }
                        let results = await [first, second]
                        let refused = results.filter {
                            if case .failure(let error as APIError) = $0 { return error.code == .lastAdministrator }
                            return false
                        }
                        let succeeded = results.filter {
                            if case .success(true) = $0 { return true } else { return false }
                        }
                        #expect(refused.count == 1 && succeeded.count == 1, "round \(round): \(results)")
                        #expect(
                            try await StoredAccountGroups.administrators(of: "admins", in: store.db) == 1,
                            "round \(round)")
                        // Back to two administrators: ada again if she was deleted, both enabled.
                        if try await store.user(usernameKey: "ada") == nil {
                            _ = try await signUpWithPasskey(client, "ada")
                            try await GroupsAdmin(store: store, adminGroup: "admins").addMember("ada", to: "admins")
                        }
                        for name in ["ada", "eve"] { _ = try await service.enable(name, by: .commandLine) }
                        #expect(try await StoredAccountGroups.administrators(of: "admins", in: store.db) == 2)
                    }
                }
            }
        }
    }

    static func attempt<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    @Test(arguments: TestDatabase.all)
    func usersCreateAdminPutsTheAccountInTheAdminGroup(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.withStore { store in
            let admin = Admin(store: store, groups: StoredAccountGroups(store: store), adminGroup: "admins")
            let said = try await admin.createUser(
                "root", displayName: nil, password: "correct horse battery", scryptLogN: 10, administrator: true)
            #expect(said.hasSuffix("and added to admins"))
            _ = try await admin.createUser(
                "second", displayName: nil, password: "correct horse battery", scryptLogN: 10, administrator: true)
            _ = try await admin.createUser(
                "plain", displayName: nil, password: "correct horse battery", scryptLogN: 10)
            let members = try await store.groupMembers(slug: "admins")?.map(\.username)
            #expect(members == ["root", "second"])
        }
    }
}
