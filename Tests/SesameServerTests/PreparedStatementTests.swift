import Foundation
import PostgresNIO
import SQLKit
import Testing

@testable import SesameCore
@testable import SesamePasskeys

/// PostgreSQL runs the sign-in path's statements prepared once per pooled connection (`PostgresStatementText`).
@Suite struct PreparedStatementTests {
    /// A migration that changes the type of a column a prepared statement returns, run by another node while this
    /// one serves (docs/deploy.md, "Upgrades"), makes PostgreSQL refuse the statement prepared before it ("cached
    /// plan must not change result type", SQLSTATE 0A000). The store prepares it again, and the read answers.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, "needs SESAME_TEST_POSTGRES_URL"))
    func aSchemaChangeUnderAPreparedStatementPreparesItAgain() async throws {
        let server = TestServer(.postgres)
        let user = try await server.seedUser("ada")
        try await server.withStore { store in
            let now = server.clock.now
            try await store.addCredential(
                StoredCredential(
                    id: [7, 7], userID: user.id, publicKey: [0xA5], signCount: 3, transports: ["internal"],
                    aaguid: nil, backupEligible: true, backedUp: true, userVerified: true, attestationFormat: "none",
                    name: "phone", createdAt: now, lastUsedAt: nil))
            // Reads at once from many tasks, so that several pooled connections prepare the statements.
            func readConcurrently() async throws -> [String?] {
                try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<16 {
                        group.addTask {
                            let found = try await store.credentialWithUser(id: [7, 7])
                            let listed = try await store.credentials(userID: user.id)
                            #expect(listed.map(\.name) == [found?.credential.name ?? "missing"])
                            return found.map { "\($0.credential.name) \($0.user?.username ?? "no account")" }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(try await readConcurrently() == Array(repeating: "phone ada", count: 16))

            // On one connection of its own: the same statement prepared there, the column's type changed, and the
            // prepared statement refused, as it is on the pooled connections that prepared it above.
            let refused = try await store.engine.withMigrationLock { db in
                try await db.raw(
                    "PREPARE probe (bytea) AS \(unsafeRaw: SQLStore.CredentialWithUser.sql)"
                ).run()
                try await db.raw("ALTER TABLE credentials ALTER COLUMN name TYPE VARCHAR(200)").run()
                do {
                    try await db.raw("EXECUTE probe ('\\x0707'::bytea)").run()
                    return nil as String?
                } catch let error as PSQLError {
                    return error.serverInfo?[.sqlState]
                }
            }
            #expect(refused == "0A000")

            #expect(try await readConcurrently() == Array(repeating: "phone ada", count: 16))
        }
    }

    /// A statement that fails while PostgreSQL prepares it (here its table is missing for a moment, as during
    /// another node's unfinished migration) is not remembered as failed: once the table is back, the same read
    /// answers. postgres-nio would otherwise answer every later use on that connection with the first error.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, "needs SESAME_TEST_POSTGRES_URL"))
    func aStatementThatFailedToPrepareIsPreparedAgainLater() async throws {
        let server = TestServer(.postgres)
        let user = try await server.seedUser("ada")
        try await server.withStore { store in
            try await store.addCredential(
                StoredCredential(
                    id: [7, 7], userID: user.id, publicKey: [0xA5], signCount: 3, transports: ["internal"],
                    aaguid: nil, backupEligible: true, backedUp: true, userVerified: true, attestationFormat: "none",
                    name: "phone", createdAt: server.clock.now, lastUsedAt: nil))
            try await store.engine.withMigrationLock { db in
                try await db.raw("ALTER TABLE credentials RENAME TO credentials_moving").run()
            }
            for _ in 0..<3 {
                await #expect(throws: (any Error).self) { try await store.credentialWithUser(id: [7, 7]) }
            }
            try await store.engine.withMigrationLock { db in
                try await db.raw("ALTER TABLE credentials_moving RENAME TO credentials").run()
            }
            for _ in 0..<3 {
                #expect(try await store.credentialWithUser(id: [7, 7])?.user?.username == "ada")
            }
        }
    }
}
