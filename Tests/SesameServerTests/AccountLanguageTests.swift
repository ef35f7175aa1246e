import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import SesameAccount
@testable import SesameCore
@testable import SesameServer

/// The language a person saves on their account page (`PUT /api/account/language`): the first source of their
/// pages' language, shown by `GET /api/account`, given as the `locale` claim, exported, and gone with the account.
@Suite struct AccountLanguageTests {
    static func saved(_ server: TestServer, _ user: User) async throws -> String? {
        try await server.withStore { try await $0.savedLanguage(userID: user.id) }
    }

    static func put(_ client: some TestClientProtocol, _ language: Any, headers: HTTPFields) async throws
        -> TestResponse
    {
        try await client.json("/api/account/language", .put, body: jsonString(["language": language]), headers: headers)
    }

    @Test(arguments: TestDatabase.all)
    func savesAndClearsTheChoice(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("nora", password: "correct horse")
        let other = try await server.seedUser("olga", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nora", "correct horse")
            let before = try await client.json("/api/account", headers: session.bearerHeaders)
            #expect(before.object.keys.contains("language") && before.object["language"] is NSNull, "\(before.text)")

            // Cookie + CSRF token, as the page sends it.
            let saved = try await Self.put(client, "ko", headers: session.cookieHeaders)
            #expect(saved.status == .ok, "\(saved.text)")
            #expect(saved.object["status"] as? String == "saved" && saved.object["language"] as? String == "ko")
            #expect(try await Self.saved(server, user) == "ko")
            #expect(
                try await client.json("/api/account", headers: session.bearerHeaders).object["language"] as? String
                    == "ko")

            // Saving again replaces the choice (one row per account).
            #expect(try await Self.put(client, "ar", headers: session.bearerHeaders).status == .ok)
            #expect(try await Self.saved(server, user) == "ar")

            // null: back to the browser's choice.
            let cleared = try await Self.put(client, NSNull(), headers: session.cookieHeaders)
            #expect(cleared.status == .ok, "\(cleared.text)")
            #expect(cleared.object["status"] as? String == "cleared" && cleared.object["language"] is NSNull)
            #expect(try await Self.saved(server, user) == nil)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).object["language"] is NSNull)
            // Clearing when nothing is saved is no error.
            #expect(try await Self.put(client, NSNull(), headers: session.bearerHeaders).status == .ok)
        }
        #expect(try await Self.saved(server, other) == nil)
    }

    @Test(arguments: [
        (#"{"language":"xx"}"#, "unknown_language"),
        (#"{"language":"en-XA"}"#, "unknown_language"),
        (#"{"language":"ko-KR"}"#, "unknown_language"),
        (#"{"language":"KO"}"#, "unknown_language"),
        (#"{"language":""}"#, "unknown_language"),
        (#"{"language":"\#(String(repeating: "a", count: 300))"}"#, "unknown_language"),
        (#"{}"#, "malformed_json"),
        (#"{"language":42}"#, "malformed_json"),
        (#"{"language":["ko"]}"#, "malformed_json"),
    ])
    func refusesWhatTheCatalogDoesNotShip(_ body: String, code: String) async throws {
        let server = TestServer(.sqlite)
        let user = try await server.seedUser("nora", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nora", "correct horse")
            #expect(try await Self.put(client, "de", headers: session.bearerHeaders).status == .ok)
            let answer = try await client.json(
                "/api/account/language", .put, body: body, headers: session.bearerHeaders)
            #expect(answer.status == .badRequest, "\(answer.text)")
            #expect(answer.errorCode == code)
        }
        #expect(try await Self.saved(server, user) == "de", "a refused request changes nothing")
    }

    @Test(arguments: TestDatabase.all)
    func needsASessionAndTheCSRFToken(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("nora", password: "correct horse")
        try await server.app().test(.router) { client in
            let signedOut = try await Self.put(client, "ko", headers: [:])
            #expect(signedOut.status == .unauthorized)
            #expect(signedOut.errorCode == "unauthenticated")
            let badToken = try await Self.put(client, "ko", headers: [.authorization: "Bearer not-a-session"])
            #expect(badToken.status == .unauthorized)

            let session = try await signInWithPassword(client, "nora", "correct horse")
            let noCSRF = try await Self.put(client, "ko", headers: [.cookie: session.cookie])
            #expect(noCSRF.status == .forbidden)
            #expect(noCSRF.errorCode == "csrf_check_failed")
            let wrongCSRF = try await Self.put(
                client, "ko", headers: [.cookie: session.cookie, .init("X-CSRF-Token")!: "not-the-token"])
            #expect(wrongCSRF.status == .forbidden)
        }
        #expect(try await Self.saved(server, user) == nil)
    }

    @Test(arguments: TestDatabase.all)
    func theSavedChoiceComesBeforeTheBrowsers(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("nora", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nora", "correct horse")
            let german: HTTPFields = [.cookie: session.cookie, .acceptLanguage: "de-DE,de;q=0.9"]
            let before = try await client.json("/account", headers: german)
            #expect(before.status == .ok)
            #expect(before.text.contains(#"<html lang="de" dir="ltr">"#))
            #expect(before.headers[.contentLanguage] == "de")

            #expect(try await Self.put(client, "ar", headers: session.cookieHeaders).status == .ok)
            let after = try await client.json("/account", headers: german)
            #expect(after.text.contains(#"<html lang="ar" dir="rtl">"#), "\(after.text.prefix(200))")
            #expect(after.headers[.contentLanguage] == "ar")
            #expect(after.text.contains("حسابك"), "the account page's heading in Arabic")
            // Over ui_locales as well.
            let asked = try await client.json("/account?ui_locales=ja", headers: german)
            #expect(asked.text.contains(#"<html lang="ar" dir="rtl">"#))

            // The language section lists every shipped language for the script, in its own name.
            #expect(after.text.contains(#"id="language-select""#))
            #expect(after.text.contains(#""tag":"ko","name":"한국어""#))

            // Cleared: the browser decides again.
            #expect(try await Self.put(client, NSNull(), headers: session.cookieHeaders).status == .ok)
            #expect(try await client.json("/account", headers: german).text.contains(#"<html lang="de" dir="ltr">"#))
        }
    }

    @Test(arguments: TestDatabase.all)
    func theLocaleClaimSaysTheSavedChoice(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let registered = try await IdentityProviderTests.register(server)
        try await server.app().test(.router) { client in
            let discovery = try await client.json("/.well-known/openid-configuration").object
            #expect((discovery["claims_supported"] as? [String])?.filter { $0 == "locale" }.count == 1)

            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            var seen = try await EmailClaimsTests.claims(client, session, registered, scope: "openid profile")
            #expect(seen.info["preferred_username"] as? String == "ada")
            #expect(seen.info["locale"] == nil && seen.id["locale"] == nil, "absent while none is saved")

            #expect(try await Self.put(client, "ko", headers: session.cookieHeaders).status == .ok)
            seen = try await EmailClaimsTests.claims(client, session, registered, scope: "openid profile")
            #expect(seen.info["locale"] as? String == "ko")
            // The client asked for scope claims in its ID token (`idTokenClaims`): there too.
            #expect(seen.id["locale"] as? String == "ko")
            // Without the profile scope, no locale.
            seen = try await EmailClaimsTests.claims(client, session, registered, scope: "openid")
            #expect(seen.info["locale"] == nil)
        }
    }

    @Test(arguments: TestDatabase.all)
    func theChoiceIsExportedAndGoesWithTheAccount(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("nora", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "nora", "correct horse")
            let none = try await client.json("/api/account/export", headers: session.bearerHeaders)
            #expect((none.object["account"] as? [String: Any])?["language"] == nil)
            #expect(try await Self.put(client, "es", headers: session.bearerHeaders).status == .ok)
            let export = try await client.json("/api/account/export", headers: session.bearerHeaders)
            #expect(export.status == .ok)
            #expect((export.object["account"] as? [String: Any])?["language"] as? String == "es")
        }
        #expect(try await Self.saved(server, user) == "es")
        #expect(try await server.withStore { try await $0.deleteUser(id: user.id) })
        #expect(try await Self.saved(server, user) == nil)
        let rows = try await server.withStore { store in
            try await store.db.raw("SELECT COUNT(*) AS n FROM account_languages").first()?.decode(
                column: "n", as: Int64.self)
        }
        #expect(rows == 0)
    }
}
