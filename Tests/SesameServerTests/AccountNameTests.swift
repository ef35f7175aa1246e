import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import WebAuthn

@testable import SesameCore

/// `PATCH /api/account {displayName}`: the display name changes, with the sign-up rules, for the signed-in account only.
@Suite struct AccountNameTests {
    func storedName(_ server: TestServer, _ user: User) async throws -> String? {
        try await server.withStore { try await $0.user(id: user.id)?.displayName }
    }

    @Test(arguments: TestDatabase.all)
    func changesTheDisplayName(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("nora", password: "correct horse")
        let other = try await server.seedUser("olga", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nora", "correct horse")
            // Cookie + CSRF token, as the page sends it; surrounding spaces are trimmed.
            let renamed = try await client.json(
                "/api/account", .patch, body: jsonString(["displayName": "  Nora Brandt  "]),
                headers: session.cookieHeaders
            )
            #expect(renamed.status == .ok, "\(renamed.text)")
            #expect(renamed.object["status"] as? String == "renamed")
            let body = renamed.object["user"] as? [String: Any]
            #expect(body?["displayName"] as? String == "Nora Brandt")
            #expect(body?["username"] as? String == "nora")
            #expect(try await storedName(server, user) == "Nora Brandt")

            // Bearer token, as an app sends it; 64 characters (here 64 grapheme clusters, some multi-scalar) fit.
            let long = String(repeating: "é", count: 32) + String(repeating: "👩🏽‍💻", count: 32)
            let bearer = try await client.json(
                "/api/account", .patch, body: jsonString(["displayName": long]), headers: session.bearerHeaders)
            #expect(bearer.status == .ok, "\(bearer.text)")
            #expect(try await storedName(server, user) == long)

            // What the page hands to signalCurrentUserDetails, and the account summary, show the new name.
            let signals = try await client.json("/api/account/signals", headers: session.bearerHeaders)
            #expect((signals.object["currentUserDetails"] as? [String: Any])?["displayName"] as? String == long)
            let account = try await client.json("/api/account", headers: session.bearerHeaders)
            #expect((account.object["user"] as? [String: Any])?["displayName"] as? String == long)
        }
        #expect(try await storedName(server, other) == other.displayName)
        let events = try await server.withStore { try await $0.auditEvents(userID: user.id, limit: 20) }
        #expect(events.filter { $0.kind == "account.renamed" && $0.outcome == "success" }.count == 2)
    }

    @Test(arguments: [
        (#"{"displayName":""}"#, "invalid_display_name"),
        (#"{"displayName":"   "}"#, "invalid_display_name"),
        (#"{"displayName":"\#(String(repeating: "x", count: 65))"}"#, "invalid_display_name"),
        (#"{"displayName":"Bell\u0007"}"#, "invalid_display_name"),
        (#"{"displayName":"two\nlines"}"#, "invalid_display_name"),
        (#"{"displayName":"nul\u0000"}"#, "invalid_display_name"),
        (#"{"displayName":42}"#, "malformed_json"),
        (#"{"displayName":null}"#, "malformed_json"),
        (#"{"displayName":["Nora"]}"#, "malformed_json"),
        (#"{"name":"Nora"}"#, "malformed_json"),
        (#"{"displayName":"Nora""#, "malformed_json"),
    ])
    func refusesBadNamesAndChangesNothing(_ body: String, code: String) async throws {
        let server = TestServer(.sqlite)
        let user = try await server.seedUser("nora", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nora", "correct horse")
            let answer = try await client.json("/api/account", .patch, body: body, headers: session.bearerHeaders)
            #expect(answer.status == .badRequest)
            #expect(answer.errorCode == code)
        }
        #expect(try await storedName(server, user) == user.displayName)
        let events = try await server.withStore { try await $0.auditEvents(userID: user.id, limit: 20) }
        #expect(!events.contains { $0.kind == "account.renamed" })
    }

    @Test(arguments: TestDatabase.all)
    func needsASessionAndTheCSRFToken(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("nora", password: "correct horse")
        try await server.app().test(.router) { client in
            let body = jsonString(["displayName": "Mallory"])
            let signedOut = try await client.json("/api/account", .patch, body: body)
            #expect(signedOut.status == .unauthorized)
            #expect(signedOut.errorCode == "unauthenticated")
            let badToken = try await client.json(
                "/api/account", .patch, body: body, headers: [.authorization: "Bearer not-a-session"])
            #expect(badToken.status == .unauthorized)

            let session = try await signInWithPassword(client, "nora", "correct horse")
            let noCSRF = try await client.json("/api/account", .patch, body: body, headers: [.cookie: session.cookie])
            #expect(noCSRF.status == .forbidden)
            #expect(noCSRF.errorCode == "csrf_check_failed")
            let wrongType = try await client.json(
                "/api/account", .patch, body: body, headers: session.cookieHeaders.merging([.contentType: "text/plain"])
            )
            #expect(wrongType.status == .unsupportedMediaType)

            // After signing out, the old session's token no longer works.
            #expect(try await client.json("/api/session", .delete, headers: session.bearerHeaders).status == .ok)
            #expect(
                try await client.json("/api/account", .patch, body: body, headers: session.bearerHeaders).status
                    == .unauthorized)
        }
        #expect(try await storedName(server, user) == user.displayName)
    }
}

extension HTTPFields {
    fileprivate func merging(_ other: HTTPFields) -> HTTPFields {
        var merged = self
        for field in other { merged[field.name] = field.value }
        return merged
    }
}
