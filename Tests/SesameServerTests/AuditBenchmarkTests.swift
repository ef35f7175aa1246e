import Foundation
import SQLKit
import Testing

@testable import SesameAdminTokens
@testable import SesameCore
@testable import SesameServer

/// The audit log's filtered page at a million rows (docs/console.md, "At a million rows"), beside a plain indexed
/// SELECT on the same table in the same run. A measurement to read, not a check: it runs only when
/// `SESAME_BENCH_AUDIT_ROWS` is set (`scripts/bench-audit` sets it), so the every-submission suite never pays for it.
@Suite struct AuditBenchmarkTests {
    static let rows = ProcessInfo.processInfo.environment["SESAME_BENCH_AUDIT_ROWS"].flatMap(Int.init)

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    @Test(.enabled(if: rows != nil, "a benchmark: scripts/bench-audit sets SESAME_BENCH_AUDIT_ROWS"))
    func aFilteredPageAtAMillionRows() async throws {
        let count = try #require(Self.rows)
        let server = TestServer(.sqlite)
        let users = 10_000
        let kinds = (0..<30).map { "bench.kind_\($0)" }
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        try await server.withStore { store in
            var generator = SystemRandomNumberGenerator()
            let filled = ContinuousClock.now
            // One transaction, 500 rows a statement (4,000 binds, under SQLite's limit).
            try await store.engine.withTransaction { db in
                var generator = SystemRandomNumberGenerator()
                var index = 0
                while index < count {
                    let batch = min(500, count - index)
                    var values: [SQLQueryString] = []
                    for row in index..<(index + batch) {
                        let user = Int.random(in: 0..<users, using: &generator)
                        values.append(
                            """
                            (\(bind: "bench-\(row)"), \(bind: start.milliseconds + Int64(row) * 50),
                            \(bind: kinds[Int.random(in: 0..<kinds.count, using: &generator)]),
                            \(bind: Int.random(in: 0..<10, using: &generator) == 0 ? "failure" : "success"),
                            \(bind: "user-\(user)"), \(bind: "user\(user)"), \(bind: "192.0.2.\(user % 250)"),
                            \(bind: "bench"), NULL)
                            """)
                    }
                    try await db.raw(
                        "INSERT INTO audit_events (\(SQLStore.auditColumns)) VALUES \(values.joined(separator: ", "))"
                    ).run()
                    index += batch
                }
            }
            let fillSeconds = (ContinuousClock.now - filled).seconds
            try await store.db.raw("ANALYZE").run()

            func time(_ body: () async throws -> Void) async throws -> Double {
                let began = ContinuousClock.now
                try await body()
                return (ContinuousClock.now - began).seconds * 1000
            }
            let rounds = 300
            var plain: [Double] = []
            var plainPage: [Double] = []
            var byPerson: [Double] = []
            var byKind: [Double] = []
            var byPersonAndKind: [Double] = []
            var deepPage: [Double] = []
            for _ in 0..<rounds {
                let id = "bench-\(Int.random(in: 0..<count, using: &generator))"
                plain.append(
                    try await time {
                        _ = try await store.db.raw(
                            "SELECT \(SQLStore.auditColumns) FROM audit_events WHERE id = \(bind: id)"
                        ).all().map { try $0.decode(model: SQLStore.AuditRow.self).event }
                    })
                // The same 51 rows a page reads, by the time index alone, decoded the same way.
                let before = start.milliseconds + Int64(Int.random(in: 100..<count, using: &generator)) * 50
                plainPage.append(
                    try await time {
                        _ = try await store.db.raw(
                            """
                            SELECT \(SQLStore.auditColumns) FROM audit_events WHERE at < \(bind: before)
                            ORDER BY at DESC LIMIT 51
                            """
                        ).all().map { try $0.decode(model: SQLStore.AuditRow.self).event }
                    })
                let user = "user-\(Int.random(in: 0..<users, using: &generator))"
                let kind = kinds[Int.random(in: 0..<kinds.count, using: &generator)]
                byPerson.append(try await time { _ = try await store.auditPage(AuditFilter(userID: user), limit: 51) })
                byKind.append(try await time { _ = try await store.auditPage(AuditFilter(kind: kind), limit: 51) })
                byPersonAndKind.append(
                    try await time {
                        _ = try await store.auditPage(AuditFilter(userID: user, kind: kind), limit: 51)
                    })
                // A page deep in the log: the cursor of an event half-way back.
                let middle = Int64(Int.random(in: 0..<count, using: &generator))
                deepPage.append(
                    try await time {
                        _ = try await store.auditPage(
                            AuditFilter(kind: kind, after: (start.milliseconds + middle * 50, "~")), limit: 51)
                    })
            }
            func line(_ name: String, _ values: [Double]) -> String {
                name.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + String(
                        format: "p50 %7.3f ms   p99 %7.3f ms", Self.percentile(values, 0.5),
                        Self.percentile(values, 0.99))
            }
            print("audit benchmark: \(count) rows filled in \(String(format: "%.1f", fillSeconds)) s; \(rounds) rounds")
            print(line("plain SELECT by id (primary key)", plain))
            print(line("plain SELECT of 51 rows by time", plainPage))
            print(line("page by person", byPerson))
            print(line("page by kind", byKind))
            print(line("page by person and kind", byPersonAndKind))
            print(line("page by kind, deep cursor", deepPage))
            #expect(byPerson.count == rounds)
        }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
