import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing
import WebAuthn

@testable import SesameConsole
@testable import SesameCore
@testable import SesameForwardAuth
@testable import SesameGroups
@testable import SesameIdentityProvider
@testable import SesameInvitations
@testable import SesameMetadata
@testable import SesameOperations
@testable import SesamePasswords
@testable import SesameServer

/// The admin API behind the console's apps, invitations, forward-auth, signing-key, metadata and settings pages, on
/// both engines: each route's success, its typed errors, the audit events naming the admin (written with the
/// change), a secret shown once and never readable again, and the gate's refusals.
@Suite struct ConsoleAppsAPITests {
    /// Ada (passkey, in `admins`) and Bob (password only, not an admin); the body runs with Ada's session.
    static func withAdmin(
        _ server: TestServer,
        _ body: @Sendable (any TestClientProtocol, SignedIn, User) async throws -> Void
    ) async throws {
        let bob = try await server.seedUser("bob", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let (session, _) = try await signUpWithPasskey(client, "ada")
            try await server.withStore { store in
                let admin = GroupsAdmin(store: store, adminGroup: "admins")
                try await admin.add("admins", name: nil, claims: nil)
                try await admin.addMember("ada", to: "admins")
            }
            try await body(client, session, bob)
        }
    }

    /// The events of `kinds` that an admin wrote (not the command line).
    static func adminEvents(_ server: TestServer, _ prefix: String) async throws -> [AuditEvent] {
        try await server.withStore { try await $0.auditEvents(userID: nil, limit: 100) }
            .filter { $0.kind.hasPrefix(prefix) && $0.clientAddress != "cli" }
    }

    /// Every route, refused to someone who is not an admin, to an admin's password session, and to a cookie
    /// without the console's CSRF token.
    static let routes: [(String, HTTPRequest.Method, String?)] = [
        ("/api/admin/invitations", .get, nil), ("/api/admin/invitations", .post, "{}"),
        ("/api/admin/invitations/x", .delete, nil), ("/api/admin/apps", .get, nil),
        ("/api/admin/apps", .post, "{}"), ("/api/admin/apps/x", .get, nil), ("/api/admin/apps/x", .patch, "{}"),
        ("/api/admin/apps/x/secret", .post, nil), ("/api/admin/apps/x", .delete, nil),
        ("/api/admin/signing-keys", .get, nil), ("/api/admin/signing-keys/rotate", .post, nil),
        ("/api/admin/forward-auth/rules", .get, nil), ("/api/admin/forward-auth/test", .post, "{}"),
        ("/api/admin/metadata", .get, nil), ("/api/admin/metadata", .post, "{}"), ("/api/admin/settings", .get, nil),
    ]

    @Test(arguments: TestDatabase.all)
    func theRoutesAreForAdminsWithAPasskeyAndTheConsolesCSRFToken(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await Self.withAdmin(server) { client, session, _ in
            let bob = try await signInWithPassword(client, "bob", "correct horse battery")
            try await server.withStore { store in
                try await store.setPassword(
                    userID: try #require(try await store.user(usernameKey: "ada")).id,
                    try PasswordHasher(logN: 10).hash("ada's long password"), at: server.clock.now)
            }
            let adaPassword = try await signInWithPassword(client, "ada", "ada's long password")
            for (path, method, body) in Self.routes {
                let anonymous = try await client.json(path, method, body: body)
                #expect(anonymous.status == .unauthorized, "\(method) \(path)")
                let notAdmin = try await client.json(path, method, body: body, headers: bob.bearerHeaders)
                #expect(notAdmin.errorCode == "not_an_admin", "\(method) \(path): \(notAdmin.text)")
                let password = try await client.json(path, method, body: body, headers: adaPassword.bearerHeaders)
                #expect(password.errorCode == "passkey_required", "\(method) \(path): \(password.text)")
                if method != .get {
                    let forged = try await client.json(path, method, body: body, headers: session.cookieHeaders)
                    #expect(forged.errorCode == "csrf_check_failed", "\(method) \(path): \(forged.text)")
                }
            }
            #expect(try await Self.adminEvents(server, "").filter { $0.detail.contains(" by admin ") }.isEmpty)
        }
    }

    @Test(arguments: TestDatabase.all)
    func invitationsAreMadeListedAndRevokedWithTheMailInTheSameTransaction(_ db: TestDatabase) async throws {
        var made = TestServer(db)
        made.serviceClock = ManualClock()  // the outbox stays put; the test reads the mail where it was written
        let server = made
        try await Self.withAdmin(server) { client, session, _ in
            _ = try await server.withStore {
                try await GroupsAdmin(store: $0, adminGroup: "admins").add("family", name: nil, claims: nil)
            }
            let mailed = try await client.json(
                "/api/admin/invitations", .post,
                body: #"{"email": "carol@example.org", "groups": ["family"], "expires": "2d"}"#,
                headers: session.bearerHeaders)
            #expect(mailed.status == .created, "\(mailed.text)")
            #expect(mailed.object["mailed"] as? Bool == true && mailed.object["link"] == nil)
            let linked = try await client.json(
                "/api/admin/invitations", .post, body: #"{}"#, headers: session.bearerHeaders)
            let link = try #require(linked.object["link"] as? String)
            #expect(link.hasPrefix("http://localhost:8080/signup#invitation="))
            for (body, code) in [
                (#"{"expires": "1000d"}"#, "invitation_refused"), (#"{"expires": "soon"}"#, "invitation_refused"),
                (#"{"groups": ["nobody-here"]}"#, "invitation_refused"),
                (#"{"email": "not an address"}"#, "invitation_refused"), (#"{"groups": "family"}"#, "malformed_json"),
            ] {
                let refused = try await client.json(
                    "/api/admin/invitations", .post, body: body, headers: session.bearerHeaders)
                #expect(refused.status == .badRequest && refused.errorCode == code, "\(body): \(refused.text)")
            }
            let listed = try await client.json("/api/admin/invitations", headers: session.bearerHeaders)
            let invitations = try #require(listed.object["invitations"] as? [[String: Any]])
            #expect(invitations.count == 2)
            #expect(invitations.allSatisfy { $0["state"] as? String == "usable" })
            // The list never carries a link or a token.
            #expect(!listed.text.contains("invitation=") && !listed.text.contains(Self.secretPart(link)))
            let id = try #require(mailed.object["id"] as? String)
            #expect(
                try await client.json("/api/admin/invitations/\(id)", .delete, headers: session.bearerHeaders).status
                    == .noContent)
            let again = try await client.json("/api/admin/invitations/\(id)", .delete, headers: session.bearerHeaders)
            #expect(again.status == .notFound && again.errorCode == "invitation_not_found")
            let states =
                try await client.json("/api/admin/invitations", headers: session.bearerHeaders)
                .object["invitations"] as? [[String: Any]]
            #expect(states?.first { $0["id"] as? String == id }?["state"] as? String == "revoked")

            let mails = try await server.withStore { store in
                try await store.db.raw("SELECT kind FROM mail_outbox").all().map {
                    try $0.decode(column: "kind", as: String.self)
                }
            }
            #expect(mails == ["invitation"])
            let events = try await Self.adminEvents(server, "invitation.")
            #expect(
                events.map(\.kind).sorted() == [
                    "invitation.created", "invitation.created", "invitation.mailed", "invitation.revoked",
                ])
            #expect(events.allSatisfy { $0.detail.hasSuffix("by admin ada") && $0.clientAddress == "192.0.2.1" })
        }
    }

    static func secretPart(_ link: String) -> String { String(link.split(separator: ".").last ?? "") }

    @Test(arguments: TestDatabase.all)
    func appsAreRegisteredChangedAndRemovedAndTheirSecretIsShownOnce(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await Self.withAdmin(server) { client, session, _ in
            _ = try await server.withStore {
                try await GroupsAdmin(store: $0, adminGroup: "admins").add("family", name: nil, claims: nil)
            }
            let created = try await client.json(
                "/api/admin/apps", .post,
                body: """
                    {"name": "Photos", "redirectUris": ["https://photos.example.org/callback"],
                     "postLogoutRedirectUris": ["https://photos.example.org/"],
                     "backchannelLogoutUri": "https://photos.example.org/logout",
                     "allowedGroups": ["family"], "idTokenClaims": true}
                    """, headers: session.bearerHeaders)
            #expect(created.status == .created, "\(created.text)")
            let secret = try #require(created.object["secret"] as? String)
            let app = try #require(created.object["app"] as? [String: Any])
            let id = try #require(app["id"] as? String)
            #expect(app["type"] as? String == "confidential" && app["allowedGroups"] as? [String] == ["family"])
            #expect(app["idTokenClaims"] as? Bool == true)
            let stored = try await server.withStore { try await $0.client(id: id) }
            #expect(stored?.secretHash == Secrets.sha256(secret))

            // Never readable again: not in the list, not in the app.
            let listed = try await client.json("/api/admin/apps", headers: session.bearerHeaders)
            #expect((listed.object["apps"] as? [[String: Any]])?.count == 1 && !listed.text.contains(secret))
            let shown = try await client.json("/api/admin/apps/\(id)", headers: session.bearerHeaders)
            #expect(shown.object["name"] as? String == "Photos" && !shown.text.contains(secret))
            #expect(shown.object["secret"] == nil)

            for body in [
                #"{"name": "", "redirectUris": ["https://a.example.org/cb"]}"#,
                #"{"name": "A", "redirectUris": []}"#, #"{"name": "A", "redirectUris": ["http://evil.example/cb"]}"#,
                #"{"name": "A", "redirectUris": ["https://a.example.org/cb#x"]}"#,
                #"{"name": "A", "redirectUris": ["https://a.example.org/cb"], "allowedGroups": ["nobody-here"]}"#,
                #"{"name": "A", "redirectUris": ["https://a.example.org/cb"], "allowedGroups": []}"#,
            ] {
                let refused = try await client.json(
                    "/api/admin/apps", .post, body: body, headers: session.bearerHeaders)
                #expect(refused.status == .badRequest && refused.errorCode == "invalid_app", "\(body): \(refused.text)")
            }
            let missing = try await client.json(
                "/api/admin/apps", .post, body: #"{"name": "A"}"#, headers: session.bearerHeaders)
            #expect(missing.status == .badRequest && missing.errorCode == "malformed_json")

            let changed = try await client.json(
                "/api/admin/apps/\(id)", .patch,
                body: """
                    {"name": "Family photos", "redirectUris": ["https://photos.example.org/cb2"],
                     "backchannelLogoutUri": null, "allowedGroups": null, "idTokenClaims": false}
                    """, headers: session.bearerHeaders)
            #expect(changed.status == .ok, "\(changed.text)")
            #expect(changed.object["name"] as? String == "Family photos")
            #expect(changed.object["redirectUris"] as? [String] == ["https://photos.example.org/cb2"])
            #expect(changed.object["postLogoutRedirectUris"] as? [String] == ["https://photos.example.org/"])
            #expect(changed.object["backchannelLogoutUri"] == nil && changed.object["allowedGroups"] == nil)
            let badChange = try await client.json(
                "/api/admin/apps/\(id)", .patch, body: #"{"redirectUris": ["ftp://x"]}"#,
                headers: session.bearerHeaders)
            #expect(badChange.errorCode == "invalid_app")
            let kept = try await server.withStore { try await $0.client(id: id) }
            #expect(kept?.redirectURIs == ["https://photos.example.org/cb2"])

            let rotated = try await client.json("/api/admin/apps/\(id)/secret", .post, headers: session.bearerHeaders)
            let newSecret = try #require(rotated.object["secret"] as? String)
            #expect(newSecret != secret)
            #expect(try await server.withStore { try await $0.client(id: id) }?.secretHash == Secrets.sha256(newSecret))
            #expect(
                !(try await client.json("/api/admin/apps/\(id)", headers: session.bearerHeaders)).text.contains(
                    newSecret))

            let publicApp = try await client.json(
                "/api/admin/apps", .post,
                body: #"{"name": "CLI", "redirectUris": ["http://127.0.0.1/cb"], "public": true}"#,
                headers: session.bearerHeaders)
            #expect(publicApp.status == .created && publicApp.object["secret"] == nil)
            let publicID = try #require((publicApp.object["app"] as? [String: Any])?["id"] as? String)
            let noSecret = try await client.json(
                "/api/admin/apps/\(publicID)/secret", .post, headers: session.bearerHeaders)
            #expect(noSecret.status == .notFound && noSecret.errorCode == "app_not_found")

            #expect(
                try await client.json("/api/admin/apps/\(id)", .delete, headers: session.bearerHeaders).status
                    == .noContent)
            for (path, method) in [
                ("/api/admin/apps/\(id)", HTTPRequest.Method.get), ("/api/admin/apps/\(id)", .delete),
                ("/api/admin/apps/\(id)", .patch), ("/api/admin/apps/\(id)/secret", .post),
            ] {
                let gone = try await client.json(
                    path, method, body: method == .patch ? "{}" : nil, headers: session.bearerHeaders)
                #expect(gone.status == .notFound && gone.errorCode == "app_not_found", "\(method) \(path)")
            }
            let events = try await Self.adminEvents(server, "client.")
            #expect(
                events.map(\.kind).sorted() == [
                    "client.added", "client.added", "client.removed", "client.secret_rotated", "client.updated",
                ])
            #expect(events.allSatisfy { $0.detail.hasSuffix("by admin ada") && !$0.detail.contains(newSecret) })
            #expect(events.first { $0.kind == "client.removed" }?.detail == "\(id) by admin ada")

            // The audit log names the app each of these events concerns (`clientId`), so the console links the row to
            // it; an event about no app has none.
            let audit = try await client.json("/api/admin/audit?limit=200", headers: session.bearerHeaders)
            #expect(audit.status == .ok, "\(audit.text)")
            let logged = try #require(audit.object["events"] as? [[String: Any]])
            let about = logged.filter { ($0["kind"] as? String)?.hasPrefix("client.") == true }
            #expect(about.count == 5)
            #expect(about.filter { $0["clientId"] as? String == id }.count == 4, "\(about)")
            #expect(about.contains { $0["kind"] as? String == "client.added" && $0["clientId"] as? String == publicID })
            let others = logged.filter { ($0["kind"] as? String)?.hasPrefix("client.") == false }
            #expect(!others.isEmpty && others.allSatisfy { $0["clientId"] == nil }, "\(others)")
            let csv = try await client.execute(
                uri: "/api/admin/audit.csv?kind=client.removed", method: .get, headers: session.bearerHeaders)
            #expect(String(buffer: csv.body).contains(",\(id)\r\n"), "\(String(buffer: csv.body))")
        }
    }

    @Test(arguments: TestDatabase.all)
    func signingKeysAreListedAndRotated(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await Self.withAdmin(server) { client, session, _ in
            let before = try await client.json("/api/admin/signing-keys", headers: session.bearerHeaders)
            let keys = try #require(before.object["keys"] as? [[String: Any]])
            #expect(keys.map { $0["algorithm"] as? String }.compactMap { $0 }.sorted() == ["ES256", "RS256"])
            #expect(keys.allSatisfy { $0["state"] as? String == "current" })
            #expect(!before.text.contains("private"))
            server.clock.advance(600)  // within the console's window (15 minutes)
            let after = try await client.json("/api/admin/signing-keys/rotate", .post, headers: session.bearerHeaders)
            #expect(after.status == .ok, "\(after.text)")
            let rotated = try #require(after.object["keys"] as? [[String: Any]])
            #expect(rotated.count == 4)
            #expect(rotated.filter { $0["state"] as? String == "current" }.count == 2)
            #expect(rotated.filter { $0["state"] as? String == "published" }.count == 2)
            let made = try #require(after.object["rotated"] as? [String])
            #expect(made.count == 2)
            let old = rotated.first { $0["state"] as? String == "published" }
            #expect((old?["ageSeconds"] as? Int ?? 0) >= 600)
            // The JWKS publishes the new keys at once.
            let jwks = try await client.json("/oauth/jwks")
            for entry in made { #expect(jwks.text.contains(String(entry.split(separator: " ")[1]))) }
            let events = try await Self.adminEvents(server, "signing_keys.")
            #expect(events.count == 1 && events[0].detail == made.joined(separator: ", ") + " by admin ada")
        }
    }

    @Test(arguments: TestDatabase.all)
    func aURLIsTestedAgainstTheForwardAuthRulesInForce(_ db: TestDatabase) async throws {
        let server = TestServer(db) {
            $0.forwardAuthDomains = ["example.org"]
            $0.forwardAuthRules = [
                ForwardAuthRule(host: "router.example.org", policy: .groups, groups: ["admins"]),
                ForwardAuthRule(host: "photos.example.org", path: "/admin", policy: .passkey),
                ForwardAuthRule(host: "*.example.org", path: "/internal", policy: .nobody),
                ForwardAuthRule(host: "photos.example.org", policy: .signedIn),
            ]
        }
        try await Self.withAdmin(server) { client, session, _ in
            let rules = try await client.json("/api/admin/forward-auth/rules", headers: session.bearerHeaders).object
            let listed = try #require(rules["rules"] as? [[String: Any]])
            #expect(
                listed.map { $0["host"] as? String } == [
                    "router.example.org", "photos.example.org", "*.example.org", "photos.example.org",
                ])
            #expect(listed[1]["path"] as? String == "/admin" && rules["domains"] as? [String] == ["example.org"])
            func test(_ url: String, _ user: String?) async throws -> [String: Any] {
                var body: [String: Any] = ["url": url]
                if let user { body["user"] = user }
                let answer = try await client.json(
                    "/api/admin/forward-auth/test", .post, body: jsonString(body), headers: session.bearerHeaders)
                #expect(answer.status == .ok, "\(url): \(answer.text)")
                return answer.object
            }
            let adaAtRouter = try await test("https://router.example.org/", "ada")
            #expect(adaAtRouter["decision"] as? String == "pass" && adaAtRouter["match"] as? String == "rule")
            #expect((adaAtRouter["rule"] as? [String: Any])?["index"] as? Int == 0)
            let bobAtRouter = try await test("https://router.example.org/settings", "bob")
            #expect(bobAtRouter["decision"] as? String == "denied")
            #expect((bobAtRouter["reason"] as? String)?.contains("admins") == true)
            // The reason as a code with its parameters, which the console says in the page's language.
            #expect(bobAtRouter["reasonCode"] as? String == "not-in-groups")
            let named = try #require(bobAtRouter["reasonParameters"] as? [String: Any])
            #expect(named["user"] as? String == "bob" && named["groups"] as? [String] == ["admins"])
            #expect(adaAtRouter["reasonCode"] as? String == "in-groups")
            #expect(try await test("https://router.example.org/", nil)["decision"] as? String == "sign-in")
            let admin = try await test("https://photos.example.org/admin/users", "bob")
            #expect(admin["passkeyRequired"] as? Bool == true && admin["decision"] as? String == "pass")
            #expect(
                try await test("https://photos.example.org/administrator", "bob")["passkeyRequired"] as? Bool == false)
            let hidden = try await test("https://wiki.example.org/internal/x", "ada")
            #expect(hidden["decision"] as? String == "denied")
            #expect(hidden["reasonCode"] as? String == "nobody")
            #expect((hidden["reasonParameters"] as? [String: Any])?["rule"] as? Int == 3)
            #expect((hidden["rule"] as? [String: Any])?["policy"] as? String == "nobody")
            let unruled = try await test("https://wiki.example.org/", "ada")
            #expect(unruled["match"] as? String == "refused" && unruled["decision"] as? String == "denied")
            let elsewhere = try await test("https://other.net/", "ada")
            #expect(elsewhere["match"] as? String == "not-served" && elsewhere["decision"] as? String == "denied")
            #expect(elsewhere["reasonCode"] as? String == "host-not-allowed")
            #expect((elsewhere["reasonParameters"] as? [String: Any])?["host"] as? String == "other.net")
            #expect(unruled["reasonCode"] as? String == "no-rule-matches")
            #expect(admin["reasonCode"] as? String == "passes")
            #expect(try await test("https://photos.example.org/%2e%2e/admin", "bob")["decision"] as? String == "denied")
            for body in [
                #"{"url": "photos.example.org"}"#, #"{"url": "ftp://photos.example.org/"}"#,
                #"{"url": "https://192.0.2.1/"}"#, #"{"url": "https://photos.example.org/", "user": "carol"}"#,
            ] {
                let refused = try await client.json(
                    "/api/admin/forward-auth/test", .post, body: body, headers: session.bearerHeaders)
                #expect(refused.errorCode == "invalid_forward_auth_test", "\(body): \(refused.text)")
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func aMetadataBLOBIsVerifiedBeforeItIsStored(_ db: TestDatabase) async throws {
        var made = TestServer(db)
        let example = try MetadataServerTests.importRequest()
        made.metadataTrust = MetadataTrust(rootsPEM: example.rootsPEM, allowStale: true, time: example.time)
        let server = made
        try await Self.withAdmin(server) { client, session, _ in
            let empty = try await client.json("/api/admin/metadata", headers: session.bearerHeaders)
            #expect(empty.status == .ok && empty.object["blob"] == nil)
            let tampered = example.jwt.dropLast(4) + "AAAA"
            // A BLOB is megabytes: the route reads past the API's usual 64 KB and lets the verification refuse it.
            let large = jsonString(["blob": String(repeating: "a", count: 300_000)])
            for body in [
                large,
                #"{"blob": "not a jwt"}"#, jsonString(["blob": String(tampered)]), "[1]", "",
            ] {
                let refused = try await client.json(
                    "/api/admin/metadata", .post, body: body, headers: session.bearerHeaders)
                #expect(refused.status == .badRequest && refused.errorCode == "metadata_refused", "\(refused.text)")
            }
            #expect(try await server.withStore { try await $0.latestMetadataNumber() } == nil)
            let imported = try await client.json(
                "/api/admin/metadata", .post, body: jsonString(["blob": example.jwt]), headers: session.bearerHeaders)
            #expect(imported.status == .created, "\(imported.text)")
            let blob = try #require(imported.object["blob"] as? [String: Any])
            #expect((blob["entries"] as? Int ?? 0) > 0 && blob["number"] as? Int != nil)
            let again = try await client.json(
                "/api/admin/metadata", .post, body: jsonString(["blob": example.jwt]), headers: session.bearerHeaders)
            #expect(again.errorCode == "metadata_refused")
            let shown = try await client.json("/api/admin/metadata", headers: session.bearerHeaders).object
            #expect((shown["blob"] as? [String: Any])?["number"] as? Int == blob["number"] as? Int)
            let events = try await Self.adminEvents(server, "metadata.")
            #expect(events.count == 1 && events[0].detail == "\(blob["number"] as? Int ?? -1) by admin ada")
        }
    }

    @Test(arguments: TestDatabase.all)
    func theSettingsInForceShowTheirSourceAndMaskSecrets(_ db: TestDatabase) async throws {
        var made = TestServer(db)
        let token = "metrics-" + UUID().uuidString
        var resolved = try ServerConfiguration.resolve(
            flags: ["metricsToken": token, "rpName": "Example Console", "database": made.configuration.database],
            environment: ["SESAME_SESSION_LIFETIME": "7200"], configFile: nil, vocabulary: .server)
        resolved.database = made.configuration.database
        resolved.origin = made.configuration.origin
        resolved.rpID = made.configuration.rpID
        resolved.passwordScryptLogN = 10
        resolved.trustForwardedFor = true
        made.configuration = resolved
        let server = made
        try await Self.withAdmin(server) { client, session, _ in
            let answer = try await client.json("/api/admin/settings", headers: session.bearerHeaders)
            #expect(answer.status == .ok)
            #expect(!answer.text.contains(token))
            let rows = try #require(answer.object["settings"] as? [[String: Any]])
            func row(_ key: String) -> [String: Any]? { rows.first { $0["key"] as? String == key } }
            #expect(row("metricsToken")?["value"] as? String == SettingsAdminRoutes.masked)
            #expect(row("metricsToken")?["secret"] as? Bool == true)
            #expect(row("metricsToken")?["source"] as? String == "flag --metrics-token")
            #expect(row("rpName")?["value"] as? String == "Example Console")
            #expect(row("sessionLifetime")?["source"] as? String == "environment SESAME_SESSION_LIFETIME")
            #expect(row("port")?["source"] as? String == "default")
            // A setting with no value says so as a flag (the console's own word), not only as English.
            #expect(row("metricsToken")?["none"] as? Bool == false && row("port")?["none"] as? Bool == false)
            #expect(row("metricsAddress")?["none"] as? Bool == true)
            #expect(rows.count == Vocabulary.server.settings.count)
            // A SQLite path shows; a PostgreSQL URL shows without its password.
            let database = server.configuration.database
            #expect(row("database")?["value"] as? String == SettingsAdminRoutes.maskingPassword(database))
            #expect(row("database")?["secret"] as? Bool == false)
            if !database.contains("://") { #expect(row("database")?["value"] as? String == database) }
        }
    }

    @Test func aURLShowsWithoutItsPassword() {
        #expect(
            SettingsAdminRoutes.maskingPassword("postgres://sesame:hunter2@db.example.org:5432/sesame?password=hunter2")
                == "postgres://sesame:\(SettingsAdminRoutes.masked)@db.example.org:5432/sesame")
        #expect(SettingsAdminRoutes.maskingPassword("smtp://relay.example.org:587") == "smtp://relay.example.org:587")
        #expect(SettingsAdminRoutes.maskingPassword("/var/lib/sesame/sesame.sqlite") == "/var/lib/sesame/sesame.sqlite")
        #expect(SettingsAdminRoutes.maskingPassword("postgres://a:b c@[bad") == SettingsAdminRoutes.masked)
    }

    static let pages = ["groups", "invitations", "apps", "forward-auth", "keys", "metadata", "settings", "tokens"]

    @Test(arguments: TestDatabase.all)
    func thePagesRenderForAnAdminWithTheirScriptsAndNothingInline(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        // These pages are in the navigation, in this order (other parts' pages may come before or after them).
        #expect(ConsoleRoutes.pages.map(\.slug).filter(Self.pages.contains) == Self.pages)
        try await Self.withAdmin(server) { client, session, _ in
            let bob = try await signInWithPassword(client, "bob", "correct horse battery")
            for slug in Self.pages {
                let page = try await client.json("/console/\(slug)", headers: [.cookie: session.cookie])
                #expect(page.status == .ok, "\(slug): \(page.status)")
                #expect(page.headers[.contentSecurityPolicy] == ConsoleRoutes.contentSecurityPolicy)
                #expect(page.text.contains("src=\"/console/static/console-\(slug).js\""))
                #expect(page.text.contains("aria-current=\"page\""))
                // No inline script or style: the CSP would refuse them.
                // The page's messages are JSON data (`type="application/json"`), which the CSP lets be: never run.
                let inner = page.text.replacingOccurrences(of: "<script type=\"module\" src=", with: "")
                    .replacingOccurrences(of: "<script type=\"application/json\" id=\"sesame-messages\">", with: "")
                #expect(!inner.contains("<script") && !inner.contains("style=") && !inner.contains("<style"))
                let script = try await client.json("/console/static/console-\(slug).js")
                #expect(script.status == .ok && script.text.contains("from \"/console/static/console.js\""))
                #expect(!script.text.contains("innerHTML"))
                let refused = try await client.json("/console/\(slug)", headers: [.cookie: bob.cookie])
                #expect(refused.status == .forbidden)
            }
        }
    }

    /// A setting whose key names a token, password, secret or key is marked secret, so its value is never shown.
    @Test func everySettingThatNamesASecretIsMarkedSecret() {
        let words = ["token", "password", "secret", "key"]
        for setting in Vocabulary.server.settings {
            // The key's camelCase words: `smtpPasswordFile` is smtp, password, file; `keychainQuota` names no key.
            var named: [String] = []
            var current = ""
            for character in setting.key {
                if character.isUppercase, !current.isEmpty {
                    named.append(current.lowercased())
                    current = ""
                }
                current.append(character)
            }
            named.append(current.lowercased())
            // A cost parameter of password hashing, not a password.
            let notSecrets = ["passwordScryptLogN"]
            if named.contains(where: words.contains), !notSecrets.contains(setting.key) {
                #expect(setting.secret, "\(setting.key) names a secret but is not marked")
            }
        }
        #expect(Vocabulary.server.settings.filter(\.secret).map(\.key).sorted().contains("metricsToken"))
        #expect(Vocabulary.server.settings.filter(\.secretURLPassword).map(\.key).sorted() == ["database", "smtpUrl"])
    }
}
