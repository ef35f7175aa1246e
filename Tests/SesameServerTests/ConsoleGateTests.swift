import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

import SesameConsole
@testable import SesameCore
@testable import SesameGroups
@testable import SesamePasswords
@testable import SesameServer

/// The console's gate (`AdminGate`, `ConsoleRoutes`), attacked over HTTP: every page and the admin API refuse a
/// signed-out visitor, a person outside the administrators' group, a password session, a passkey sign-in older than
/// the console's window, a cookie write without the console's own CSRF token and a post from another site; an admin
/// page is never cached or framed and loads nothing from elsewhere.
@Suite struct ConsoleGateTests {
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    static let consoleCSRFHeader = HTTPField.Name("X-Console-CSRF")!

    /// The value of `<meta name="NAME" content="...">` in a page.
    static func meta(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: "<meta name=\"\(name)\" content=\"") else { return nil }
        let rest = html[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    static func makeAdmin(_ server: TestServer, _ username: String) async throws {
        try await server.withStore { store in
            let admin = GroupsAdmin(store: store, adminGroup: "admins")
            if try await store.group(slug: "admins") == nil { try await admin.add("admins", name: nil, claims: nil) }
            try await admin.addMember(username, to: "admins")
        }
    }

    @Test func everyPageIsListedOnceAndHasItsFiles() throws {
        #expect(!ConsoleRoutes.pages.isEmpty, "the console has no pages")
        #expect(Set(ConsoleRoutes.pages.map(\.slug)).count == ConsoleRoutes.pages.count)
        let resources = try ConsoleRoutes.Resources.load()
        for page in ConsoleRoutes.pages {
            #expect(resources.bodies[page.slug] != nil, "no template for \(page.slug)")
            #expect(resources.files["console-\(page.slug).js"] != nil, "no script for \(page.slug)")
        }
    }

    @Test(arguments: TestDatabase.all)
    func pagesRefuseEveryoneButARecentPasskeyAdmin(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        _ = try await server.seedUser("bob", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            try await Self.makeAdmin(server, "ada")
            for page in ConsoleRoutes.pages {
                let path = "/console/\(page.slug)"
                // Signed out: to the sign-in page, with a passkey, and back.
                let out = try await client.execute(uri: path, method: .get)
                #expect(out.status == .seeOther)
                #expect(
                    out.headers[.location]
                        == "/signin?return=\(path.replacingOccurrences(of: "/", with: "%2F"))&passkey=required"
                        || out.headers[.location] == "/signin?return=\(path)&passkey=required")
                #expect(out.headers[.cacheControl] == "no-store")

                // An admin signed in with a passkey just now: the page, never cached, never framed.
                let shown = try await client.execute(uri: path, method: .get, headers: [.cookie: ada.cookie])
                #expect(shown.status == .ok, "\(path)")
                #expect(shown.headers[.contentSecurityPolicy] == ConsoleRoutes.contentSecurityPolicy)
                #expect(shown.headers[.cacheControl] == "no-store")
                #expect(shown.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                let html = String(buffer: shown.body)
                #expect(html.contains("aria-current=\"page\""))
                let consoleToken = Self.meta("sesame-console-csrf", in: html) ?? ""
                #expect(!consoleToken.isEmpty && consoleToken != ada.csrf, "the console's CSRF token is its own")
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func outsidersPasswordsAndStaleSignInsAreRefused(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        _ = try await server.seedUser("carol", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let (bob, _) = try await signUpWithPasskey(client, "bob")
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            try await Self.makeAdmin(server, "ada")
            try await Self.makeAdmin(server, "carol")
            let page = "/console/\(ConsoleRoutes.pages.first?.slug ?? "")"

            // Not an administrator: a 403 page and a 403 from the API.
            let outsider = try await client.execute(uri: page, method: .get, headers: [.cookie: bob.cookie])
            #expect(outsider.status == .forbidden)
            #expect(outsider.headers[.contentSecurityPolicy] == ConsoleRoutes.contentSecurityPolicy)
            #expect(try await client.json("/api/admin/groups", headers: bob.bearerHeaders).errorCode == "not_an_admin")

            // An administrator signed in with a password: the page asks for the passkey; the API says why.
            let carol = try await signInWithPassword(client, "carol", "correct horse battery")
            let password = try await client.execute(uri: page, method: .get, headers: [.cookie: carol.cookie])
            #expect(password.status == .unauthorized)
            #expect(String(buffer: password.body).contains("data-reason=\"passkey\""))
            #expect(
                try await client.json("/api/admin/groups", headers: carol.bearerHeaders).errorCode
                    == "passkey_required")

            // The passkey sign-in grows older than the console's window: asked again, inline.
            let window = server.configuration.consoleReauthenticationWindow
            #expect(window == 900)
            server.clock.advance(TimeInterval(window + 1))
            let stale = try await client.execute(uri: page, method: .get, headers: [.cookie: ada.cookie])
            #expect(stale.status == .unauthorized)
            #expect(String(buffer: stale.body).contains("data-reason=\"stale\""))
            let staleAPI = try await client.json("/api/admin/groups", headers: ada.bearerHeaders)
            #expect(staleAPI.errorCode == "reauthentication_required")
            #expect(staleAPI.object["maxAgeSeconds"] as? String == String(window))
        }
    }

    @Test(arguments: TestDatabase.all)
    func writesNeedTheConsolesOwnTokenAndThisSite(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            try await Self.makeAdmin(server, "ada")
            let html = String(
                buffer: try await client.execute(
                    uri: "/console/\(ConsoleRoutes.pages.first?.slug ?? "")", method: .get,
                    headers: [.cookie: ada.cookie]
                ).body)
            let token = try #require(Self.meta("sesame-console-csrf", in: html))
            let body = #"{"slug": "family"}"#
            // The session's token alone, or with a wrong console token: nothing written.
            for console in [nil, "x", String(token.dropLast()) + (token.hasSuffix("A") ? "B" : "A")] {
                var headers: HTTPFields = [.cookie: ada.cookie, Self.csrfHeader: ada.csrf]
                if let console { headers[Self.consoleCSRFHeader] = console }
                let refused = try await client.json("/api/admin/groups", .post, body: body, headers: headers)
                #expect(refused.status == .forbidden && refused.errorCode == "csrf_check_failed")
            }
            // A post from a page of another site, with both tokens, is refused before anything runs.
            let crossSite = try await client.json(
                "/api/admin/groups", .post, body: body,
                headers: [
                    .cookie: ada.cookie, Self.csrfHeader: ada.csrf, Self.consoleCSRFHeader: token,
                    .origin: "https://evil.example",
                ])
            #expect(crossSite.status == .forbidden && crossSite.errorCode == "origin_not_allowed")
            #expect(try await server.withStore { try await $0.group(slug: "family") } == nil)
            // Both tokens from this site: written, and the answer is never cached.
            let created = try await client.json(
                "/api/admin/groups", .post, body: body,
                headers: [.cookie: ada.cookie, Self.csrfHeader: ada.csrf, Self.consoleCSRFHeader: token])
            #expect(created.status == .created, "\(created.text)")
            #expect(created.headers[.cacheControl] == "no-store")
            // Taken out of the group at the command line (another admin with a passkey remains): refused on the
            // next request.
            _ = try await signUpWithPasskey(client, "bob")
            try await Self.makeAdmin(server, "bob")
            try await server.withStore {
                _ = try await GroupsAdmin(store: $0, adminGroup: "admins").removeMember("ada", from: "admins")
            }
            let after = try await client.json("/api/admin/groups", headers: ada.bearerHeaders)
            #expect(after.errorCode == "not_an_admin")
        }
    }

    /// The owner's own account page keeps the last-administrator rule too: the last administrator cannot remove
    /// their last passkey (though a password would still let them in), until someone else can open the console.
    @Test(arguments: TestDatabase.all)
    func theLastAdministratorKeepsTheirLastPasskey(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            let (ada, _) = try await signUpWithPasskey(client, "ada")
            try await Self.makeAdmin(server, "ada")
            try await server.withStore { store in
                let user = try #require(try await store.user(usernameKey: "ada"))
                try await store.setPassword(
                    userID: user.id, try PasswordHasher(logN: 10).hash("correct horse battery"), at: Date())
            }
            let listed = try await client.json("/api/account/passkeys", headers: [.cookie: ada.cookie])
            let passkeys = try JSONSerialization.jsonObject(with: Data(listed.text.utf8)) as? [[String: Any]]
            let id = try #require(passkeys?.first?["id"] as? String, "\(listed.text)")
            let refused = try await client.json("/api/account/passkeys/\(id)", .delete, headers: ada.cookieHeaders)
            #expect(refused.status == .conflict && refused.errorCode == "last_administrator", "\(refused.text)")
            #expect(try await client.json("/api/account/passkeys", headers: [.cookie: ada.cookie]).text.contains(id))
            // Another administrator with a passkey: now it may go.
            _ = try await signUpWithPasskey(client, "bob")
            try await Self.makeAdmin(server, "bob")
            let removed = try await client.json("/api/account/passkeys/\(id)", .delete, headers: ada.cookieHeaders)
            #expect(removed.status == .ok, "\(removed.text)")
        }
    }
}
