import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing

@testable import SesameCore
@testable import SesameGroups
@testable import SesameIdentityProvider
@testable import SesameServer

/// Groups as applications see them, over HTTP on both engines: the claims of the one table (UserInfo per granted
/// scope, the ID token only for clients that asked, discovery generated from the same table), custom claims that
/// cannot override `sub`, and who may use an application: `access_denied` back to the application with its state,
/// on the device page and at the device's poll, and `invalid_grant` at the first refresh after a removal.
@Suite struct GroupAccessTests {
    typealias IdP = IdentityProviderTests

    static func register(
        _ server: TestServer, allowedGroups: [String]? = nil, idTokenClaims: Bool = true
    ) async throws -> IdP.Registered {
        try await server.withStore { store in
            var registration = ClientRegistry.Registration(name: "Photos", redirectURIs: [IdP.redirect])
            registration.firstParty = true
            registration.allowedGroups = allowedGroups
            registration.idTokenClaims = idTokenClaims
            let (client, secret) = try await ClientRegistry(store: store).add(registration, now: Date())
            return IdP.Registered(client: client, secret: secret)
        }
    }

    static func groups(_ server: TestServer, _ body: (GroupsAdmin) async throws -> Void) async throws {
        try await server.withStore { store in try await body(GroupsAdmin(store: store, adminGroup: "admins")) }
    }

    static func authorize(
        _ client: some TestClientProtocol, _ session: SignedIn, _ registered: IdP.Registered, scope: String
    ) async throws -> [String: String] {
        let path =
            "/oauth/authorize?"
            + FormParameters.encode([
                ("client_id", registered.client.id), ("redirect_uri", IdP.redirect), ("response_type", "code"),
                ("scope", scope), ("state", "st-9"), ("nonce", "n-9"), ("code_challenge", IdP.challenge),
                ("code_challenge_method", "S256"),
            ])
        let response = try await client.execute(uri: path, method: .get, headers: [.cookie: session.cookie], body: nil)
        #expect(response.status == .seeOther, "\(response.text)")
        let location = try #require(response.headers[.location])
        #expect(location.hasPrefix(IdP.redirect + "?"), "always back to the application: \(location)")
        return IdP.query(location)
    }

    static func tokens(
        _ client: some TestClientProtocol, _ session: SignedIn, _ registered: IdP.Registered, scope: String
    ) async throws -> [String: Any] {
        let code = try #require(try await authorize(client, session, registered, scope: scope)["code"])
        let tokens = try await IdP.exchange(client, registered, code: code)
        #expect(tokens.status == .ok, "\(tokens.text)")
        return tokens.object
    }

    static func refresh(_ client: some TestClientProtocol, _ registered: IdP.Registered, _ token: String) async throws
        -> TestResponse
    {
        try await client.execute(
            uri: "/oauth/token", method: .post, headers: IdP.basic(registered.client.id, registered.secret ?? ""),
            body: IdP.form([("grant_type", "refresh_token"), ("refresh_token", token)]))
    }

    static func userInfo(_ client: some TestClientProtocol, _ access: Any?) async throws -> TestResponse {
        try await client.execute(
            uri: "/oauth/userinfo", method: .get, headers: [.authorization: "Bearer \(access as? String ?? "")"],
            body: nil)
    }

    @Test(arguments: TestDatabase.all)
    func appsReceiveTheClaimsOfOneTable(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        try await Self.groups(server) { admin in
            try await admin.add("family", name: "Family", claims: #"{"roles": ["viewer"], "tier": 1}"#)
            try await admin.add("admins", name: nil, claims: #"{"roles": ["admin"]}"#)
            try await admin.addMember("ada", to: "family")
            try await admin.addMember("ada", to: "admins")
        }
        let asking = try await Self.register(server, idTokenClaims: true)
        let plain = try await Self.register(server, idTokenClaims: false)
        try await server.app().test(.router) { client in
            // Discovery is the table.
            let discovery = try await client.json("/.well-known/openid-configuration").object
            #expect(discovery["scopes_supported"] as? [String] == ScopeClaims.scopes)
            #expect(discovery["claims_supported"] as? [String] == ScopeClaims.supported)
            #expect(ScopeClaims.scopes.contains("groups") && ScopeClaims.supported.contains("groups"))

            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let scope = "openid profile email groups"
            let jwks = try #require(try await client.json("/oauth/jwks").object["keys"] as? [[String: Any]])
            let tokens = try await Self.tokens(client, session, asking, scope: scope)
            let id = try IdP.verifiedClaims(try #require(tokens["id_token"] as? String), jwks: jwks)
            let info = try await Self.userInfo(client, tokens["access_token"])
            #expect(info.status == .ok)
            for claims in [id, info.object] {
                #expect(claims["groups"] as? [String] == ["admins", "family"])
                // Custom claims merged by slug ascending, the later group winning: family's roles over admins'.
                #expect(claims["roles"] as? [String] == ["viewer"] && claims["tier"] as? Int == 1)
                #expect(claims["preferred_username"] as? String == "ada" && claims["updated_at"] is Int)
            }
            // Every claim an app receives is in the table (or a group's custom claim).
            let custom: Set<String> = ["roles", "tier"]
            #expect(Set(info.object.keys).subtracting(custom).isSubset(of: Set(ScopeClaims.supported)))
            #expect(Set(id.keys).subtracting(custom).isSubset(of: Set(ScopeClaims.supported)))

            // A client that did not ask: UserInfo only.
            let plainTokens = try await Self.tokens(client, session, plain, scope: scope)
            let plainID = try IdP.verifiedClaims(try #require(plainTokens["id_token"] as? String), jwks: jwks)
            #expect(plainID["groups"] == nil && plainID["roles"] == nil && plainID["preferred_username"] == nil)
            let plainInfo = try await Self.userInfo(client, plainTokens["access_token"]).object
            #expect(plainInfo["groups"] as? [String] == ["admins", "family"])
            // Without the groups scope, no groups and no custom claims.
            let profileOnly = try await Self.tokens(client, session, asking, scope: "openid profile")
            let profileInfo = try await Self.userInfo(client, profileOnly["access_token"]).object
            #expect(profileInfo["groups"] == nil && profileInfo["roles"] == nil && profileInfo["name"] != nil)

            // Custom claims that try to override `sub` (written past the rules, straight into the table) are not
            // given: `sub` and every table claim stay Sesame's.
            try await server.withStore { store in
                try await store.db.raw(
                    #"UPDATE account_groups SET claims = '{"sub": "admin", "email": "boss@example.org", "groups": ["root"], "exp": 9999999999}' WHERE slug = 'family'"#
                ).run()
            }
            let forged = try await Self.tokens(client, session, asking, scope: scope)
            let forgedID = try IdP.verifiedClaims(try #require(forged["id_token"] as? String), jwks: jwks)
            let forgedInfo = try await Self.userInfo(client, forged["access_token"]).object
            for claims in [forgedID, forgedInfo] {
                #expect(claims["sub"] as? String == id["sub"] as? String)
                #expect(claims["email"] == nil && claims["groups"] as? [String] == ["admins", "family"])
                #expect(claims["roles"] as? [String] == ["admin"])
            }
            #expect(forgedID["exp"] as? Int == (forgedID["iat"] as? Int).map { $0 + TokenIssuer.idTokenLifetime })
        }
    }

    @Test(arguments: TestDatabase.all)
    func peopleOutsideTheAllowedGroupsAreSentBackWithAccessDenied(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let bob = try await server.seedUser("bob", password: "correct horse battery")
        try await Self.groups(server) { admin in
            try await admin.add("family", name: nil, claims: nil)
            try await admin.add("friends", name: nil, claims: nil)
            try await admin.addMember("ada", to: "family")
            try await admin.addMember("bob", to: "friends")
            // A case-changed or look-alike slug names no group: refused, never folded into `family`.
            for slug in ["Family", "FAMILY", "f\u{0430}mily", "family "] {
                await #expect(throws: AdminError.self) { try await admin.addMember("bob", to: slug) }
                await #expect(throws: AdminError.self) { try await admin.add(slug, name: nil, claims: nil) }
            }
        }
        // Nor can a client name one.
        await #expect(throws: AdminError.self) { try await Self.register(server, allowedGroups: ["Family"]) }
        await #expect(throws: AdminError.self) { try await Self.register(server, allowedGroups: ["f\u{0430}mily"]) }
        let photos = try await Self.register(server, allowedGroups: ["family"])
        try await server.app().test(.router) { client in
            let bobSession = try await signInWithPassword(client, "bob", "correct horse battery")
            let refused = try await Self.authorize(client, bobSession, photos, scope: "openid")
            #expect(refused["error"] == "access_denied" && refused["state"] == "st-9")
            #expect(refused["iss"] == "http://localhost:8080" && refused["code"] == nil)
            let events = try await server.withStore { try await $0.auditEvents(userID: bob.id, limit: 5) }
            #expect(events.contains { $0.kind == "app.access_denied" && $0.detail == photos.client.id })

            let adaSession = try await signInWithPassword(client, "ada", "correct horse battery")
            #expect(try await Self.authorize(client, adaSession, photos, scope: "openid")["code"] != nil)

            // The account page lists the apps each may use.
            func available(_ session: SignedIn) async throws -> [String]? {
                let apps = try await client.json("/api/account/apps", headers: session.bearerHeaders).object
                return (apps["available"] as? [[String: Any]])?.compactMap { $0["clientId"] as? String }
            }
            #expect(try await available(adaSession) == [photos.client.id])
            #expect(try await available(bobSession) == [])
        }
    }

    @Test(arguments: TestDatabase.all)
    func aRemovalEndsTheNextRefresh(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        try await Self.groups(server) { admin in
            try await admin.add("family", name: nil, claims: nil)
            try await admin.addMember("ada", to: "family")
        }
        let photos = try await Self.register(server, allowedGroups: ["family"])
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            let tokens = try await Self.tokens(client, session, photos, scope: "openid groups offline_access")
            let first = try await Self.refresh(client, photos, try #require(tokens["refresh_token"] as? String))
            #expect(first.status == .ok, "\(first.text)")
            let refreshToken = try #require(first.object["refresh_token"] as? String)

            // Taken out of the group mid-session: the very next refresh fails, and the live access token with it.
            try await Self.groups(server) { admin in try await admin.removeMember("ada", from: "family") }
            let after = try await Self.refresh(client, photos, refreshToken)
            #expect(after.status == .badRequest && after.errorCode == "invalid_grant")
            #expect(try await Self.userInfo(client, first.object["access_token"]).status == .unauthorized)
            let introspected = try await client.execute(
                uri: "/oauth/introspect", method: .post,
                headers: IdP.basic(photos.client.id, photos.secret ?? ""),
                body: IdP.form([("token", first.object["access_token"] as? String ?? "")]))
            #expect(introspected.object["active"] as? Bool == false, "\(introspected.text)")
            // Put back, the ended grant stays ended: the app signs the person in again.
            try await Self.groups(server) { admin in try await admin.addMember("ada", to: "family") }
            #expect(try await Self.refresh(client, photos, refreshToken).errorCode == "invalid_grant")
            #expect(try await Self.authorize(client, session, photos, scope: "openid")["code"] != nil)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aDeviceGrantBySomeoneOutsideTheGroupsIsDenied(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("bob", password: "correct horse battery")
        try await Self.groups(server) { admin in try await admin.add("family", name: nil, claims: nil) }
        let tv = try await Self.register(server, allowedGroups: ["family"])
        try await server.app().test(.router) { client in
            let started = try await DeviceAuthorizationTests.startDevice(client, tv)
            let deviceCode = try #require(started["device_code"] as? String)
            let userCode = try #require(started["user_code"] as? String)
            let session = try await signInWithPassword(client, "bob", "correct horse battery")
            let page = try await DeviceAuthorizationTests.post(
                client, "/device", session, [("user_code", userCode), ("csrf_token", session.csrf)])
            #expect(page.status == .forbidden && page.text.contains("have access to Photos"))
            #expect(!page.text.contains("device-approve-form"))
            server.clock.advance(6)
            #expect(try await DeviceAuthorizationTests.poll(client, tv, deviceCode).errorCode == "access_denied")
            // Allowing by posting the form directly is refused the same way.
            let again = try await DeviceAuthorizationTests.startDevice(client, tv)
            let allowed = try await DeviceAuthorizationTests.post(
                client, "/device/approve", session,
                [
                    ("user_code", try #require(again["user_code"] as? String)), ("csrf_token", session.csrf),
                    ("decision", "allow"),
                ])
            #expect(allowed.status == .forbidden)
            server.clock.advance(6)
            #expect(
                try await DeviceAuthorizationTests.poll(client, tv, try #require(again["device_code"] as? String))
                    .errorCode == "access_denied")
        }
    }

    @Test(arguments: TestDatabase.all)
    func clientsNameOnlyGroupsThatExistAndCanBeOpenedAgain(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await Self.groups(server) { admin in try await admin.add("family", name: nil, claims: nil) }
        try await server.withStore { store in
            let admin = ClientAdmin(store: store, groups: StoredAccountGroups(store: store))
            var options = ClientAdmin.ClientOptions(name: "Photos", redirectURIs: [IdP.redirect])
            options.allowedGroups = ["family", "friends"]
            let unknown = await #expect(throws: AdminError.self) { try await admin.addClient(options) }
            #expect(unknown?.message.contains("no group friends") == true)
            options.allowedGroups = ["family", "fam ily"]
            await #expect(throws: AdminError.self) { try await admin.addClient(options) }
            options.allowedGroups = ["family", "family"]
            let added = try await admin.addClient(options)
            let id = try #require(added.first?.split(separator: " ").last.map(String.init))
            #expect(try await store.client(id: id)?.allowedGroups == ["family"])
            #expect(try await store.client(id: id)?.idTokenClaims == false)
            #expect(try await admin.showClient(id).contains("allowed groups: family"))

            var open = ClientAdmin.ClientChanges()
            open.allowedGroups = .some(nil)
            open.idTokenClaims = true
            #expect(try await admin.updateClient(id, open).contains("allowed groups anyone"))
            #expect(try await store.client(id: id)?.allowedGroups == nil)
            #expect(try await store.client(id: id)?.idTokenClaims == true)
            var closed = ClientAdmin.ClientChanges()
            closed.allowedGroups = .some(["nobody"])
            await #expect(throws: AdminError.self) { try await admin.updateClient(id, closed) }
            #expect(try await store.client(id: id)?.allowedGroups == nil, "a refused change writes nothing")
            let events = try await store.auditEvents(userID: nil, limit: 10)
            #expect(events.contains { $0.kind == "client.updated" && $0.detail == id && $0.clientAddress == "cli" })
        }
    }
}
