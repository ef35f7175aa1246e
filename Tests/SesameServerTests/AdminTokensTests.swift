import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SQLKit
import Synchronization
import Testing

@testable import SesameAdminTokens
@testable import SesameCore
@testable import SesameGroups
@testable import SesameServer

/// Every log line a server wrote, with its metadata, to check that no secret reaches the log.
final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "sesame.test.captured") { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            log.lines.withLock { $0.append("\(event.message) \(all)") }
        }
    }
}

/// Admin API tokens (`SesameAdminTokens`): made, used with and without their scope, refused alike when unknown,
/// expired or revoked, rate limited per address, never logged; and the audit log's admin API: filters, keyset
/// pages, CSV, and the indexes its statements use.
@Suite struct AdminTokensTests {
    /// An admin (a passkey session in the `admins` group) and a way to make tokens at the "command line".
    func admin(_ server: TestServer, _ client: some TestClientProtocol) async throws -> SignedIn {
        let (session, _) = try await signUpWithPasskey(client, "ada")
        try await server.withStore { store in
            let groups = GroupsAdmin(store: store, adminGroup: "admins")
            try await groups.add("admins", name: nil, claims: nil)
            try await groups.addMember("ada", to: "admins")
        }
        return session
    }

    func cli(_ server: TestServer) -> @Sendable (String, String, Int?) async throws -> (token: String, id: String) {
        { name, scopes, days in
            try await server.withStore { store in
                let lines = try await AdminTokensAdmin(store: store, clock: server.clock.serverClock)
                    .create(name: name, scopes: scopes, days: days)
                let id = try #require(lines[1].firstMatch(of: #/admin token ([0-9a-f]{16}) /#)?.1)
                return (lines[0], String(id))
            }
        }
    }

    static func bearer(_ token: String, from address: String = "192.0.2.1") -> HTTPFields {
        [.authorization: "Bearer \(token)", .init("X-Forwarded-For")!: address]
    }

    @Test func everyFeaturesScopeIsAKnownScope() throws {
        let all = AdminScope.all
        #expect(Set(all).count == all.count)
        for scope in [
            GroupsRoutes.scope, .people, .overview, .apps, .keys, .metadata, .settings, .invitations,
            .audit, .forwardAuth, .tokens,
        ] {
            #expect(all.contains(scope), "\(scope) is not in AdminScope.all")
        }
        #expect(AdminScope.forwardAuth.rawValue == "forward-auth")
        #expect(throws: APIError.self) { try AdminTokens.checkedScopes(["groups", "root"]) }
        #expect(throws: APIError.self) { try AdminTokens.checkedScopes([" ", ""]) }
        #expect(try AdminTokens.checkedScopes(["audit", "groups", "groups"]) == [.groups, .audit])
    }

    @Test func tokensLookLikeThemselves() {
        let (token, hash) = AdminTokens.newToken()
        #expect(token.hasPrefix("sesame_at_") && token.count == 53 && AdminTokens.wellFormed(token))
        #expect(hash == Secrets.sha256(token))
        #expect(!AdminTokens.wellFormed("sesame_at_" + String(repeating: "A", count: 42)))
        #expect(!AdminTokens.wellFormed(String(token.dropFirst(3))))
        #expect(AdminTokens.newToken().token != token)
    }

    @Test(arguments: TestDatabase.all)
    func aTokenLivesDiesAndIsRefusedAlike(_ db: TestDatabase) async throws {
        var configured = TestServer(db)
        let log = CapturedLog()
        configured.logger = log.logger
        let server = configured
        let make = cli(server)
        try await server.app().test(.router) { client in
            let session = try await admin(server, client)
            // The command line prints the token once, then what it is.
            let lines = try await server.withStore { store in
                try await AdminTokensAdmin(store: store, clock: server.clock.serverClock)
                    .create(name: "backup script", scopes: "groups,people", days: nil)
            }
            #expect(lines.count == 2 && lines[0].hasPrefix("sesame_at_") && lines[0].count == 53)
            #expect(lines[1].contains("(backup script), scopes people,groups, until"), "\(lines[1])")
            let token = lines[0]
            let id = try #require(lines[1].firstMatch(of: #/admin token ([0-9a-f]{16}) /#)?.1).description
            for refused in ["groups,root", ""] {
                await #expect(throws: AdminError.self) {
                    try await server.withStore { store in
                        try await AdminTokensAdmin(store: store).create(name: "x", scopes: refused, days: nil)
                    }
                }
            }
            for days in [0, 366] {
                await #expect(throws: AdminError.self) {
                    try await server.withStore {
                        try await AdminTokensAdmin(store: $0).create(name: "x", scopes: "people", days: days)
                    }
                }
            }

            // With its scope: the groups API answers; its change is audited naming the token.
            let listed = try await client.json("/api/admin/groups", headers: Self.bearer(token))
            #expect(listed.status == .ok, "\(listed.text)")
            let made = try await client.json(
                "/api/admin/groups", .post, body: #"{"slug": "ops"}"#, headers: Self.bearer(token))
            #expect(made.status == .created, "\(made.text)")
            let added = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 50) }
                .first { $0.kind == "group.added" && $0.detail.hasPrefix("ops") }
            #expect(added?.detail == "ops by token backup script (\(id))")
            // Without it: 403 admin_scope_missing.
            let audit = try await client.json("/api/admin/audit", headers: Self.bearer(token))
            #expect(audit.status == .forbidden && audit.errorCode == "admin_scope_missing")
            // Its use is noted on the token.
            let used = try await server.withStore { try await AdminTokensAdmin(store: $0).list() }
            #expect(used.count == 1 && used[0].hasPrefix(id) && !used[0].contains("last-used=never"), "\(used)")

            // A token cannot mint tokens, even with the `tokens` scope; a person can.
            let minter = try await make("minter", "tokens", nil)
            let minted = try await client.json(
                "/api/admin/tokens", .post, body: #"{"name": "more", "scopes": ["people"]}"#,
                headers: Self.bearer(minter.token))
            #expect(minted.status == .forbidden && minted.errorCode == "admin_token_needs_person", "\(minted.text)")
            let byPerson = try await client.json(
                "/api/admin/tokens", .post, body: #"{"name": "console made", "scopes": ["audit"], "expiresInDays": 7}"#,
                headers: session.bearerHeaders)
            #expect(byPerson.status == .created, "\(byPerson.text)")
            let personToken = try #require(byPerson.object["token"] as? String)
            let described = try #require(byPerson.object["adminToken"] as? [String: Any])
            #expect(described["createdBy"] as? String == "admin ada" && described["scopes"] as? [String] == ["audit"])
            #expect(try await client.json("/api/admin/audit", headers: Self.bearer(personToken)).status == .ok)
            for (body, code) in [
                (#"{"name": "", "scopes": ["audit"]}"#, "invalid_admin_token_name"),
                (#"{"name": "x", "scopes": ["root"]}"#, "invalid_admin_token_scope"),
                (#"{"name": "x", "scopes": []}"#, "invalid_admin_token_scope"),
                (#"{"name": "x", "scopes": ["audit"], "expiresInDays": 400}"#, "invalid_admin_token_lifetime"),
            ] {
                let answer = try await client.json(
                    "/api/admin/tokens", .post, body: body, headers: session.bearerHeaders)
                #expect(answer.status == .badRequest && answer.errorCode == code, "\(body): \(answer.text)")
            }
            let list = try await client.json("/api/admin/tokens", headers: Self.bearer(minter.token)).object
            #expect((list["tokens"] as? [[String: Any]])?.count == 3)
            #expect((list["scopes"] as? [String])?.contains("forward-auth") == true)

            // Unknown, malformed, expired and revoked: one answer.
            let unknown = try await client.json(
                "/api/admin/groups", headers: Self.bearer(AdminTokens.newToken().token))
            let malformed = try await client.json("/api/admin/groups", headers: Self.bearer("sesame_at_short"))
            let shortLived = try await make("short", "groups", 1)
            #expect(try await client.json("/api/admin/groups", headers: Self.bearer(shortLived.token)).status == .ok)
            server.clock.advance(86400 + 1)
            let expired = try await client.json("/api/admin/groups", headers: Self.bearer(shortLived.token))
            // A person's session outlives the window, so the revocation goes through the command line here.
            let revokedLine = try await server.withStore { try await AdminTokensAdmin(store: $0).revoke(id) }
            #expect(revokedLine == "admin token \(id) (backup script) revoked")
            await #expect(throws: AdminError.self) {
                try await server.withStore { try await AdminTokensAdmin(store: $0).revoke(id) }
            }
            let revoked = try await client.json("/api/admin/groups", headers: Self.bearer(token))
            for answer in [unknown, malformed, expired, revoked] {
                #expect(answer.status == .unauthorized && answer.errorCode == "unauthenticated", "\(answer.text)")
                #expect(answer.object["message"] as? String == unknown.object["message"] as? String)
            }
            // Revoking through the API, with the `tokens` scope.
            #expect(
                try await client.json("/api/admin/tokens/\(minter.id)", .delete, headers: Self.bearer(minter.token))
                    .status == .noContent)
            #expect(
                try await client.json("/api/admin/tokens", headers: Self.bearer(minter.token)).status == .unauthorized)

            // Made and revoked are audited; uses are not.
            let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 100) }
                .filter { $0.kind.hasPrefix("admin_token.") }
            #expect(events.filter { $0.kind == "admin_token.created" }.count == 4)
            #expect(events.filter { $0.kind == "admin_token.revoked" }.count == 2)
            #expect(
                events.contains {
                    $0.kind == "admin_token.revoked"
                        && $0.detail == "\(minter.id) minter by token minter (\(minter.id))"
                })

            // No token, nor its secret half, reaches the log.
            let logged = log.all.joined(separator: "\n")
            #expect(!log.all.isEmpty)
            for secret in [token, personToken, minter.token, shortLived.token] {
                #expect(!logged.contains(String(secret.dropFirst(10))), "a token was logged")
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func wrongTokensAreLimitedPerAddress(_ db: TestDatabase) async throws {
        var configured = TestServer(db)
        configured.rateLimits.perAccount = 3
        let server = configured
        let right = try await cli(server)("ci", "groups", nil)
        try await server.app().test(.router) { client in
            for _ in 0..<3 {
                let wrong = try await client.json(
                    "/api/admin/groups", headers: Self.bearer(AdminTokens.newToken().token, from: "198.51.100.7"))
                #expect(wrong.status == .unauthorized)
            }
            let limited = try await client.json(
                "/api/admin/groups", headers: Self.bearer(AdminTokens.newToken().token, from: "198.51.100.7"))
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil, "\(limited.text)")
            // A right token from the limited address is refused too, until the window ends.
            let rightButLimited = try await client.json(
                "/api/admin/groups", headers: Self.bearer(right.token, from: "198.51.100.7"))
            #expect(rightButLimited.status == .tooManyRequests)
            // Another address is not held back, and its right tries do not count.
            for _ in 0..<5 {
                #expect(
                    try await client.json("/api/admin/groups", headers: Self.bearer(right.token, from: "203.0.113.9"))
                        .status == .ok)
            }
            server.clock.advance(server.rateLimits.window + 1)
            #expect(
                try await client.json("/api/admin/groups", headers: Self.bearer(right.token, from: "198.51.100.7"))
                    .status == .ok)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aClientCannotNameItsOwnAddress(_ db: TestDatabase) async throws {
        // Without trusted proxies, X-Forwarded-For is the client's word and counts for nothing: every try below comes
        // from the connection's one address, whatever the header says.
        var configured = TestServer(db) { $0.trustForwardedFor = false }
        configured.rateLimits.perAccount = 3
        let server = configured
        let right = try await cli(server)("ci", "groups", nil)
        try await server.app().test(.router) { client in
            for index in 0..<3 {
                let wrong = try await client.json(
                    "/api/admin/groups",
                    headers: Self.bearer(AdminTokens.newToken().token, from: "198.51.100.\(index)"))
                #expect(wrong.status == .unauthorized)
            }
            let limited = try await client.json(
                "/api/admin/groups", headers: Self.bearer(right.token, from: "203.0.113.77"))
            #expect(limited.status == .tooManyRequests, "\(limited.text)")
        }
    }

    // MARK: The audit log

    /// Seeds `count` events: alternately ada's and bob's, kinds cycling, one second apart from `start`.
    static func seed(_ store: SQLStore, ada: User, bob: User, start: Date, count: Int) async throws {
        let kinds = ["sign_in.passkey", "sign_in.password", "passkey.added"]
        for index in 0..<count {
            let user = index % 2 == 0 ? ada : bob
            try await store.appendAudit(
                AuditEvent(
                    at: start.addingTimeInterval(TimeInterval(index)), kind: kinds[index % 3],
                    outcome: index % 5 == 0 ? "failure" : "success", userID: user.id, username: user.username,
                    clientAddress: "192.0.2.\(index % 7)", detail: "seed \(index)"))
        }
    }

    @Test(arguments: TestDatabase.all)
    func theAuditLogFiltersPagesAndExports(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let bob = try await server.seedUser("bob")
        let start = server.clock.now.addingTimeInterval(-3600)
        let reader = try await cli(server)("auditor", "audit", nil)
        try await server.app().test(.router) { client in
            let session = try await admin(server, client)
            // The page: the console's frame around the filters, its script beside it; for people only.
            let console = try await client.json("/console/audit", headers: [.cookie: session.cookie])
            #expect(
                console.status == .ok && console.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            #expect(console.text.contains(#"<script type="module" src="/console/static/console-audit.js">"#))
            #expect(console.text.contains(#"<a href="/console/audit" aria-current="page">Audit log</a>"#))
            #expect(console.text.contains(#"<form id="filters""#) && !console.text.contains("{{"))
            let script = try await client.json("/console/static/console-audit.js")
            #expect(script.status == .ok && script.text.contains("/api/admin/audit"))
            #expect(try await client.json("/console/audit", headers: Self.bearer(reader.token)).status == .forbidden)
            let ada = try #require(try await server.withStore { try await $0.user(usernameKey: "ada") })
            try await server.withStore { store in
                try await Self.seed(store, ada: ada, bob: bob, start: start, count: 45)
                // Two events in the same millisecond: the id breaks the tie.
                for detail in ["twin a", "twin b"] {
                    try await store.appendAudit(
                        AuditEvent(
                            at: start.addingTimeInterval(10), kind: "passkey.added", outcome: "success",
                            userID: bob.id, username: "bob", clientAddress: "192.0.2.1", detail: detail))
                }
                try await store.appendAudit(
                    AuditEvent(
                        at: start.addingTimeInterval(50), kind: "admin.created", outcome: "success", userID: bob.id,
                        username: "bob", clientAddress: "cli",
                        detail: "=HYPERLINK(\"http://evil\"),\"x\"\nnext"))
            }
            let headers = Self.bearer(reader.token)
            func page(_ query: String) async throws -> (ids: [String], events: [[String: Any]], next: String?) {
                let answer = try await client.json("/api/admin/audit?\(query)", headers: headers)
                #expect(answer.status == .ok, "\(query): \(answer.text)")
                let events = answer.object["events"] as? [[String: Any]] ?? []
                return (events.compactMap { $0["id"] as? String }, events, answer.object["next"] as? String)
            }

            // By person (username in any case, or id), kind and outcome together; newest first.
            let bobs = try await page("person=BOB&kind=passkey.added&limit=200")
            let expected = try await server.withStore { store in
                try await store.auditEvents(userID: bob.id, limit: 500).filter { $0.kind == "passkey.added" }
            }
            #expect(Set(bobs.ids) == Set(expected.map(\.id)) && bobs.ids.count == expected.count)
            #expect(
                bobs.events.allSatisfy { $0["userId"] as? String == bob.id && $0["kind"] as? String == "passkey.added" }
            )
            let times = bobs.events.compactMap { $0["at"] as? String }
            #expect(times == times.sorted(by: >))
            #expect(try await page("person=\(bob.id)&kind=passkey.added&limit=200").ids == bobs.ids)
            let failures = try await page("outcome=failure&kind=sign_in.passkey&limit=200")
            #expect(failures.events.count == 3)  // indices 0, 15, 30
            #expect(try await page("person=nobody").ids.isEmpty)

            // Time range: [from, to).
            let iso = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            let ranged = try await page(
                "from=\(start.addingTimeInterval(20).formatted(iso))&to=\(start.addingTimeInterval(30).formatted(iso))&limit=200"
            )
            #expect(ranged.events.count == 10, "\(ranged.events.map { $0["detail"] ?? "" })")
            let millis = try await page(
                "from=\(start.addingTimeInterval(20).milliseconds)&to=\(start.addingTimeInterval(30).milliseconds)&limit=200"
            )
            #expect(millis.ids == ranged.ids)

            // Keyset pages of 7 walk every event once, in order, ties included.
            var walked: [String] = []
            var cursor: String?
            repeat {
                let next = try await page("limit=7" + (cursor.map { "&after=\($0)" } ?? ""))
                walked += next.ids
                cursor = next.next
            } while cursor != nil
            let everything = try await page("limit=200")
            #expect(walked == everything.ids && Set(walked).count == walked.count && walked.count >= 48)

            // Unreadable filters: 400 invalid_audit_filter.
            for query in ["from=yesterday", "outcome=maybe", "limit=0", "limit=201", "after=xyz", "kind=a&kind=b"] {
                let answer = try await client.json("/api/admin/audit?\(query)", headers: headers)
                #expect(answer.status == .badRequest && answer.errorCode == "invalid_audit_filter", "\(query)")
            }

            // CSV: the same filter, every row, cells a spreadsheet would run are quoted with '.
            let csv = try await client.execute(
                uri: "/api/admin/audit.csv?person=bob", method: .get, headers: headers)
            #expect(csv.status == .ok && csv.headers[.contentType] == "text/csv; charset=utf-8")
            let text = String(buffer: csv.body)
            let rows = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(rows.first == "at,kind,outcome,user_id,username,client_address,detail,id,client_id")
            #expect(text.contains(#","'=HYPERLINK(""http://evil""),""x"""# + "\nnext\","))
            let bobCount = try await server.withStore { try await $0.auditEvents(userID: bob.id, limit: 500).count }
            #expect(text.components(separatedBy: ",bob,").count - 1 == bobCount)
            #expect(AuditRoutes.csvCell("-1+2") == "'-1+2" && AuditRoutes.csvCell("+x") == "'+x")
            #expect(AuditRoutes.csvCell("@SUM(A1)") == "'@SUM(A1)" && AuditRoutes.csvCell("a,b") == "\"a,b\"")
            #expect(AuditRoutes.csvCell("plain") == "plain" && AuditRoutes.csvCell("\tx") == "'\tx")
        }
    }

    @Test(arguments: TestDatabase.all)
    func theAuditFiltersUseTheirIndexes(_ db: TestDatabase) async throws {
        let recorder = QueryPlanTests.Recorder()
        var configured = TestServer(db)
        configured.statementObserver = recorder.observer
        let server = configured
        let ada = try await server.seedUser("ada")
        try await server.withStore { store in
            try await Self.seed(store, ada: ada, bob: ada, start: server.clock.now, count: 20)
        }
        let reader = try await cli(server)("auditor", "audit", nil)
        try await server.app().test(.router) { client in
            recorder.record(true)
            let headers = Self.bearer(reader.token)
            for query in ["person=ada&limit=5", "kind=sign_in.passkey&limit=5"] {
                let first = try await client.json("/api/admin/audit?\(query)", headers: headers)
                let next = try #require(first.object["next"] as? String)
                #expect(
                    try await client.json("/api/admin/audit?\(query)&after=\(next)", headers: headers).status == .ok)
            }
            recorder.record(false)
            let statements = recorder.statements.filter { $0.sql.contains("FROM audit_events") }
            #expect(statements.count == 4, "\(statements.map(\.sql))")
            try await server.withStore { store in
                for statement in statements {
                    let plan = try await QueryPlanTests.plans(of: statement, in: store).joined(separator: "\n")
                    #expect(QueryPlanTests.scannedTable(in: plan, engine: store.engine.kind) == nil, "\(plan)")
                    let index = statement.sql.contains("user_id =") ? "audit_events_user_at" : "audit_events_kind_at"
                    #expect(plan.contains(index), "\(db): \(statement.sql)\n\(plan)")
                }
            }
        }
    }
}
