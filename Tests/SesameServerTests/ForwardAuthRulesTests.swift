import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import SesameServer
@testable import SesameCore
@testable import SesameForwardAuth

/// Forward auth's access rules (`ForwardAuthRules`) over HTTP, as a proxy and an attacker call the check: first
/// match wins with overlapping prefixes, group rules read membership at every check (a removal counts at the next
/// one), the passkey and nobody policies, unnamed addresses refused, paths that could be read two ways refused, and
/// identity headers a client forged never reaching the app; then the start-up checks of the rule list.
@Suite struct ForwardAuthRulesTests {
    static let rules: [ForwardAuthRule] = [
        ForwardAuthRule(host: "router.example.com", policy: .groups, groups: ["admins"]),
        ForwardAuthRule(host: "photos.example.com", path: "/admin/public", policy: .signedIn),
        ForwardAuthRule(host: "photos.example.com", path: "/admin", policy: .groups, groups: ["family", "admins"]),
        ForwardAuthRule(host: "photos.example.com", policy: .signedIn),
        ForwardAuthRule(host: "vault.example.com", policy: .passkey),
        ForwardAuthRule(host: "*.apps.example.com", path: "/internal", policy: .nobody),
        ForwardAuthRule(host: "*.apps.example.com", policy: .signedIn),
    ]

    static func server(_ db: TestDatabase, groups: MemoryAccountGroups) -> TestServer {
        var server = TestServer(db, origin: ForwardAuthTests.origin) {
            $0.rpID = "example.com"
            $0.cookieDomain = "example.com"
            $0.forwardAuthDomains = ["example.com"]
            $0.forwardAuthRules = rules
        }
        server.accountGroups = groups
        return server
    }

    static func check(
        _ client: some TestClientProtocol, _ host: String, _ uri: String = "/", cookie: String? = nil,
        extra: HTTPFields = [:], mode: String? = nil
    ) async throws -> TestResponse {
        var headers = ForwardAuthTests.forwarded(host, uri, cookie: cookie)
        headers.append(contentsOf: extra)
        return try await client.execute(
            uri: "/forward-auth" + (mode.map { "?mode=\($0)" } ?? ""), method: .get, headers: headers, body: nil)
    }

    static func expectDenied(_ response: TestResponse, _ host: String, _ comment: Comment? = nil) {
        #expect(response.status == .forbidden, comment)
        #expect(response.headers[.location] == nil, comment)
        #expect(response.headers[ForwardAuthService.remoteUser] == nil, comment)
        #expect(response.headers[.contentType]?.hasPrefix("text/html") == true, comment)
        #expect(response.text.contains("You don’t have access to \(host)"), comment)
    }

    @Test(arguments: TestDatabase.all)
    func firstMatchWinsAndGroupsAreReadAtEveryCheck(_ db: TestDatabase) async throws {
        let groups = MemoryAccountGroups(groups: ["admins", "family"])
        let server = Self.server(db, groups: groups)
        try await server.app().test(.router) { client in
            // Signed out: sign in first where signing in could help; refused at once where it never could.
            let signIn = try await Self.check(client, "router.example.com")
            #expect(signIn.status == .found)
            #expect(signIn.headers[.location]?.hasPrefix("https://auth.example.com/forward-auth/return?rd=") == true)
            Self.expectDenied(try await Self.check(client, "nowhere.example.com"), "nowhere.example.com")
            Self.expectDenied(try await Self.check(client, "a.apps.example.com", "/internal/x"), "a.apps.example.com")
            // nginx's status mode: the refusal is a 403 too (a 401 would start a sign-in).
            #expect(try await Self.check(client, "nowhere.example.com", mode: "status").status == .forbidden)

            let zoe = try await ForwardAuthTests.passkeySignUp(client, "zoe")
            let userID = try await server.withStore { try await $0.user(usernameKey: "zoe")?.id }
            let id = try #require(userID)

            // Outside the group: 403 with a page, never the identity headers.
            let denied = try await Self.check(client, "router.example.com", "/", cookie: zoe.cookie)
            Self.expectDenied(denied, "router.example.com")
            #expect(denied.text.contains("signed in as zoe"))
            #expect(denied.text.contains("href=\"https://auth.example.com/static/sesame.css\""))
            #expect(!denied.text.contains("<script"))

            // Joined: passes with the groups; removed mid-session: refused at the very next check.
            groups.add(id, to: "admins")
            let passed = try await Self.check(client, "router.example.com", "/", cookie: zoe.cookie)
            #expect(passed.status == .ok)
            #expect(passed.headers[ForwardAuthService.remoteUser] == "zoe")
            #expect(passed.headers[ForwardAuthService.remoteGroups] == "admins")
            groups.remove(id, from: "admins")
            Self.expectDenied(
                try await Self.check(client, "router.example.com", cookie: zoe.cookie), "router.example.com")

            // Overlapping prefixes: the narrower rule comes first and wins; a longer name is not within the prefix.
            for (path, status) in [
                ("/admin/public", HTTPResponse.Status.ok), ("/admin/public/x?y=1", .ok), ("/admin", .forbidden),
                ("/admin/", .forbidden), ("/admin/x", .forbidden), ("/administrator", .ok), ("/", .ok),
                ("/admin;jsessionid=1/x", .forbidden), ("/adm%69n/x", .forbidden), ("/admin/public/../x", .forbidden),
                ("/admin/public/%2e%2e/x", .forbidden), ("/admin/public/%2E%2E/x", .forbidden),
                ("/admin%2Fx", .forbidden), ("/admin%2fx", .forbidden), ("/x/..%2Fadmin", .forbidden),
                ("/admin%5Cx", .forbidden), ("//admin/x", .forbidden), ("/./admin", .forbidden),
                ("/admin%00", .forbidden), ("/admin%zz", .forbidden), ("/admin%", .forbidden),
                ("/admin/public%3B/x", .forbidden), ("/photos%252Fadmin", .forbidden),
            ] {
                let response = try await Self.check(client, "photos.example.com", path, cookie: zoe.cookie)
                #expect(response.status == status, "\(path)")
            }
            groups.add(id, to: "family")
            #expect(try await Self.check(client, "photos.example.com", "/admin/x", cookie: zoe.cookie).status == .ok)
            // Still refused when the path cannot be read one way only, whatever the groups.
            #expect(
                try await Self.check(client, "photos.example.com", "/admin/%2e%2e/x", cookie: zoe.cookie).status
                    == .forbidden)

            // Wildcards cover names below the name, not the name; nobody means nobody.
            #expect(try await Self.check(client, "a.b.apps.example.com", cookie: zoe.cookie).status == .ok)
            Self.expectDenied(try await Self.check(client, "apps.example.com", cookie: zoe.cookie), "apps.example.com")
            Self.expectDenied(
                try await Self.check(client, "a.apps.example.com", "/internal", cookie: zoe.cookie),
                "a.apps.example.com")

            // A passkey sign-in passes the passkey rule.
            #expect(try await Self.check(client, "vault.example.com", cookie: zoe.cookie).status == .ok)
        }
    }

    @Test(arguments: TestDatabase.all)
    func forgedIdentityHeadersNeverPassAndEveryHeaderIsAlwaysSent(_ db: TestDatabase) async throws {
        let groups = MemoryAccountGroups(groups: ["admins"])
        let server = Self.server(db, groups: groups)
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let forged: HTTPFields = [
                ForwardAuthService.remoteGroups: "admins", ForwardAuthService.remoteUser: "root",
                ForwardAuthService.remoteEmail: "root@example.com",
            ]
            // Signed out with forged headers: still sent to sign in.
            #expect(try await Self.check(client, "router.example.com", extra: forged).status == .found)
            let ada = try await signInWithPassword(
                client, "ada", "correct horse battery", cookieName: "__Secure-sesame_session")
            // A forged Remote-Groups does not make ada an admin.
            Self.expectDenied(
                try await Self.check(client, "router.example.com", cookie: ada.cookie, extra: forged),
                "router.example.com")
            // Where ada passes, every identity header is in the answer, empty ones too, so the proxy's copy replaces
            // whatever the client sent.
            let passed = try await Self.check(client, "photos.example.com", cookie: ada.cookie, extra: forged)
            #expect(passed.status == .ok)
            #expect(passed.headers[ForwardAuthService.remoteUser] == "ada")
            #expect(passed.headers[ForwardAuthService.remoteName] == "Ada")
            #expect(passed.headers[values: ForwardAuthService.remoteGroups] == [""])
            #expect(passed.headers[values: ForwardAuthService.remoteEmail] == [""])
            // A password session does not pass the passkey rule: it is sent to sign in with a passkey.
            let vault = try await Self.check(client, "vault.example.com", cookie: ada.cookie)
            #expect(vault.status == .found)
            let rd = "https://vault.example.com/"
            let page = try await ForwardAuthTests.get(
                client, "/forward-auth/return?rd=" + ForwardAuthTests.encoded(rd), [.cookie: ada.cookie])
            #expect(page.headers[.location]?.hasSuffix("&passkey=required") == true)
        }
    }

    @Test(arguments: TestDatabase.all)
    func withoutRulesEverySignedInPersonPasses(_ db: TestDatabase) async throws {
        var server = ForwardAuthTests.server(db)
        server.accountGroups = MemoryAccountGroups(groups: ["admins"])
        try await server.seedUser("ada", password: "correct horse battery")
        try await server.app().test(.router) { client in
            let ada = try await signInWithPassword(
                client, "ada", "correct horse battery", cookieName: "__Secure-sesame_session")
            for path in ["/", "/admin/../x", "/a%2Fb"] {
                #expect(try await Self.check(client, "any.example.com", path, cookie: ada.cookie).status == .ok)
            }
        }
    }

    @Test(arguments: [
        ("/", [String]()), ("/a", ["a"]), ("/a/", ["a"]), ("/a/b?c=/..", ["a", "b"]), ("/%61/b", ["a", "b"]),
        ("/a;x=1/b", ["a", "b"]), ("/caf%C3%A9", ["café"]), ("/a/b/", ["a", "b"]), ("/?x", []),
    ])
    func pathsAreNormalised(_ path: String, _ segments: [String]) {
        #expect(ForwardAuthPath.segments(path) == segments)
    }

    @Test(arguments: [
        "", "a", "//", "/a//b", "/..", "/a/..", "/a/./b", "/%2e", "/%2E%2e/a", "/a%2fb", "/a%2Fb", "/a%5cb", "/a\\b",
        "/a%00", "/a%1f", "/a%7f", "/a%", "/a%4", "/a%g0", "/a%25", "/a%3b", "/a%3F", "/a%23", "/;x", "/a b",
        "/caf%C3",
    ])
    func ambiguousPathsAreRefused(_ path: String) {
        #expect(ForwardAuthPath.segments(path) == nil, "\(path)")
    }

    static func resolve(rules: String, domains: String = "example.com") throws -> ServerConfiguration {
        try ServerConfiguration.resolve(
            flags: [
                "origin": "https://auth.example.com", "rpID": "example.com", "smsSender": "https://sms.example",
                "forwardAuthDomains": domains,
                "forwardAuthRules": rules,
            ], environment: [:], configFile: nil)
    }

    @Test(arguments: [
        (#"[{"host": "a.example.com", "policy": "anyone"}]"#, "forward-auth-rules[0].policy"),
        (#"[{"host": "A.example.com", "policy": "nobody"}]"#, "forward-auth-rules[0].host"),
        (#"[{"host": "a.example.com:443", "policy": "nobody"}]"#, "forward-auth-rules[0].host"),
        (#"[{"host": "*.*.example.com", "policy": "nobody"}]"#, "forward-auth-rules[0].host"),
        (#"[{"host": "evil.test", "policy": "nobody"}]"#, "not within forward-auth-domains"),
        (#"[{"host": "a.example.com", "policy": "groups"}]"#, "forward-auth-rules[0].groups"),
        (#"[{"host": "a.example.com", "policy": "groups", "groups": []}]"#, "forward-auth-rules[0].groups"),
        (#"[{"host": "a.example.com", "policy": "groups", "groups": ["Admins"]}]"#, "not a group slug"),
        // A look-alike (Cyrillic а) could never match the group it imitates: refused rather than kept dead.
        (#"[{"host": "a.example.com", "policy": "groups", "groups": ["\#u{0430}dmins"]}]"#, "not a group slug"),
        (#"[{"host": "a.example.com", "policy": "signed-in", "groups": ["admins"]}]"#, "only the groups policy"),
        (#"[{"host": "a.example.com", "path": "admin", "policy": "nobody"}]"#, "forward-auth-rules[0].path"),
        (#"[{"host": "a.example.com", "path": "/a/../b", "policy": "nobody"}]"#, "forward-auth-rules[0].path"),
        (#"[{"host": "a.example.com", "path": "/a%2Fb", "policy": "nobody"}]"#, "forward-auth-rules[0].path"),
        (#"[{"host": "a.example.com", "paths": "/admin", "policy": "nobody"}]"#, "unknown key \"paths\""),
        (#"{"host": "a.example.com"}"#, "expected a JSON list"),
        (
            #"[{"host": "a.example.com", "path": "/admin", "policy": "signed-in"}, {"host": "a.example.com", "path": "/admin/x", "policy": "nobody"}]"#,
            "forward-auth-rules[1] (a.example.com/admin/x) is shadowed by forward-auth-rules[0]"
        ),
        (
            #"[{"host": "*.example.com", "policy": "signed-in"}, {"host": "a.example.com", "path": "/x", "policy": "nobody"}]"#,
            "is shadowed by forward-auth-rules[0]"
        ),
        (
            #"[{"host": "*.example.com", "policy": "signed-in"}, {"host": "*.a.example.com", "policy": "nobody"}]"#,
            "is shadowed by forward-auth-rules[0]"
        ),
    ])
    func badRulesStopTheStart(_ rules: String, _ message: String) {
        do {
            _ = try Self.resolve(rules: rules)
            Issue.record("accepted \(rules)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test func rulesComeFromTheConfigurationFileAsJSON() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(
            #"""
            {"origin": "https://auth.example.com", "rpID": "example.com", "smsSender": "https://sms.example",
             "forwardAuthDomains": ["example.com"],
             "forwardAuthRules": [
               {"host": "a.example.com", "path": "/admin", "policy": "groups", "groups": ["admins"]},
               {"host": "a.example.com", "policy": "passkey"},
               {"host": "*.example.com", "policy": "signed-in"}]}
            """#.utf8
        ).write(to: file)
        let configuration = try ServerConfiguration.resolve(flags: [:], environment: [:], configFile: file.path)
        #expect(configuration.forwardAuthRules.count == 3)
        let rules = try ForwardAuthRules(configuration.forwardAuthRules, domains: configuration.forwardAuthDomains)
        guard case .rule(let admin) = rules.match(host: "a.example.com", path: "/admin/x") else {
            Issue.record("no rule")
            return
        }
        #expect(admin.policy == .groups && admin.groups == ["admins"])
        guard case .rule(let other) = rules.match(host: "b.example.com", path: "/admin/x") else {
            Issue.record("no rule")
            return
        }
        #expect(other.policy == .signedIn)
        #expect(rules.match(host: "example.com", path: "/") == .refused)
        // Narrower rules after broader ones on other hosts are fine; an empty value is no rules.
        #expect(try Self.resolve(rules: "").forwardAuthRules.isEmpty)
        #expect(
            try Self.resolve(
                rules:
                    #"[{"host": "a.example.com", "path": "/x", "policy": "nobody"}, {"host": "a.example.com", "policy": "passkey"}]"#
            )
            .forwardAuthRules.count == 2
        )
    }
}
