import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import SesameCore
@testable import SesamePasswords
@testable import SesameOperations
import SesameServer

@Suite struct OperationalEndpointTests {
    @Test(arguments: TestDatabase.all)
    func healthChecksTheDatabase(_ db: TestDatabase) async throws {
        try await TestServer(db).app().test(.router) { client in
            let response = try await client.json("/health")
            #expect(response.status == .ok)
            #expect(response.object["database"] as? String == "ok")
        }
    }

    @Test func metricsArePrometheusText() async throws {
        try await TestServer(.sqlite) { $0.metricsToken = "metrics-token-0123456789" }.app().test(.router) { client in
            try await client.json("/health")
            let response = try await client.json(
                "/metrics", headers: [.authorization: "Bearer metrics-token-0123456789"])
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(response.text.contains("sesame_http_requests_total"))
            #expect(response.text.contains(#"route="/health""#))
        }
    }

    @Test func metricsCountEachSeriesAndNoInventedMethods() async throws {
        try await TestServer(.sqlite) { $0.metricsToken = "metrics-token-0123456789" }.app().test(.router) { client in
            for _ in 0..<3 { try await client.json("/health") }
            // Methods outside RFC 9110 are counted under `other`: the series stay few whatever clients send.
            for made in ["BREW", "PROPFINDX", "X-\(UInt64.random(in: 0...UInt64.max))"] {
                try await client.json("/health", HTTPRequest.Method(made)!)
            }
            let text = try await client.json(
                "/metrics", headers: [.authorization: "Bearer metrics-token-0123456789"]
            ).text
            #expect(text.contains(#"sesame_http_requests_total{method="GET",route="/health",status="200"} 3"#))
            #expect(text.contains(#"method="other""#))
            #expect(!text.contains("BREW") && !text.contains("PROPFINDX") && !text.contains(#"method="X-"#))
            #expect(text.contains(#"sesame_http_request_duration_seconds_count{route="/health"} "#))
        }
    }

    @Test func wellKnownFilesComeFromConfiguration() async throws {
        let server = TestServer(.sqlite, origin: "https://login.example.com") { c in
            c.rpID = "example.com"
            c.appleAppIDs = ["A1B2C3D4E5.com.example.Shiny"]
            c.androidApps = [.init(packageName: "com.example.shiny", sha256CertFingerprints: ["AB:CD"])]
            c.relatedOrigins = ["https://example.co.uk"]
        }
        try await server.app().test(.router) { client in
            let aasa = try await client.json("/.well-known/apple-app-site-association")
            #expect(aasa.status == .ok)
            #expect(aasa.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(
                (aasa.object["webcredentials"] as? [String: Any])?["apps"] as? [String] == [
                    "A1B2C3D4E5.com.example.Shiny"
                ])

            let links = try await client.json("/.well-known/assetlinks.json")
            let statements = try JSONSerialization.jsonObject(with: Data(links.text.utf8)) as? [[String: Any]]
            #expect(
                statements?.first?["relation"] as? [String] == [
                    "delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls",
                ])
            let target = statements?.first?["target"] as? [String: Any]
            #expect(target?["package_name"] as? String == "com.example.shiny")
            #expect(target?["sha256_cert_fingerprints"] as? [String] == ["AB:CD"])

            let endpoints = try await client.json("/.well-known/passkey-endpoints")
            #expect(endpoints.object["enroll"] as? String == "https://login.example.com/account#passkeys")
            #expect(endpoints.object["manage"] as? String == "https://login.example.com/account#passkeys")

            let webauthn = try await client.json("/.well-known/webauthn")
            #expect(webauthn.object["origins"] as? [String] == ["https://login.example.com", "https://example.co.uk"])

            let change = try await client.json("/.well-known/change-password")
            #expect(change.status == .found)
            #expect(change.headers[.location] == "/account#password")
        }
    }

    @Test func openAPIDocumentIsServed() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let response = try await client.json("/openapi.yaml")
            #expect(response.status == .ok)
            #expect(response.text.hasPrefix("openapi: 3."))
            // The parts assembled (each feature's Resources/openapi.yaml), as the composition root joined them.
            #expect(response.text == APIDocument.server)
            #expect(response.headers[.contentType] == "application/yaml; charset=utf-8")
            let routes = [
                "/health", "/metrics", "/openapi.yaml", "/.well-known/apple-app-site-association",
                "/.well-known/assetlinks.json",
                "/.well-known/passkey-endpoints", "/.well-known/webauthn", "/.well-known/change-password",
                "/api/sessions/password",
                "/api/sessions/second-factor", "/api/sessions/second-factor/sms", "/api/session", "/api/account",
                "/api/account/password",
                "/api/account/sessions", "/api/account/sessions/{id}", "/api/account/audit",
                "/api/registration/options", "/api/registration",
                "/api/authentication/options", "/api/authentication", "/api/account/passkeys",
                "/api/account/passkeys/options",
                "/api/account/passkeys/{id}", "/api/account/signals", "/api/account/totp", "/api/account/totp/qr.png",
                "/api/account/totp/confirm", "/api/account/sms", "/api/account/sms/confirm",
                "/api/account/recovery-codes",
                "/api/session/reauthenticate/options", "/api/session/reauthenticate", "/api/session/reauthenticate/sms",
                "/providers/{aaguid}/icon",
            ]
            for path in routes {
                #expect(response.text.contains("  \(path):"), "openapi.yaml does not describe \(path)")
            }
        }
    }

    @Test func unknownRoutesAnswerJSONErrors() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let response = try await client.json("/api/nope")
            #expect(response.status == .notFound)
            #expect(response.errorCode == "not_found")
            #expect(response.headers[.xContentTypeOptions] == "nosniff")
        }
    }

    /// A known path with a method it does not support: 405, the methods it does support in `Allow`, JSON error.
    @Test(arguments: [
        ("/api/account/password", HTTPRequest.Method.post, "DELETE, PUT"),
        ("/api/account/passkeys/abc", .put, "DELETE, PATCH"),
        ("/api/sessions/password", .get, "POST"),
        ("/health", .delete, "GET, HEAD"),
        ("/api/account/sessions", .patch, "DELETE, GET, HEAD"),
        ("/api/session/reauthenticate", .get, "POST"),
    ])
    func knownPathsWithAnotherMethodAnswer405(_ path: String, _ method: HTTPRequest.Method, _ allow: String)
        async throws
    {
        try await TestServer(.sqlite).app().test(.router) { client in
            let response = try await client.json(path, method)
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers[.allow] == allow)
            #expect(response.errorCode == "method_not_allowed")
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            // The supported method is still routed (not 405).
            let first = try #require(allow.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) })
            let supported = try await client.json(path, HTTPRequest.Method(first)!)
            #expect(supported.status != .methodNotAllowed)
        }
    }

    @Test func unknownPathsStay404WhateverTheMethod() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            for method: HTTPRequest.Method in [.get, .post, .delete] {
                let response = try await client.json("/api/account/nope", method)
                #expect(response.status == .notFound)
                #expect(response.headers[.allow] == nil)
            }
            // A capture matches one segment only: deeper paths are unknown.
            #expect(try await client.json("/api/account/passkeys/a/b", .put).status == .notFound)
        }
    }
}

@Suite struct PasswordSignInTests {
    @Test(arguments: TestDatabase.all)
    func signInSetsAHardenedCookie(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("Alice", password: "correct horse")
        try await server.app().test(.router) { client in
            let response = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"ALICE","password":"correct horse"}"#)
            #expect(response.status == .ok)
            #expect(response.object["status"] as? String == "signed_in")
            let setCookie = response.headers[.setCookie] ?? ""
            #expect(setCookie.hasPrefix("sesame_session="))
            for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] { #expect(setCookie.contains(attribute)) }
            #expect(!setCookie.contains("Secure"))
            let token = response.object["sessionToken"] as? String ?? ""
            #expect(token.utf8.count == 43)
            // Only the hash is stored.
            let stored = try await server.withStore {
                try await $0.session(tokenHash: Array(token.utf8), now: server.clock.now)
            }
            #expect(stored == nil)
            let byHash = try await server.withStore {
                try await $0.session(tokenHash: Secrets.sha256(token), now: server.clock.now)
            }
            #expect(byHash?.method == "password")
        }
    }

    @Test func httpsOriginGivesHostPrefixedSecureCookie() async throws {
        let server = TestServer(.sqlite, origin: "https://example.com") { $0.rpID = "example.com" }
        try await server.seedUser("bob", password: "correct horse")
        try await server.app().test(.router) { client in
            let response = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"bob","password":"correct horse"}"#)
            let setCookie = response.headers[.setCookie] ?? ""
            #expect(setCookie.hasPrefix("__Host-sesame_session="))
            #expect(setCookie.contains("; Secure"))
            #expect(!setCookie.contains("Domain="))
        }
    }

    @Test(arguments: TestDatabase.all)
    func wrongPasswordAndUnknownUserLookTheSame(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("carol", password: "correct horse")
        try await server.app().test(.router) { client in
            let wrong = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"carol","password":"wrong horse"}"#)
            let unknown = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"nobody","password":"wrong horse"}"#)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.status == unknown.status)
            #expect(wrong.text == unknown.text)
            #expect(wrong.errorCode == "invalid_credentials")
        }
        let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 10) }
        #expect(events.filter { $0.kind == "sign_in.password" && $0.outcome == "failure" }.count == 2)
    }

    /// A username with control characters (NUL, which PostgreSQL refuses in text) is simply an unknown account:
    /// the same 401 for password sign-in and ordinary options for passkey sign-in, never a server error.
    /// Found by schemathesis on PostgreSQL.
    @Test(arguments: TestDatabase.all)
    func controlCharactersInAUsernameAreAnUnknownAccount(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.app().test(.router) { client in
            let password = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"a\u0000b","password":"wrong horse"}"#)
            #expect(password.status == .unauthorized)
            #expect(password.errorCode == "invalid_credentials")
            let options = try await client.json(
                "/api/authentication/options", .post, body: #"{"username":"\u0000\u0007"}"#)
            #expect(options.status == .ok)
        }
    }

    @Test(arguments: TestDatabase.all)
    func repeatedFailuresLockTheAccountWith429(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("dave", password: "correct horse")
        try await server.app().test(.router) { client in
            for _ in 0..<5 {
                let r = try await client.json(
                    "/api/sessions/password", .post, body: #"{"username":"dave","password":"nope nope"}"#)
                #expect(r.status == .unauthorized)
            }
            // Locked: even the right password is refused, from another address too.
            let locked = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"DAVE","password":"correct horse"}"#,
                headers: [.init("X-Forwarded-For")!: "198.51.100.7"]
            )
            #expect(locked.status == .tooManyRequests)
            #expect(locked.errorCode == "too_many_attempts")
            let retry = Int(locked.headers[.retryAfter] ?? "") ?? 0
            #expect(retry > 0 && retry <= 900)
            // After the window the account works again.
            server.clock.advance(901)
            let ok = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"dave","password":"correct horse"}"#)
            #expect(ok.status == .ok)
        }
    }

    /// Guesses sent all at once: attempts are counted before the password is checked, so no more than the
    /// account's limit are ever checked, whatever the concurrency.
    @Test(arguments: TestDatabase.all)
    func concurrentGuessesCannotOutrunTheLimit(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("gus", password: "correct horse")
        try await server.app().test(.router) { client in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await client.json(
                            "/api/sessions/password", .post, body: #"{"username":"gus","password":"guess \#(index)"}"#,
                            headers: [.init("X-Forwarded-For")!: "203.0.113.\(index)"]
                        ).status.code
                    }
                }
                var all: [Int] = []
                for try await status in group { all.append(status) }
                return all
            }
            #expect(statuses.filter { $0 == 401 }.count == 5)
            #expect(statuses.filter { $0 == 429 }.count == 15)
        }
    }

    @Test func oneAddressGuessingManyAccountsIsLimited() async throws {
        var server = TestServer(.sqlite)
        server.rateLimits.perAddress = 3
        try await server.app().test(.router) { client in
            for index in 0..<3 {
                let r = try await client.json(
                    "/api/sessions/password", .post, body: #"{"username":"u\#(index)","password":"guess guess"}"#)
                #expect(r.status == .unauthorized)
            }
            let limited = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"u9","password":"guess guess"}"#)
            #expect(limited.status == .tooManyRequests)
            let other = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"u9","password":"guess guess"}"#,
                headers: [.init("X-Forwarded-For")!: "203.0.113.9"]
            )
            #expect(other.status == .unauthorized)
        }
    }

    @Test(arguments: TestDatabase.all)
    func olderScryptParametersAreUpgradedOnSignIn(_ db: TestDatabase) async throws {
        var server = TestServer(db)
        try await server.seedUser("erin", password: "correct horse")  // logN 10
        server.configuration.passwordScryptLogN = 11
        try await server.app().test(.router) { client in
            let r = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"erin","password":"correct horse"}"#)
            #expect(r.status == .ok)
        }
        let user = try #require(try await server.withStore { try await $0.user(usernameKey: "erin") })
        let record = try await server.withStore { try await $0.password(userID: user.id) }
        #expect(record?.logN == 11)
        #expect(try PasswordHasher(logN: 11).verify("correct horse", against: #require(record)))
    }

    @Test(arguments: TestDatabase.all)
    func disabledAccountsCannotSignIn(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("frank", password: "correct horse")
        _ = try await server.withStore { try await $0.setDisabled(userID: user.id, true, at: server.clock.now) }
        try await server.app().test(.router) { client in
            let r = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"frank","password":"correct horse"}"#)
            #expect(r.status == .forbidden)
            #expect(r.errorCode == "account_disabled")
        }
    }

    @Test(arguments: TestDatabase.all)
    func secondFactorAccountsGetAPendingStep(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("grace", password: "correct horse")
        try await server.withStore { store in
            try await store.setPendingTOTP(userID: user.id, secret: Array(repeating: 3, count: 20), at: Date())
            let pending = try #require(try await store.totp(userID: user.id))
            _ = try await store.confirmTOTP(userID: user.id, step: 1, revision: pending.revision)
            try await store.replaceRecoveryCodes(userID: user.id, salt: [5], hashes: [[1]], at: Date())
        }
        try await server.app().test(.router) { client in
            let r = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"grace","password":"correct horse"}"#)
            #expect(r.status == .ok)
            #expect(r.object["status"] as? String == "second_factor_required")
            #expect(r.object["factors"] as? [String] == ["totp", "recovery"])
            #expect(r.object["sessionToken"] == nil)
            #expect(r.cookie(named: "sesame_session") == nil)
            #expect((r.object["pendingToken"] as? String)?.utf8.count == 43)
        }
    }

    @Test(arguments: [
        ("text/plain", #"{"username":"a","password":"b"}"#, 415),
        ("application/json", #"{"username":"a""#, 400),
        ("application/json", #"{"username":"a"}"#, 400),
        ("application/json", #"{"username":1,"password":"b"}"#, 400),
        ("application/json", #"["username"]"#, 400),
        ("application/json", String(repeating: " ", count: 70_000) + "{}", 413),
    ])
    func badInputIsA4xxJSONError(_ contentType: String, _ body: String, _ status: Int) async throws {
        let server = TestServer(.sqlite)
        try await server.app().test(.router) { client in
            let r = try await client.json(
                "/api/sessions/password", .post, body: body, headers: [.contentType: contentType])
            #expect(r.status.code == status)
            #expect(r.errorCode != nil)
            #expect(r.object["message"] is String)
        }
        // Nothing was recorded: no failure counted, no audit event.
        let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 10) }
        #expect(events.isEmpty)
    }
}

@Suite struct AccountTests {
    @Test(arguments: TestDatabase.all)
    func accountNeedsASession(_ db: TestDatabase) async throws {
        try await TestServer(db).app().test(.router) { client in
            let r = try await client.json("/api/account")
            #expect(r.status == .unauthorized)
            #expect(r.errorCode == "unauthenticated")
            let forged = try await client.json(
                "/api/account", headers: [.authorization: "Bearer " + String(repeating: "A", count: 43)])
            #expect(forged.status == .unauthorized)
            let garbage = try await client.json("/api/account", headers: [.cookie: "sesame_session=%%%"])
            #expect(garbage.status == .unauthorized)
        }
    }

    @Test(arguments: TestDatabase.all)
    func accountSummaryWithCookieOrBearer(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("heidi", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "heidi", "correct horse")
            for headers in [[.cookie: session.cookie] as HTTPFields, session.bearerHeaders] {
                let r = try await client.json("/api/account", headers: headers)
                #expect(r.status == .ok)
                #expect((r.object["user"] as? [String: Any])?["username"] as? String == "heidi")
                #expect(r.object["hasPassword"] as? Bool == true)
                #expect(r.object["csrfToken"] as? String == session.csrf)
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func cookieWritesNeedTheCSRFTokenAndBearerWritesDoNot(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ivan", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ivan", "correct horse")
            let body = #"{"currentPassword":"correct horse","newPassword":"another horse"}"#
            let noToken = try await client.json(
                "/api/account/password", .put, body: body, headers: [.cookie: session.cookie])
            #expect(noToken.status == .forbidden)
            #expect(noToken.errorCode == "csrf_check_failed")
            let wrongToken = try await client.json(
                "/api/account/password", .put, body: body,
                headers: [
                    .cookie: session.cookie,
                    .init("X-CSRF-Token")!: (session.csrf.hasPrefix("A") ? "B" : "A") + session.csrf.dropFirst(),
                ]
            )
            #expect(wrongToken.status == .forbidden)
            let crossOrigin = try await client.json(
                "/api/account/password", .put, body: body,
                headers: session.cookieHeaders + [HTTPField(name: .origin, value: "https://evil.example")]
            )
            #expect(crossOrigin.status == .forbidden)
            #expect(crossOrigin.errorCode == "origin_not_allowed")
            let ok = try await client.json(
                "/api/account/password", .put, body: body,
                headers: session.cookieHeaders + [HTTPField(name: .origin, value: "http://localhost:8080")]
            )
            #expect(ok.status == .ok)
            let bearer = try await client.json(
                "/api/account/password", .put,
                body: #"{"currentPassword":"another horse","newPassword":"third horse!"}"#,
                headers: session.bearerHeaders
            )
            #expect(bearer.status == .ok)
        }
    }

    @Test(arguments: TestDatabase.all)
    func passwordChangeRulesAndOtherSessionsEnd(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("judy", password: "correct horse")
        try await server.app().test(.router) { client in
            let first = try await signInWithPassword(client, "judy", "correct horse")
            let second = try await signInWithPassword(client, "judy", "correct horse")
            let short = try await client.json(
                "/api/account/password", .put, body: #"{"currentPassword":"correct horse","newPassword":"short"}"#,
                headers: first.bearerHeaders
            )
            #expect(short.status == .badRequest)
            #expect(short.errorCode == "invalid_password")
            let wrong = try await client.json(
                "/api/account/password", .put,
                body: #"{"currentPassword":"wrong horse","newPassword":"new horse new"}"#, headers: first.bearerHeaders
            )
            #expect(wrong.status == .forbidden)
            let missing = try await client.json(
                "/api/account/password", .put, body: #"{"newPassword":"new horse new"}"#, headers: first.bearerHeaders)
            #expect(missing.status == .badRequest)
            let ok = try await client.json(
                "/api/account/password", .put,
                body: #"{"currentPassword":"correct horse","newPassword":"new horse new"}"#,
                headers: first.bearerHeaders
            )
            #expect(ok.status == .ok)
            #expect(ok.object["count"] as? Int == 1)
            #expect(try await client.json("/api/account", headers: second.bearerHeaders).status == .unauthorized)
            #expect(try await client.json("/api/account", headers: first.bearerHeaders).status == .ok)
            let old = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"judy","password":"correct horse"}"#)
            #expect(old.status == .unauthorized)
            _ = try await signInWithPassword(client, "judy", "new horse new")
        }
    }

    @Test(arguments: TestDatabase.all)
    func passwordOnlyAccountCannotRemoveItsPassword(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ken", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ken", "correct horse")
            let r = try await client.json("/api/account/password", .delete, headers: session.bearerHeaders)
            #expect(r.status == .conflict)
            #expect(r.errorCode == "last_way_in")
        }
    }

    @Test(arguments: TestDatabase.all)
    func sessionsListAndSignOutOneOrAll(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("leo", password: "correct horse")
        try await server.app().test(.router) { client in
            let a = try await signInWithPassword(client, "leo", "correct horse")
            let b = try await signInWithPassword(client, "leo", "correct horse")
            let c = try await signInWithPassword(client, "leo", "correct horse")
            let list = try await client.json("/api/account/sessions", headers: a.bearerHeaders)
            let sessions = try JSONSerialization.jsonObject(with: Data(list.text.utf8)) as? [[String: Any]] ?? []
            #expect(sessions.count == 3)
            #expect(sessions.filter { $0["current"] as? Bool == true }.count == 1)
            #expect(!list.text.contains(a.token))

            // Sign out b from a.
            let bID = try await client.json("/api/account", headers: b.bearerHeaders).object["session"].flatMap {
                ($0 as? [String: Any])?["id"] as? String
            }
            let one = try await client.json("/api/account/sessions/\(bID ?? "")", .delete, headers: a.bearerHeaders)
            #expect(one.status == .ok)
            #expect(try await client.json("/api/account", headers: b.bearerHeaders).status == .unauthorized)
            #expect(
                try await client.json("/api/account/sessions/nonexistent", .delete, headers: a.bearerHeaders).status
                    == .notFound)

            // Sign out this one (c).
            let mine = try await client.json("/api/session", .delete, headers: c.bearerHeaders)
            #expect(mine.status == .ok)
            #expect(try await client.json("/api/account", headers: c.bearerHeaders).status == .unauthorized)

            // Everywhere.
            let d = try await signInWithPassword(client, "leo", "correct horse")
            let all = try await client.json("/api/account/sessions", .delete, headers: a.bearerHeaders)
            #expect(all.status == .ok)
            #expect(all.object["count"] as? Int == 2)
            #expect(all.headers[.setCookie]?.contains("Max-Age=0") == true)
            for s in [a, d] {
                #expect(try await client.json("/api/account", headers: s.bearerHeaders).status == .unauthorized)
            }
        }
    }

    @Test(arguments: TestDatabase.all)
    func sessionsExpire(_ db: TestDatabase) async throws {
        let server = TestServer(db) { $0.sessionLifetime = 3600 }
        try await server.seedUser("mia", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "mia", "correct horse")
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .ok)
            server.clock.advance(3601)
            #expect(try await client.json("/api/account", headers: session.bearerHeaders).status == .unauthorized)
        }
    }

    @Test(arguments: TestDatabase.all)
    func auditTrailOfTheAccount(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("nina", password: "correct horse")
        try await server.app().test(.router) { client in
            _ = try await client.json(
                "/api/sessions/password", .post, body: #"{"username":"nina","password":"bad horse"}"#)
            let session = try await signInWithPassword(client, "nina", "correct horse")
            let r = try await client.json("/api/account/audit", headers: session.bearerHeaders)
            let events = r.object["events"] as? [[String: Any]] ?? []
            #expect(
                events.map { "\($0["kind"] ?? "") \($0["outcome"] ?? "")" }.sorted() == [
                    "sign_in.password failure", "sign_in.password success",
                ])
            #expect(!r.text.contains("bad horse"))
        }
    }
}

@Suite struct AdminTests {
    @Test(arguments: TestDatabase.all)
    func listShowDisableDelete(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("Olivia", password: "correct horse")
        try await server.seedUser("peter")
        try await server.withStore { store in
            let admin = Admin(store: store)
            let lines = try await admin.listUsers()
            #expect(lines.count == 2)
            #expect(lines[0].contains("Olivia") && lines[0].contains("password=yes"))
            #expect(try await admin.showUser("OLIVIA").contains("username:     Olivia"))
            #expect(try await admin.setDisabled("olivia", true).contains("disabled"))
            #expect(try await store.user(usernameKey: "olivia")?.disabled == true)
            #expect(try await admin.deleteUser("peter") == "peter deleted")
            await #expect(throws: AdminError.self) { try await admin.showUser("peter") }
            let audit = try await admin.auditLines(user: nil, limit: 10, json: true)
            #expect(audit.count == 2)
            #expect(audit.contains { $0.contains("admin.deleted") })
        }
    }
}

/// HEAD on every GET route answers like GET without the body (RFC 9110 §9.3.2): same status and headers, the
/// GET body's Content-Length. Errors (401, 404, 405) keep their headers and lose their body too.
@Suite struct HeadRequestTests {
    static let getPaths = [
        "/", "/signin", "/signup", "/account", "/static/sesame.css", "/static/api.js", "/static/passkey.svg",
        "/static/nope.css",
        "/health", "/metrics", "/openapi.yaml",
        "/.well-known/apple-app-site-association", "/.well-known/assetlinks.json", "/.well-known/passkey-endpoints",
        "/.well-known/webauthn", "/.well-known/change-password",
        "/api/account", "/api/account/sessions", "/api/account/audit", "/api/account/passkeys", "/api/account/signals",
        "/api/account/totp/qr.png",
    ]

    @Test(arguments: [false, true])
    func headAnswersLikeGetWithoutTheBody(signedIn: Bool) async throws {
        let server = TestServer(.sqlite)
        try await server.seedUser("hana", password: "correct horse")
        try await server.app().test(.router) { client in
            let headers = signedIn ? try await signInWithPassword(client, "hana", "correct horse").bearerHeaders : [:]
            for path in Self.getPaths {
                let get = try await client.json(path, headers: headers)
                let head = try await client.json(path, .head, headers: headers)
                let again = try await client.json(path, headers: headers)
                #expect(head.status == get.status, "\(path)")
                #expect(head.status != .methodNotAllowed, "\(path)")
                #expect(head.body.readableBytes == 0, "\(path)")
                #expect(head.headers[.contentType] == get.headers[.contentType], "\(path)")
                #expect(head.headers[.cacheControl] == get.headers[.cacheControl], "\(path)")
                #expect(head.headers[.location] == get.headers[.location], "\(path)")
                // Content-Length is the GET body's (when the body is the same from one GET to the next).
                if get.body.readableBytes == again.body.readableBytes {
                    #expect(head.headers[.contentLength] == String(get.body.readableBytes), "\(path)")
                }
            }
        }
    }

    @Test func headOnOtherPathsIs405Or404WithoutABody() async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let notAllowed = try await client.json("/api/sessions/password", .head)
            #expect(notAllowed.status == .methodNotAllowed)
            #expect(notAllowed.headers[.allow] == "POST")
            #expect(notAllowed.body.readableBytes == 0)
            #expect(notAllowed.headers[.contentType]?.hasPrefix("application/json") == true)
            let unknown = try await client.json("/api/nope", .head)
            #expect(unknown.status == .notFound)
            #expect(unknown.body.readableBytes == 0)
            // Paths that answer GET list HEAD among their methods.
            let sessions = try await client.json("/api/account/sessions", .patch)
            #expect(sessions.headers[.allow] == "DELETE, GET, HEAD")
        }
    }
}
