import Foundation
import Hummingbird
import Logging
import Testing
import WebAuthn

@testable import SesameServer
import SesameConsole
@testable import SesameWeb
@testable import SesameCore
@testable import SesameSecondFactors
@testable import SesameIdentityProvider
@testable import SesamePasskeys

/// The server's vocabulary is declared by each part in its own target (`Vocabulary.core`, `Vocabulary.passkeys`, …)
/// and collected by the composition root into `Vocabulary.server`; every other copy of it (the OpenAPI document, the page scripts, docs/server.md, docs/configuration.md, `--help`) is held
/// to that one source here, so a code added or renamed in Swift fails these tests until each copy follows.
@Suite struct VocabularyTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let resources = root.appendingPathComponent("Sources/SesameWeb/Resources")

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    /// The API document as `/openapi.yaml` serves it: every target's part assembled (`APIDocument.server`).
    static var openAPI: String { get throws { APIDocument.server } }

    /// The `enum: [a, b]` list of a schema under `components/schemas`.
    static func openAPIEnum(schema: String) throws -> [String] {
        let lines = try openAPI.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: "    \(schema):") else { return [] }
        for line in lines[(start + 1)...] {
            if line.hasPrefix("    "), !line.hasPrefix("     ") { break }  // the next schema
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("enum: [") {
                return trimmed.dropFirst("enum: [".count).dropLast().components(separatedBy: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return []
    }

    // MARK: Error codes

    @Test func everyErrorCodeIsInTheOpenAPIDocumentAndNothingElse() throws {
        let documented = try Self.openAPIEnum(schema: "ErrorCode")
        #expect(documented == Vocabulary.server.errorCodes.map(\.rawValue))
        // Every error response in the document carries the typed schema.
        #expect(try Self.openAPI.contains("error:\n          $ref: '#/components/schemas/ErrorCode'"))
    }

    @Test func oauthErrorCodesAreTheOpenAPIEnum() throws {
        #expect(try Self.openAPIEnum(schema: "OAuthErrorCode") == Vocabulary.server.oauthErrorCodes.map(\.rawValue))
    }

    /// Each word is declared by one part: the collected vocabulary has no duplicate, and one that a second part
    /// declares again is reported with both owners (`Vocabulary.joined` stops the process on it).
    /// Challenge purposes and rate-limit buckets are stored (challenge rows, rate-limit rows shared by every node):
    /// each feature declares its own, none twice, and their stored names stay what earlier versions wrote.
    @Test func challengePurposesAndGuessableSecretsKeepTheirStoredNames() {
        let server = Vocabulary.server
        #expect(
            Set(server.challengePurposes.map(\.rawValue)) == [
                "registration", "authentication", "add_passkey", "reauthentication", "second_factor", "sms_sign_in",
                "sms_reauthentication", "sms_setup", "forward_auth_code", "email_recovery",
            ])
        #expect(server.challengePurposes.count == 10)
        #expect(
            Set(server.guessableSecrets.map(\.rawValue)) == [
                "password", "totp", "sms", "recovery", "sms_send", "device_code", "email_code", "email_send",
                "invitation", "email_recovery_code", "email_recovery_send", "admin_token", "recovery_link",
            ])
        #expect(server.guessableSecrets.count == 13)
        #expect(server.factors.allSatisfy { server.guessableSecrets.contains(GuessableSecret($0)) })
        let again = Vocabulary(
            owner: "SesameElsewhere", challengePurposes: [ChallengePurpose("add_passkey")],
            guessableSecrets: [GuessableSecret("password")])
        #expect(
            Vocabulary.duplicates(in: Vocabulary.parts + [again]) == [
                "challenge purpose add_passkey: SesamePasskeys, SesameElsewhere",
                "guessable secret password: SesamePasswords, SesameElsewhere",
            ])
    }

    @Test func aWordTwoPartsDeclareIsRefused() {
        #expect(Vocabulary.duplicates(in: Vocabulary.parts) == [])
        #expect(Vocabulary.parts.count == 17)
        let server = Vocabulary.server
        #expect(Set(server.errorCodes).count == server.errorCodes.count)
        #expect(Set(server.auditKinds).count == server.auditKinds.count)
        let again = Vocabulary(
            owner: "SesameElsewhere", errorCodes: [APIErrorCode(rawValue: "invalid_code")],
            auditKinds: [AuditKind(rawValue: "passkey.added")])
        #expect(
            Vocabulary.duplicates(in: Vocabulary.parts + [again]) == [
                "audit kind passkey.added: SesamePasskeys, SesameElsewhere",
                "error code invalid_code: SesameSecondFactors, SesameElsewhere",
            ])
        #expect(
            Vocabulary.duplicates(in: [.passkeys, .passkeys]).count == Vocabulary.passkeys.errorCodes.count
                + Vocabulary.passkeys.auditKinds.count + Vocabulary.passkeys.challengePurposes.count
                + Vocabulary.passkeys.accountNotices.count + 3 * Vocabulary.passkeys.settings.count)
    }

    /// The codes of the catalog's `error.<code>` keys (messages.pot), in order, duplicates kept.
    static func catalogErrorCodes() throws -> [String] {
        let prefix = "msgctxt \"error."
        return try text("Sources/SesameLanguage/Resources/Catalog/messages.pot").components(separatedBy: "\n")
            .compactMap { line in
                guard line.hasPrefix(prefix), line.hasSuffix("\"") else { return nil }
                return String(line.dropFirst(prefix.count).dropLast())
            }
    }

    /// The pages show the catalog's sentence `error.<code>` for an API error (api.js), in the page's language: every
    /// code the server answers with has one, and the catalog has none under `error.` for anything else.
    @Test func theCatalogHasOneSentenceForEveryCodeAndNoneForOthers() throws {
        let keys = try Self.catalogErrorCodes()
        #expect(
            keys.count == Set(keys).count,
            "duplicate keys: \(Dictionary(grouping: keys, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted())")
        let codes = Set(Vocabulary.server.errorCodes.map(\.rawValue))
        #expect(codes.subtracting(keys).sorted() == [], "codes without a sentence")
        #expect(Set(keys).subtracting(codes).sorted() == [], "sentences for codes the server never sends")
        // api.js reads them by code, from the messages its page carries.
        let script = try Self.text("Sources/SesameWeb/Resources/Web/static/api.js")
        #expect(script.contains("t(`error.${code}`)"))
        #expect(WebRoutes.Page.allCases.allSatisfy { $0.scriptPrefixes.contains("error.") })
    }

    @Test func pageScriptsOnlyTestForCodesTheServerSends() throws {
        let folder = Self.resources.appendingPathComponent("Web/static")
        let scripts = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".js") }
        #expect(scripts.count >= 4)
        let codes = Set(Vocabulary.server.errorCodes.map(\.rawValue))
        let pattern = #/code\s*===?\s*"([a-z_]+)"/#
        var seen = 0
        for name in scripts {
            let script = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            for match in script.matches(of: pattern) {
                seen += 1
                #expect(codes.contains(String(match.1)), "\(name) tests for \(match.1), which the server never sends")
            }
        }
        #expect(seen >= 3)
    }

    // MARK: Factors, session methods, audit kinds

    @Test func factorListsInTheOpenAPIDocumentAreTheFactorEnum() throws {
        let lists = try Self.openAPI.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("enum: [totp") || $0.hasPrefix("enum: [sms") || $0.hasPrefix("enum: [recovery") }
        #expect(lists.count >= 4)
        for list in lists {
            #expect(list == "enum: [" + Vocabulary.server.factors.map(\.rawValue).joined(separator: ", ") + "]")
        }
    }

    @Test func sessionMethodsAuditKindsAndOutcomesAreDocumented() throws {
        #expect(
            try Self.openAPIEnum(schema: "SessionMethod")
                == SessionMethod.all(factors: Vocabulary.server.factors).map(\.rawValue))
        #expect(try Self.openAPIEnum(schema: "AuditKind") == Vocabulary.server.auditKinds.map(\.rawValue))
        #expect(try Self.openAPIEnum(schema: "AuditOutcome") == AuditOutcome.allCases.map(\.rawValue))
        // docs/server.md's table of kinds, in the enum's order.
        let docs = try Self.text("docs/server.md")
        let documented = docs.components(separatedBy: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            let name = String(line[line.index(line.startIndex, offsetBy: 3)..<end])
            return Vocabulary.server.auditKinds.contains(AuditKind(rawValue: name)) || name.contains(".")
                || name == "sign_out" ? name : nil
        }
        #expect(documented == Vocabulary.server.auditKinds.map(\.rawValue))
    }

    @Test func sessionMethodNamesRoundTrip() {
        let factors = Vocabulary.server.factors
        for method in SessionMethod.all(factors: factors) {
            #expect(SessionMethod(rawValue: method.rawValue, factors: factors) == method)
        }
        #expect(SessionMethod(rawValue: "password+email", factors: factors) == nil)
        #expect(SessionMethod(rawValue: "passkey+totp", factors: factors) == nil)
        // A factor the server's features do not declare is no method: its sessions claim nothing.
        #expect(SessionMethod(rawValue: "password+totp", factors: []) == nil)
    }

    /// Password sign-in and re-authentication both ask `Factor.secondStepNeeded`: an authenticator app or a phone
    /// makes a second step; recovery codes alone do not (they stand in for one); no factor, no second step.
    @Test func whichFactorsMakeASecondStep() {
        #expect(Factor.secondStepNeeded([Factor.totp]))
        #expect(Factor.secondStepNeeded([Factor.sms]))
        #expect(Factor.secondStepNeeded([Factor.recovery, .sms]))
        #expect(!Factor.secondStepNeeded([Factor.recovery]))
        #expect(!Factor.secondStepNeeded([Factor]()))
        // Every factor but recovery codes is one an account enrolls as its second step.
        let factors = Vocabulary.server.factors
        #expect(factors.filter(\.makesASecondStep) == factors.filter { $0 != .recovery })
        #expect(factors == [.totp, .sms, .recovery])
    }

    // MARK: The phone rule

    @Test(arguments: [
        ("+14155550100", true), ("+447700900123", true), ("+6834002", true), ("+123456789012345", true),
        ("+1234567890123456", false), ("+683400", false), ("+04155550100", false), ("14155550100", false),
        ("+1 415 555 0100", false), ("+1415555010a", false), ("", false), ("+", false), ("+١٤١٥٥٥٥٠١٠٠", false),
    ])
    func thePhoneRuleIsThePageRule(_ phone: String, _ accepted: Bool) throws {
        #expect(FactorVerifier.isE164(phone) == accepted)
        let regex = try NSRegularExpression(pattern: FactorVerifier.phonePattern)
        let matches = regex.firstMatch(in: phone, range: NSRange(phone.startIndex..., in: phone)) != nil
        #expect(matches == accepted, "the pattern and the check disagree on \(phone)")
        let page = try Self.text("Sources/SesameSecondFactors/Resources/AccountPage/account-sms.js")
        #expect(
            page.contains("/\(FactorVerifier.phonePattern)/.test(phone)"),
            "account-sms.js checks phones with another pattern")
    }

    // MARK: Routes

    /// Every route the router has, as `METHOD /path` with `{captures}`.
    static func routerRoutes() async throws -> [String] { try await routesByPart().map(\.route) }

    /// Every route the router has, with the owner of the part of the API document `registerRoutes` names before it
    /// (nil before the first part: the pages').
    static func routesByPart() async throws -> [(part: String?, route: String)] {
        // With a metrics token, /metrics is served on the main listener too.
        let server = TestServer(.sqlite) { $0.metricsToken = String(repeating: "m", count: 24) }
        return try await server.withStore { store in
            let configuration = server.configuration
            let sesame = Sesame(
                configuration: configuration, store: store, clock: server.clock.serverClock,
                logger: Logger(label: "test"),
                serverSecret: Array(repeating: 7, count: 32), metrics: ServerMetrics(),
                providers: try ProviderNames.load(nil),
                rateLimits: RateLimitPolicy(), sms: server.sms,
                relyingParty: RelyingParty(configuration: try configuration.relyingPartyConfiguration()),
                ciphers: store.ciphers
            )
            let router = Router(context: SesameRequestContext.self)
            // The router lists its routes by path, not in the order they came: the routes new since the last part
            // was named are that part's.
            var part: String? = nil
            var parts: [String: String?] = [:]
            func take() {
                for route in router.routes.map({ "\($0.method.rawValue) \($0.path.description)" })
                where parts[route] == nil {
                    parts[route] = part
                }
            }
            registerRoutes(on: router, sesame) {
                take()
                part = $0.owner
            }
            take()
            return router.routes.map { "\($0.method.rawValue) \($0.path.description)" }.map { ($0, parts[$0] ?? nil) }
                .map { (part: $0.1, route: $0.0) }
        }
    }

    /// Every operation the OpenAPI document (or one part of it) describes, as `METHOD /path`.
    static func openAPIOperations(in document: String? = nil) throws -> [String] {
        var path: String?
        var operations: [String] = []
        for line in try (document ?? openAPI).components(separatedBy: "\n") {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if !line.hasPrefix(" "), !line.isEmpty {
                path = nil
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) {
                    operations.append("\(method) \(path)")
                }
            }
        }
        return operations
    }

    /// Routes for people rather than programs: pages and their static files. They are not API operations.
    static let pageRoutes: Set<String> = Set(
        [
            "GET /", "GET /signin", "GET /signup", "GET /account", "GET /account/email/verify", "GET /recover/link",
            "GET /static/{name}",
            "GET /console", "GET /console/static/{name}",
        ] + ConsoleRoutes.pages.map { "GET /console/\($0.slug)" }
            + ConsoleRoutes.pages.filter(\.items).map { "GET /console/\($0.slug)/{item}" })

    @Test func theOpenAPIDocumentDescribesEveryRouteAndNoOthers() async throws {
        let routes = try await Self.routerRoutes()
        #expect(routes.count == Set(routes).count, "a route is registered twice")
        let operations = try Self.openAPIOperations()
        #expect(operations.count == Set(operations).count)
        #expect(Self.pageRoutes.subtracting(routes).sorted() == [], "a listed page route no longer exists")
        #expect(
            Set(routes).subtracting(Self.pageRoutes).subtracting(operations).sorted() == [],
            "routes the OpenAPI document does not describe")
        #expect(Set(operations).subtracting(routes).sorted() == [], "operations the router does not have")
    }

    /// The walls of the API document: each feature's part describes exactly the routes that feature registers
    /// (`registerRoutes` names the part before each feature's routes), so a path described in another feature's
    /// fragment fails here, and so does a route its own feature's fragment leaves out. The core's base describes no
    /// route, and every part named in `registerRoutes` is served.
    @Test func eachPartDescribesTheRoutesItsFeatureRegisters() async throws {
        let routes = try await Self.routesByPart()
        let served = [APIFragment.core] + APIFragment.parts
        #expect(Set(routes.compactMap(\.part)).subtracting(served.map(\.owner)).sorted() == [])
        #expect(routes.filter { $0.part == nil && !Self.pageRoutes.contains($0.route) }.map(\.route) == [])
        for fragment in served {
            let registered = Set(routes.filter { $0.part == fragment.owner }.map(\.route)).subtracting(Self.pageRoutes)
            let text: String = try #require(fragment.text)
            let described = Set(try Self.openAPIOperations(in: text))
            #expect(
                described.subtracting(registered).sorted() == [],
                "\(fragment.owner)'s openapi.yaml describes routes another feature registers")
            #expect(
                registered.subtracting(described).sorted() == [],
                "\(fragment.owner) registers routes its openapi.yaml does not describe")
        }
    }

    /// An account card's script calls its own feature's routes only (the ones its target's part of the API document
    /// describes), and keeps them in its script: api.js keeps only what its own pages or more than one card use. So a
    /// card changes with its feature and no other target.
    @Test func eachAccountCardCallsItsOwnFeaturesRoutes() throws {
        let parts = Dictionary(uniqueKeysWithValues: APIFragment.parts.map { ($0.owner, $0) })
        func template(_ operation: String) -> String {
            operation.replacingOccurrences(of: #"\{[^}]*\}"#, with: "{}", options: .regularExpression)
        }
        let calls = try NSRegularExpression(pattern: #"\bcall\(\s*"([A-Z]+)",\s*["`]([^"`]+)["`]"#)
        var checked = 0
        for section in AccountSection.server {
            let folder = try #require(section.folder, "\(section.name) has no folder")
            let fragment = try #require(parts[section.owner], "\(section.owner) has no part of the API document")
            let described = Set(try Self.openAPIOperations(in: try #require(fragment.text)).map(template))
            for script in section.scripts {
                let text = try String(contentsOf: folder.appendingPathComponent(script), encoding: .utf8)
                let range = NSRange(text.startIndex..., in: text)
                for match in calls.matches(in: text, range: range) {
                    let method = String(text[Range(match.range(at: 1), in: text)!])
                    let path = String(text[Range(match.range(at: 2), in: text)!])
                    let operation =
                        "\(method) "
                        + path.replacingOccurrences(
                            of: #"\$\{[^}]*\}"#, with: "{}", options: .regularExpression)
                    #expect(
                        described.contains(operation),
                        "\(script) (\(section.owner)) calls \(operation), which \(section.owner)'s part does not describe"
                    )
                    checked += 1
                }
            }
        }
        #expect(checked >= 20)
        // What api.js keeps, its pages or several cards use; none of it is one card's alone.
        let shared = try Self.text("Sources/SesameWeb/Resources/Web/static/api.js")
        for moved in ["/api/account/totp", "/api/account/sms", "/api/account/sessions", "/api/account/apps"] {
            #expect(!shared.contains("\"\(moved)"), "api.js calls \(moved), one card's route")
        }
    }

    /// Every operation has an operationId, unique, and every link (schemathesis's stateful phase follows them) names
    /// one of them.
    @Test func everyOperationHasAnOperationIdAndLinksNameThem() throws {
        let lines = try Self.openAPI.components(separatedBy: "\n")
        var ids: [String] = []
        var linked: [String] = []
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("operationId: ") else { continue }
            let id = String(trimmed.dropFirst("operationId: ".count))
            if line.hasPrefix("      operationId") && !line.hasPrefix("       ") {
                ids.append(id)
                let method = lines[index - 1].trimmingCharacters(in: .whitespaces)
                #expect(["get:", "post:", "put:", "patch:", "delete:"].contains(method), "\(id) under \(method)")
            } else {
                linked.append(id)
            }
        }
        #expect(ids.count == (try Self.openAPIOperations().count))
        #expect(ids.count == Set(ids).count, "an operationId is used twice")
        #expect(!linked.isEmpty)
        #expect(Set(linked).subtracting(ids).sorted() == [], "links naming no operation")
    }

    // MARK: Settings

    @Test func everySettingHasAFlagAnEnvironmentVariableAKeyAndHelp() throws {
        let help = ServerConfiguration.helpText
        let settings = ServerConfiguration.settings
        #expect(Set(settings.map(\.key)).count == settings.count)
        #expect(Set(settings.map(\.flag)).count == settings.count)
        #expect(Set(settings.map(\.environment)).count == settings.count)
        for setting in settings {
            #expect(try ServerConfiguration.flags(from: [setting.flag, "x"]) == [setting.key: "x"])
            #expect(try ServerConfiguration.flags(from: ["\(setting.flag)=x"]) == [setting.key: "x"])
            #expect(
                help.contains(
                    "  \(setting.flag) <value>\n      \(setting.help) [\(setting.environment), default \(setting.defaultValue)]"
                ))
            // The config file knows the key: a refusal names the value, never an unknown setting.
            var configuration = ServerConfiguration()
            do {
                try configuration.apply(json: Data(#"{"\#(setting.key)": "?"}"#.utf8))
            } catch {
                #expect(!error.description.contains("unknown setting"), "\(setting.key): \(error.description)")
            }
        }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.flags(from: ["--no-such-setting", "1"]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.flags(from: ["--port"]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.flags(from: ["stray"]) }
    }

    /// The ID token's fixed fields are the claims every token carries (`ScopeClaims.always`), and the scope claims
    /// come from the one table that discovery lists (`claims_supported`, `scopes_supported`) and UserInfo reads; a
    /// claim added to the token and not to the table (or the other way round) fails here.
    @Test func theIDTokensFieldsAreTheClaimsDiscoveryLists() throws {
        let claims = IDTokenClaims(
            iss: "i", sub: "s", aud: "a", exp: 1, iat: 1, auth_time: 1, nonce: "n", amr: [], acr: "a", azp: "a",
            scopeClaims: ["name": .string("n"), "sub": .string("forged")])
        #expect(Mirror(reflecting: claims).children.compactMap(\.label) == ScopeClaims.always + ["scopeClaims"])
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(claims)) as? [String: Any]
        #expect(Set(encoded?.keys.map { $0 } ?? []) == Set(ScopeClaims.always + ["name"]))
        #expect(encoded?["sub"] as? String == "s", "a scope claim never replaces a fixed one")
        #expect(
            ScopeClaims.supported
                == ScopeClaims.always + [
                    "preferred_username", "name", "updated_at", "locale", "email", "email_verified", "groups",
                ])
        #expect(ScopeClaims.scopes == ["openid", "profile", "email", "groups", "offline_access"])
        #expect(AuthorizationRequest.supportedScopes == ScopeClaims.scopes)
        #expect(ScopeClaims.reserved.isSuperset(of: ScopeClaims.supported))
        let user = User(
            id: "u1", username: "ada", displayName: "Ada", userHandle: [1], disabled: false,
            createdAt: Date(timeIntervalSince1970: 0))
        let source = ScopeClaims.Source(
            user: user, verifiedEmail: "Ada@example.org", updatedAt: Date(timeIntervalSince1970: 1_700_000_000),
            groups: ["admins", "family"], groupClaims: ["roles": .array([.string("editor")]), "email": .string("x")])
        #expect(
            ScopeClaims.claims(scope: "openid profile", source: source) == [
                "preferred_username": .string("ada"), "name": .string("Ada"), "updated_at": .int(1_700_000_000),
            ])
        #expect(
            ScopeClaims.claims(scope: "openid email", source: source) == [
                "email": .string("Ada@example.org"), "email_verified": .bool(true),
            ])
        // The groups scope: the slugs, and the groups' custom claims, never one that names a table claim.
        #expect(
            ScopeClaims.claims(scope: "openid groups", source: source) == [
                "groups": .array([.string("admins"), .string("family")]), "roles": .array([.string("editor")]),
            ])
        // Without a verified address the scope gives nothing: never an unverified address, never `false`.
        #expect(ScopeClaims.claims(scope: "openid email", source: ScopeClaims.Source(user: user)).isEmpty)
        #expect(ScopeClaims.claims(scope: "openid", source: source).isEmpty)
        #expect(
            ScopeClaims.claims(scope: "openid profile", source: ScopeClaims.Source(user: user))["updated_at"] == .int(0)
        )
        // `locale` says the saved language, and is absent when none is saved.
        #expect(
            ScopeClaims.claims(scope: "openid profile", source: ScopeClaims.Source(user: user, locale: "ko"))["locale"]
                == .string("ko"))
        #expect(ScopeClaims.claims(scope: "openid profile", source: source)["locale"] == nil)
        #expect(ScopeClaims.claims(scope: "openid email", source: ScopeClaims.Source(user: user, locale: "ko")).isEmpty)
        #expect(ScopeClaims.supported.filter { $0 == "locale" }.count == 1)
    }

    /// The default `--help` and docs/configuration.md print is the default the server runs with: applying each
    /// setting's printed default to a fresh configuration changes nothing. The rows whose default is a phrase in
    /// parentheses ("(none)", "(bundled)", "(accept any)") describe an absent value and must leave it absent.
    @Test func everyPrintedDefaultIsTheDefaultTheServerRunsWith() throws {
        let fresh = ServerConfiguration()
        var checked = 0
        for setting in ServerConfiguration.settings where !setting.defaultValue.hasPrefix("(") {
            var configuration = ServerConfiguration()
            try setting.apply(&configuration, setting.defaultValue)
            #expect(configuration == fresh, "\(setting.key): the printed default \(setting.defaultValue) differs")
            checked += 1
        }
        #expect(checked >= 20)
        for setting in ServerConfiguration.settings where setting.defaultValue.hasPrefix("(") {
            var configuration = ServerConfiguration()
            try setting.apply(&configuration, "")
            #expect(configuration == fresh, "\(setting.key): an empty value is not the absent default")
        }
    }

    @Test func anEnvironmentVariableSetsItsSetting() throws {
        let port = try #require(ServerConfiguration.settings.first { $0.key == "port" })
        let configuration = try ServerConfiguration.resolve(
            flags: [:], environment: [port.environment: "9443"], configFile: nil)
        #expect(configuration.port == 9443)
    }
}
