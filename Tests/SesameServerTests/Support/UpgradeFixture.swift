import Foundation
import Spawn
import Testing

/// Databases earlier releases wrote, kept under Tests/Fixtures/Upgrades/VERSION by `scripts/upgrade-fixture` (run with
/// that release's own binary): `sqlite.sqlite`, `postgres.sql` (pg_dump of the public schema) and `people.json` (who
/// is in them and how they sign in).
enum UpgradeFixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/Upgrades")

    /// Every release with fixtures, oldest first.
    static var releases: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted {
            $0.split(separator: ".").compactMap { Int($0) }.lexicographicallyPrecedes(
                $1.split(separator: ".").compactMap { Int($0) })
        }
    }

    static func file(_ release: String, _ name: String) -> URL {
        directory.appendingPathComponent(release).appendingPathComponent(name)
    }

    /// `people.json`: the release's schema version, and per engine who its database holds.
    static func manifest(_ release: String) throws -> [String: Any] {
        let data = try Data(contentsOf: file(release, "people.json"))
        guard let manifest = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FixtureError("people.json of \(release) is not a JSON object")
        }
        return manifest
    }

    /// The schema version the release left its databases at.
    static func schema(_ release: String) throws -> Int {
        guard let schema = try manifest(release)["schema"] as? Int else {
            throw FixtureError("people.json of \(release) has no schema version")
        }
        return schema
    }

    /// The people the release's database holds, for one engine.
    static func people(_ release: String, engine: TestDatabase.Engine) throws -> [String: Any] {
        guard let people = try manifest(release)[engine.rawValue] as? [String: Any] else {
            throw FixtureError("people.json of \(release) has no \(engine.rawValue) section")
        }
        return people
    }

    /// Copies the release's SQLite file to `path` with mode 0600, as the release's server left its own (the copy
    /// keeps the checkout's mode otherwise, which the server refuses); a failure fails the calling test.
    static func load(_ release: String, intoSQLite path: String) {
        do {
            try FileManager.default.copyItem(at: file(release, "sqlite.sqlite"), to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch {
            Issue.record("the \(release) SQLite fixture could not be copied: \(error)")
        }
    }

    /// Creates database `name` beside the test database and restores the release's dump into it with psql; returns
    /// its URL (a failure fails the calling test).
    static func load(_ release: String, intoNewPostgresDatabase name: String) -> String {
        guard let base = TestDatabase.postgresURL, var url = URLComponents(string: base) else { return "" }
        url.path = "/" + name
        let target = url.string ?? ""
        do {
            try psql([base, "-c", "CREATE DATABASE \(name)"])
            try psql([target, "-f", file(release, "postgres.sql").path])
        } catch {
            Issue.record("the \(release) PostgreSQL fixture could not be restored: \(error)")
        }
        return target
    }

    private static func psql(_ arguments: [String]) throws {
        // `Spawn`, not Foundation's `Process` (Tests/Spawn/Spawn.swift says why).
        let result = try Spawn.run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1"] + arguments)
        guard result.status == 0 else {
            throw FixtureError("psql exited \(result.status): \(String(decoding: result.error, as: UTF8.self))")
        }
    }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
