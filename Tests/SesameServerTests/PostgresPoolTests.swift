import Foundation
import NIOPosix
import Testing

@testable import SesameCore

/// PostgreSQL's connection pool, sized by `postgresConnections` (connections per event loop).
@Suite struct PostgresPoolTests {
    @Test func theSettingIsBoundedAndDefaultsToFour() throws {
        #expect(ServerConfiguration().postgresConnections == 4)
        let eight = try ServerConfiguration.resolve(
            flags: ["postgresConnections": "8"], environment: [:], configFile: nil)
        #expect(eight.postgresConnections == 8)
        for refused in ["0", "65", "-1", "many"] {
            #expect(throws: ConfigurationError.self) {
                try ServerConfiguration.resolve(
                    flags: [:], environment: ["SESAME_POSTGRES_CONNECTIONS": refused], configFile: nil)
            }
        }
    }

    /// One connection per event loop: more reads at once than the pool holds wait for a connection, and each
    /// answers.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, "needs SESAME_TEST_POSTGRES_URL"))
    func readsBeyondThePoolWaitForAConnection() async throws {
        let server = TestServer(.postgres) { $0.postgresConnections = 1 }
        let user = try await server.seedUser("ada")
        try await server.withStore { store in
            var loops = 0
            for _ in MultiThreadedEventLoopGroup.singleton.makeIterator() { loops += 1 }
            #expect(store.engine.postgresPoolSize == loops)
            let names = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<(8 * loops) {
                    group.addTask { try await store.user(id: user.id)?.username }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(names == Array(repeating: "ada", count: 8 * loops))
        }
    }
}
