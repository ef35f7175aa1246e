import Foundation
import Logging
import OneTimeCode
import SQLKit
import Testing
import WebAuthn

@testable import SesameServer
@testable import SesameCore
@testable import SesameKeychainSync

/// Upgrades (docs/deploy.md): a database an earlier release wrote migrates to this version's schema with everything
/// in it intact (the store suite then runs on it too: `TestDatabase.conformance`), and nodes of two versions share
/// one database only while the newer one's changes merely add.
@Suite struct UpgradeTests {
    static let quiet: Logger = {
        var logger = Logger(label: "t")
        logger.logLevel = .critical
        return logger
    }()

    @Test func everyReleaseSinceTheFirstHasFixtures() {
        // 0.9.0 is the first tagged release (CHANGELOG.md); a release without fixtures would go untested.
        #expect(UpgradeFixture.releases.first == "0.9.0")
        for release in UpgradeFixture.releases {
            for name in ["sqlite.sqlite", "postgres.sql", "people.json"] {
                #expect(
                    FileManager.default.fileExists(atPath: UpgradeFixture.file(release, name).path),
                    "\(release) lacks \(name)")
            }
        }
    }

    @Test(arguments: TestDatabase.upgrades)
    func upgradedDatabasesKeepTheirPeopleAndSecrets(_ db: TestDatabase) async throws {
        let release = try #require(db.release)
        let people = try UpgradeFixture.people(release, engine: db.engine)
        let server = TestServer(db)
        let (engine, store) = try await openStore(
            server.configuration, environment: server.environment, logger: Self.quiet)
        #expect(try await engine.appliedMigrations() == ServerSchema.full.migrations.map(\.version))

        let accounts = try #require(people["people"] as? [[String: Any]])
        #expect(accounts.count == 2)
        for account in accounts {
            let username = try #require(account["username"] as? String)
            let user = try #require(try await store.user(usernameKey: Usernames.key(username)), "\(username) is gone")
            let credentialID = try Base64URL.decode(try #require(account["credentialID"] as? String))
            let credential = try #require(try await store.credential(id: credentialID), "\(username)'s passkey is gone")
            #expect(credential.userID == user.id)
            #expect(try Base64URL.decode(try #require(account["userHandle"] as? String)) == user.userHandle)
        }
        // The TOTP secret was sealed by the old release; it still opens to the same secret.
        let bob = try #require(try await store.user(usernameKey: Usernames.key("fixture-bob")))
        let totp = try #require(try await store.totp(userID: bob.id))
        #expect(totp.confirmed)
        #expect(totp.secret == (try Base32.decode(try #require(people["totpSecret"] as? String))))
        let unspent = try #require(people["unspentRecoveryCodes"] as? [String])
        #expect(try await store.unusedRecoveryCodeCount(userID: bob.id) == unspent.count)
        #expect(try await store.clients().map(\.name) == ["Fixture App"])
        try await engine.shutdown()
    }

    /// A newer node's expand-only migration leaves this node running beside it; a contract it does not know stops
    /// it, with the version to blame, and changes nothing.
    @Test(arguments: TestDatabase.all)
    func unknownExpansionsRunBesideAndUnknownContractionsStop(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let open = { try await openStore(server.configuration, environment: server.environment, logger: Self.quiet) }
        let (engine, _) = try await open()
        let next = ServerSchema.full.current + 1
        try await engine.sql.raw(
            "INSERT INTO sesame_migrations (version, name, applied_at, schema_change) VALUES (\(bind: next), 'newer: adds', 0, 'expand')"
        ).run()
        try await engine.shutdown()

        let (beside, _) = try await open()
        #expect(try await Migrations.checkNoUnknownContract(ServerSchema.full, on: beside) == [next])
        try await beside.sql.raw(
            "INSERT INTO sesame_migrations (version, name, applied_at, schema_change) VALUES (\(bind: next + 1), 'newer: drops', 0, 'contract')"
        ).run()
        try await beside.shutdown()

        await expectExactly(StoreError.newerSchema(version: next + 1, knownThrough: ServerSchema.full.current)) {
            _ = try await open()
        }
        // The refused start left the records as they were.
        let location = try DatabaseLocation(parsing: server.configuration.database)
        let after = try await SQLEngine.open(location, searchPath: server.schema, logger: Self.quiet)
        #expect(try await after.appliedMigrations() == ServerSchema.full.migrations.map(\.version) + [next, next + 1])
        try await after.shutdown()
    }
}
