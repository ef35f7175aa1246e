import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OneTimeCode
import SQLKit
import Synchronization
import Testing
import VirtualAuthenticator

@testable import SesameServer
@testable import SesameCore

/// Every statement the sign-in path runs finds its rows through an index, on both engines (issue 13: sign-in cost
/// must not grow with the number of accounts). The statements are not listed by hand: the server runs the real
/// requests (passkey options and verify, discoverable and username-first, a refused assertion, password and TOTP
/// sign-in, a wrong password, session lookups) with a `StatementObserver`, and each distinct statement it ran is
/// explained with the binds it ran with: `EXPLAIN QUERY PLAN` on SQLite, `EXPLAIN` on PostgreSQL. A plan that
/// scans a table fails the test and names the statement.
@Suite struct QueryPlanTests {
    /// The statements a server ran while `recording` was on, in order, each once (by SQL text).
    final class Recorder: Sendable {
        private let state = Mutex<(on: Bool, seen: Set<String>, statements: [Statement])>((false, [], []))

        struct Statement: Sendable {
            let sql: String
            let binds: [any Encodable & Sendable]
        }

        var observer: StatementObserver {
            { [self] sql, binds in
                state.withLock {
                    if $0.on, $0.seen.insert(sql).inserted { $0.statements.append(Statement(sql: sql, binds: binds)) }
                }
            }
        }

        func record(_ on: Bool) { state.withLock { $0.on = on } }
        var statements: [Statement] { state.withLock { $0.statements } }
    }

    /// `EXPLAIN …` around a recorded statement, with its recorded binds (placeholders are kept as serialised).
    struct Explained: SQLExpression {
        let prefix: String
        let statement: Recorder.Statement

        func serialize(to serializer: inout SQLSerializer) {
            serializer.write(prefix + statement.sql)
            serializer.binds += statement.binds
        }
    }

    static let ceremony = HTTPField.Name("Sesame-Ceremony")!
    static let origin = "http://localhost:8080"

    func passkeyCeremony(
        _ client: some TestClientProtocol, _ path: String, _ body: String, _ finish: String,
        _ answer: ([UInt8]) throws -> [UInt8]
    ) async throws -> TestResponse {
        let options = try await client.json(path, .post, body: body)
        #expect(options.status == .ok, "\(path): \(options.status) \(options.text)")
        let json = try answer(Array(options.body.readableBytesView))
        return try await client.json(
            finish, .post, body: #"{"credential":"# + String(decoding: json, as: UTF8.self) + "}",
            headers: [Self.ceremony: options.headers[Self.ceremony] ?? ""])
    }

    @Test(arguments: TestDatabase.all)
    func everySignInStatementUsesAnIndex(_ db: TestDatabase) async throws {
        let recorder = Recorder()
        var configured = TestServer(db)
        configured.statementObserver = recorder.observer
        let server = configured
        let va = VirtualAuthenticator()
        let other = VirtualAuthenticator()
        let stranger = VirtualAuthenticator()
        try await server.app().test(.router) { client in
            // Setup: two accounts with passkeys (a second one, so no lookup can pass by returning the only row),
            // one with a password and an authenticator app, and a passkey the server never registered.
            for (authenticator, name) in [(va, "ada"), (other, "bob")] {
                let created = try await passkeyCeremony(
                    client, "/api/registration/options", jsonString(["username": name]), "/api/registration"
                ) { try authenticator.create(optionsJSON: $0, origin: Self.origin).json }
                #expect(created.status == .created, "\(created.text)")
            }
            _ = try await server.seedUser("cy", password: "correct horse battery staple")
            let cy = try await signInWithPassword(client, "cy", "correct horse battery staple")
            let ghost = try await client.json("/api/registration/options", .post, body: #"{"username":"ghost"}"#)
            _ = try stranger.create(optionsJSON: Array(ghost.body.readableBytesView), origin: Self.origin)
            let setup = try await client.json("/api/account/totp", .post, body: "{}", headers: cy.bearerHeaders)
            let totp = try TOTP(secret: try OTPSecret(base32: try #require(setup.object["secret"] as? String)))
            let confirmed = try await client.json(
                "/api/account/totp/confirm", .post, body: jsonString(["code": totp.code(at: server.clock.now)]),
                headers: cy.bearerHeaders)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            server.clock.advance(30)

            recorder.record(true)
            // Passkey sign-in without and with a username, and one the server refuses (a passkey it does not know).
            let discoverable = try await passkeyCeremony(
                client, "/api/authentication/options", "{}", "/api/authentication"
            ) { try va.get(optionsJSON: $0, origin: Self.origin).json }
            #expect(discoverable.status == .ok, "\(discoverable.text)")
            let named = try await passkeyCeremony(
                client, "/api/authentication/options", jsonString(["username": "ada"]), "/api/authentication"
            ) { try va.get(optionsJSON: $0, origin: Self.origin).json }
            #expect(named.status == .ok, "\(named.text)")
            let refused = try await passkeyCeremony(
                client, "/api/authentication/options", "{}", "/api/authentication"
            ) { try stranger.get(optionsJSON: $0, origin: Self.origin).json }
            #expect(refused.status != .ok)
            // Password + TOTP, and a wrong password.
            let first = try await client.json(
                "/api/sessions/password", .post,
                body: jsonString(["username": "cy", "password": "correct horse battery staple"]))
            let second = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString([
                    "factor": "totp", "code": totp.code(at: server.clock.now),
                    "pendingToken": first.object["pendingToken"] as? String ?? "",
                ]))
            #expect(second.status == .ok, "\(second.text)")
            let wrong = try await client.json(
                "/api/sessions/password", .post, body: jsonString(["username": "cy", "password": "wrong password!"]))
            #expect(wrong.status == .unauthorized)
            // The session the sign-in made, looked up by its bearer token and by its cookie.
            let token = discoverable.object["sessionToken"] as? String ?? ""
            #expect(try await client.json("/api/account", headers: [.authorization: "Bearer \(token)"]).status == .ok)
            let cookie = named.cookie(named: "sesame_session") ?? ""
            #expect(try await client.json("/api/account/sessions", headers: [.cookie: cookie]).status == .ok)
            recorder.record(false)
        }

        let statements = recorder.statements
        // The path's reads and writes: challenges, credentials, users, sessions, rate limits and audit events.
        for table in ["challenges", "credentials", "users", "sessions", "rate_limits", "audit_events"] {
            #expect(statements.contains { $0.sql.contains(table) }, "no recorded statement touches \(table)")
        }
        try await server.withStore { store in
            for statement in statements {
                for plan in try await Self.plans(of: statement, in: store) {
                    if ProcessInfo.processInfo.environment["SESAME_PRINT_PLANS"] != nil { print(plan) }
                    #expect(
                        Self.scannedTable(in: plan, engine: store.engine.kind) == nil, "\(db) scans a table:\n\(plan)")
                }
            }
            // The check sees a scan where there is one: nothing indexes a session's user agent.
            let unindexed = try await Self.plans(
                of: .init(
                    sql: "SELECT id FROM sessions WHERE user_agent = \(db == .sqlite ? "?" : "$1")", binds: ["x"]),
                in: store)
            #expect(
                unindexed.map { Self.scannedTable(in: $0, engine: store.engine.kind) } == ["sessions"], "\(unindexed)")
            if db == .sqlite {
                // `EXPLAIN QUERY PLAN` of the INSERT into the passkey sign-in view does not show its trigger's
                // statements: each is explained on its own, `NEW.x` becoming a parameter (SQLite plans without
                // looking at parameter values) and `RAISE(…)`, which only a trigger may use, a constant.
                let row = try await store.engine.sql.raw(
                    "SELECT sql FROM sqlite_temp_master WHERE type = 'trigger' AND name = 'passkey_sign_in_guarded'"
                ).first()
                let trigger = try #require(try row?.decode(column: "sql", as: String.self))
                let body = try #require(trigger.range(of: " BEGIN").map { trigger[$0.upperBound...] })
                let statements = body.dropLast("END".count).split(separator: ";").map {
                    $0.replacing(#/NEW\.\w+/#, with: "?").replacing(#/RAISE\([^)]*\)/#, with: "NULL")
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                }.filter { !$0.isEmpty }
                #expect(statements.count == 6)
                for statement in statements {
                    let parameters = statement.filter { $0 == "?" }.count
                    let nulls = [any Encodable & Sendable](repeating: Int?.none, count: parameters)
                    let plan = try await Self.plans(of: .init(sql: statement, binds: nulls), in: store).joined()
                    if ProcessInfo.processInfo.environment["SESAME_PRINT_PLANS"] != nil { print(plan) }
                    #expect(
                        Self.scannedTable(in: plan, engine: store.engine.kind) == nil,
                        "trigger statement scans:\n\(plan)")
                }
            }
        }
    }

    /// The expiry purge every node runs each minute deletes through indexes too: its cost follows what expired,
    /// not how many sessions, grants and rate-limit windows exist.
    @Test(arguments: TestDatabase.all)
    func thePurgeUsesIndexes(_ db: TestDatabase) async throws {
        let recorder = Recorder()
        var configured = TestServer(db)
        configured.statementObserver = recorder.observer
        let server = configured
        try await server.withStore { store in
            recorder.record(true)
            try await store.purgeExpired(now: server.clock.now, rateLimitWindow: 900)
            recorder.record(false)
            let deletes = recorder.statements.filter { $0.sql.hasPrefix("DELETE") }
            #expect(deletes.count >= 6, "\(deletes.map(\.sql))")
            for statement in deletes {
                for plan in try await Self.plans(of: statement, in: store) {
                    #expect(
                        Self.scannedTable(in: plan, engine: store.engine.kind) == nil,
                        "\(db) purge scans a table:\n\(statement.sql)\n\(plan)")
                }
            }
        }
    }

    /// The plan of one statement, as text (one string per statement: SQLite's plan rows or PostgreSQL's lines).
    static func plans(of statement: Recorder.Statement, in store: SQLStore) async throws -> [String] {
        let sql = statement.sql.trimmingCharacters(in: .whitespacesAndNewlines)
        let keyword = sql.prefix { !$0.isWhitespace }.uppercased()
        // Transaction control and settings have no plan.
        guard ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(keyword) else { return [] }
        switch store.engine.kind {
        case .sqlite:
            let rows = try await store.engine.sql.raw(
                "\(Explained(prefix: "EXPLAIN QUERY PLAN ", statement: statement))"
            )
            .all()
            let details = try rows.map { try $0.decode(column: "detail", as: String.self) }
            return ["\(sql)\n  " + details.joined(separator: "\n  ")]
        case .postgres:
            // The test tables hold a handful of rows, and for so few PostgreSQL's planner rightly prefers reading
            // the whole table to an index. `enable_seqscan = off` makes it take an index whenever one can serve
            // the statement, so a sequential scan left in the plan means no index can: what this test looks for.
            // `SET LOCAL` lasts only for this transaction, on this pooled connection.
            let lines = try await store.engine.withTransaction { db in
                try await db.raw("SET LOCAL enable_seqscan = off").run()
                return try await db.raw("\(Explained(prefix: "EXPLAIN ", statement: statement))").all().map {
                    try $0.decode(column: "QUERY PLAN", as: String.self)
                }
            }
            return ["\(sql)\n  " + lines.joined(separator: "\n  ")]
        }
    }

    /// The table a plan reads in full, if any. SQLite: `SCAN t` (also `SCAN t USING INDEX …`, a walk through a whole
    /// index) rather than `SEARCH t USING …`; `SCAN CONSTANT ROW` reads no table. PostgreSQL: `Seq Scan on t`.
    static func scannedTable(in plan: String, engine: SQLEngineKind) -> String? {
        let lines = plan.split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
        for line in lines {
            switch engine {
            case .sqlite:
                if let match = line.firstMatch(of: #/^SCAN (\w+)/#), match.1 != "CONSTANT" { return String(match.1) }
            case .postgres:
                if let match = line.firstMatch(of: #/Seq Scan on (\w+)/#) { return String(match.1) }
            }
        }
        return nil
    }

    @Test func scansAreRecognised() {
        #expect(Self.scannedTable(in: "q\n  SCAN credentials", engine: .sqlite) == "credentials")
        #expect(Self.scannedTable(in: "q\n  SCAN c USING COVERING INDEX credentials_user", engine: .sqlite) == "c")
        #expect(
            Self.scannedTable(in: "q\n  SEARCH c USING INDEX sqlite_autoindex_credentials_1 (id=?)", engine: .sqlite)
                == nil)
        #expect(Self.scannedTable(in: "q\n  SCAN CONSTANT ROW", engine: .sqlite) == nil)
        #expect(Self.scannedTable(in: "q\n  ->  Seq Scan on sessions  (cost=…)", engine: .postgres) == "sessions")
        #expect(Self.scannedTable(in: "q\n  Index Scan using sessions_pkey on sessions", engine: .postgres) == nil)
    }
}
