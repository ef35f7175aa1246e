import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import SesameCore

/// Over real sockets (`.live`): cookies across requests, and two servers on one database behaving as one.
@Suite struct LiveTests {
    @Test(arguments: TestDatabase.all)
    func cookieSessionOverSockets(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("quinn", password: "correct horse")
        try await server.app().test(.live) { client in
            let session = try await signInWithPassword(client, "quinn", "correct horse")
            #expect(session.cookie.hasPrefix("sesame_session="))
            let account = try await client.json("/api/account", headers: [.cookie: session.cookie])
            #expect(account.status == .ok)
            let out = try await client.json("/api/session", .delete, headers: session.cookieHeaders)
            #expect(out.status == .ok)
            #expect(try await client.json("/api/account", headers: [.cookie: session.cookie]).status == .unauthorized)
        }
    }

    /// Two nodes, one database: a session made on one works on the other, sign-out on one is seen by the other,
    /// and failures counted on one node lock the account on the other.
    @Test(arguments: TestDatabase.all)
    func twoNodesShareSessionsAndRateLimits(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("rita", password: "correct horse")
        let nodeA = try await server.app()
        let nodeB = try await server.app()
        try await nodeA.test(.live) { a in
            try await nodeB.test(.live) { b in
                let session = try await signInWithPassword(a, "rita", "correct horse")
                #expect(try await b.json("/api/account", headers: session.bearerHeaders).status == .ok)
                // CSRF tokens are derived from the shared server secret: node B accepts node A's.
                let listB = try await b.json("/api/account/sessions", headers: [.cookie: session.cookie])
                #expect(listB.status == .ok)
                for client in [a, b, a, b, a] {
                    let r = try await client.json(
                        "/api/sessions/password", .post, body: #"{"username":"rita","password":"wrong horse"}"#)
                    #expect(r.status == .unauthorized)
                }
                let lockedOnB = try await b.json(
                    "/api/sessions/password", .post, body: #"{"username":"rita","password":"correct horse"}"#)
                #expect(lockedOnB.status == .tooManyRequests)
                let signOut = try await b.json("/api/session", .delete, headers: session.cookieHeaders)
                #expect(signOut.status == .ok)
                #expect(try await a.json("/api/account", headers: session.bearerHeaders).status == .unauthorized)
            }
        }
    }
}
