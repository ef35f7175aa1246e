import Foundation
import SQLKit
import Testing

@testable import SesameCore
@testable import SesameOperations

/// The people search at 100,000 accounts (`scripts/bench-people`): fills the accounts in one transaction, then times
/// pages of `PeopleService.search` (every page the console asks for: a prefix of one to three letters, its first page
/// and the next) beside plain indexed SELECTs on the same table in the same run, and prints p50 and p99 of each.
/// Figures, not a timed assertion: it runs only when `SESAME_PEOPLE_BENCH` is set, as a 100,000-row fill takes
/// longer than the suite's budget for one test allows.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["SESAME_PEOPLE_BENCH"] != nil, "a benchmark: set SESAME_PEOPLE_BENCH"))
struct PeopleSearchBenchmark {
    static let accounts = Int(ProcessInfo.processInfo.environment["SESAME_PEOPLE_BENCH_ACCOUNTS"] ?? "") ?? 100_000
    static let first = ["ada", "alan", "grace", "edsger", "barbara", "donald", "frances", "john", "radia", "ken"]
    static let last = ["lovelace", "turing", "hopper", "dijkstra", "liskov", "knuth", "allen", "backus", "perlman"]

    /// Fills `accounts` users (random lower-case usernames, display names from two lists, an address for every
    /// third) in one transaction, 500 rows a statement.
    static func fill(_ store: SQLStore, count: Int) async throws -> [String] {
        var generator = SystemRandomNumberGenerator()
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let keys = (0..<count).map { i in
            String((0..<6).map { _ in letters.randomElement(using: &generator)! }) + String(i)
        }
        try await store.engine.withTransaction { db in
            for start in stride(from: 0, to: count, by: 500) {
                let rows = (start..<min(start + 500, count)).map { i -> SQLQueryString in
                    let name = "\(first[i % first.count].capitalized) \(last[(i / 7) % last.count].capitalized)"
                    return """
                        (\(bind: "b\(i)"), \(bind: keys[i]), \(bind: keys[i]), \(bind: name), \(bind: Data([UInt8](repeating: 0, count: 8) + withUnsafeBytes(of: UInt64(i).bigEndian, Array.init))), 0, \(bind: Int64(i)))
                        """
                }
                try await db.raw(
                    """
                    INSERT INTO users (id, username, username_key, display_name, user_handle, disabled, created_at)
                    VALUES \(rows.joined(separator: ", "))
                    """
                ).run()
                let mails = (start..<min(start + 500, count)).filter { $0 % 3 == 0 }.map { i -> SQLQueryString in
                    "(\(bind: "b\(i)"), \(bind: "\(keys[i])@example.org"), \(bind: "\(keys[i])@example.org"), 0, 0)"
                }
                try await db.raw(
                    """
                    INSERT INTO email_addresses (user_id, address, address_key, verified_at, updated_at)
                    VALUES \(mails.joined(separator: ", "))
                    """
                ).run()
            }
        }
        // The planners' statistics, as a database that grew to this size would have them.
        try await store.db.raw("ANALYZE").run()
        return keys
    }

    static func percentile(_ samples: [Double], _ p: Double) -> Double {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    static func timed(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    @Test(arguments: TestDatabase.all)
    func searchAtOneHundredThousandAccounts(_ db: TestDatabase) async throws {
        // The fill's statements (500 accounts each) may take longer than a request's on a loaded database server.
        let server = TestServer(db) { $0.databaseTimeout = 300 }
        try await server.withStore { store in
            let fillTime = try await Self.timed { _ = try await Self.fill(store, count: Self.accounts) }
            let keys = try await store.db.raw("SELECT username_key FROM users ORDER BY username_key").all()
                .map { try $0.decode(column: "username_key", as: String.self) }
            let service = PeopleService(store: store, groups: NoAccountGroups(), adminGroup: "admins")
            var generator = SystemRandomNumberGenerator()
            let letters = Array("abcdefghijklmnopqrstuvwxyz")
            let prefixes: [String] =
                [""]
                + (0..<150).map { i in String((0...(i % 3)).map { _ in letters.randomElement(using: &generator)! }) }
                + ["Ada", "grace h", "knuth"]
            // Warm up both paths once.
            _ = try await service.search("a", cursor: nil, limit: 25)
            var search: [Double] = []
            var slowest: [(ms: Double, prefix: String, page: Int)] = []
            var found = 0
            for prefix in prefixes {
                var cursor: String?
                for number in 1...2 {
                    var page: PeopleService.Page?
                    let ms = try await Self.timed { page = try await service.search(prefix, cursor: cursor, limit: 25) }
                    search.append(ms)
                    slowest = Array((slowest + [(ms, prefix, number)]).sorted { $0.ms > $1.ms }.prefix(3))
                    found += page?.people.count ?? 0
                    cursor = page?.next
                    if cursor == nil { break }
                }
            }
            var point: [Double] = []
            var range: [Double] = []
            for _ in 0..<search.count {
                let key = keys.randomElement(using: &generator)!
                point.append(
                    try await Self.timed {
                        _ = try await store.db.raw(
                            "SELECT \(SQLStore.userColumns) FROM users WHERE username_key = \(bind: key)"
                        ).all()
                    })
                range.append(
                    try await Self.timed {
                        _ = try await store.db.raw(
                            "SELECT \(SQLStore.userColumns) FROM users WHERE username_key > \(bind: key) ORDER BY username_key LIMIT 26"
                        ).all()
                    })
            }
            func line(_ name: String, _ samples: [Double]) -> String {
                String(
                    format: "%@: %d samples, p50 %.3f ms, p99 %.3f ms", name, samples.count,
                    Self.percentile(samples, 0.5), Self.percentile(samples, 0.99))
            }
            let report = [
                "people search benchmark on \(db): \(Self.accounts) accounts filled in \(String(format: "%.1f", fillTime / 1000)) s",
                line("people search, one page of 25", search),
                line("plain SELECT by username_key", point),
                line("plain SELECT of 26 after a username_key", range),
                "(\(found) rows found over \(prefixes.count) prefixes; slowest pages: "
                    + slowest.map { "“\($0.prefix)” page \($0.page) " + String(format: "%.1f ms", $0.ms) }
                    .joined(separator: ", ") + ")",
            ].joined(separator: "\n")
            print(report)
            #expect(search.count >= prefixes.count && found > 0)
        }
    }
}
