import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import OneTimeCode
import WebAuthn

@testable import SesameCore
@testable import SesameOperations

/// "Download my data" (`GET /api/account/export`) and `sesame users export`: everything held about the person,
/// no secret, audited.
@Suite struct AccountExportTests {
    static let totpSecret: [UInt8] = Array("12345678901234567890".utf8)

    /// Nora with a password and a second account; `addFactors` gives her a pending TOTP secret and a confirmed
    /// mobile number (after signing in: with a confirmed factor the password alone no longer signs in).
    func seed(_ server: TestServer) async throws -> User {
        let user = try await server.seedUser("nora", password: "correct horse")
        _ = try await server.seedUser("olga", password: "correct horse")
        return user
    }

    func addFactors(_ server: TestServer, _ user: User) async throws {
        try await server.withStore { store in
            try await store.setPendingTOTP(userID: user.id, secret: Self.totpSecret, at: server.clock.now)
            try await store.setSMS(userID: user.id, phone: "+15555550123", confirmed: true, at: server.clock.now)
        }
    }

    @Test(arguments: TestDatabase.all)
    func exportsTheSignedInAccountWithoutSecrets(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await seed(server)
        try await server.app().test(.router) { client in
            #expect(try await client.json("/api/account/export").status == .unauthorized)
            let session = try await signInWithPassword(client, "nora", "correct horse")
            try await addFactors(server, user)
            // The page's link sends only the cookie (a GET needs no CSRF token).
            // The account page links to it.
            let page = try await client.execute(uri: "/account", method: .get, headers: [.cookie: session.cookie])
            #expect(page.text.contains(#"href="/api/account/export""#) && page.text.contains("Download my data"))
            let response = try await client.json("/api/account/export", headers: [.cookie: session.cookie])
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.headers[.contentDisposition] == "attachment; filename=\"sesame-account.json\"")
            #expect(response.headers[.cacheControl] == "no-store")
            let document = response.object
            #expect(document["format"] as? String == "sesame-account-export-1")
            let account = document["account"] as? [String: Any]
            #expect(account?["username"] as? String == "nora")
            #expect(account?["id"] as? String == user.id)
            #expect((document["password"] as? [String: Any])?["set"] as? Bool == true)
            #expect((document["authenticatorApp"] as? [String: Any])?["confirmed"] as? Bool == false)
            #expect((document["phone"] as? [String: Any])?["number"] as? String == "••••••••••23")
            #expect((document["sessions"] as? [Any])?.count == 1)
            let kinds = (document["auditEvents"] as? [[String: Any]])?.compactMap { $0["kind"] as? String } ?? []
            #expect(kinds.contains("sign_in.password"))

            // Nothing that opens a factor or a session: not the TOTP secret in any encoding, not the phone
            // number, not the session token, not the other account.
            let text = response.text
            for secret in [
                Base32.encode(Self.totpSecret), Base64URL.encode(Self.totpSecret),
                Data(Self.totpSecret).base64EncodedString(), "5555550123", session.token, "olga",
            ] {
                #expect(!text.contains(secret), "the export holds \(secret.prefix(4))…")
            }
            for key in ["hash", "salt", "secret", "token"] {
                #expect(!text.lowercased().contains("\"\(key)"), "a field named \(key)…")
            }
        }
        let events = try await server.withStore { try await $0.auditEvents(userID: user.id, limit: 50) }
        #expect(events.filter { $0.kind == AuditKind.accountExported.rawValue }.count == 1)
    }

    @Test func theOperatorExportHasTheFullNumberAndIsAudited() async throws {
        let server = TestServer(.sqlite)
        let user = try await seed(server)
        try await addFactors(server, user)
        let text = try await server.withStore { store in
            try await Admin(store: store).exportUser("NORA", providerListFile: nil)
        }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect((document["phone"] as? [String: Any])?["number"] as? String == "+15555550123")
        #expect(!text.contains(Base32.encode(Self.totpSecret)))
        let events = try await server.withStore { try await $0.auditEvents(userID: user.id, limit: 50) }
        #expect(events.map(\.kind).contains(AuditKind.adminExported.rawValue))
        await #expect(throws: AdminError.self) {
            try await server.withStore { try await Admin(store: $0).exportUser("nobody", providerListFile: nil) }
        }
    }
}
