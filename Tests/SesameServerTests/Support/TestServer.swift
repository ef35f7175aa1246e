import Foundation
import HTTPTypes
import VirtualAuthenticator
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing

@testable import SesameServer
@testable import SesameCore
@testable import SesameSecondFactors
@testable import SesameIdentityProvider
@testable import SesameMetadata
@testable import SesamePasswords

/// The engines every server test runs on: SQLite always, PostgreSQL when `SESAME_TEST_POSTGRES_URL` is set.
/// `scripts/test` starts a throwaway PostgreSQL 15 cluster and sets it; `swift test` alone has no PostgreSQL,
/// so the PostgreSQL cases are left out there (and `postgresAvailable` below reports the skip with its reason).
///
/// A database is fresh, or (`release` set) one an earlier release wrote (`UpgradeFixture`), migrated to this
/// version's schema when the test opens it: the store suite runs on both kinds.
struct TestDatabase: Hashable, CustomTestStringConvertible, Sendable {
    enum Engine: String, Sendable { case sqlite, postgres }
    let engine: Engine
    var release: String? = nil

    static let sqlite = TestDatabase(engine: .sqlite)
    static let postgres = TestDatabase(engine: .postgres)

    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["SESAME_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static var all: [TestDatabase] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    /// Every engine's database as each earlier release left it.
    static var upgrades: [TestDatabase] {
        UpgradeFixture.releases.flatMap { release in all.map { TestDatabase(engine: $0.engine, release: release) } }
    }

    /// What the store's conformance suite runs on: fresh databases and upgraded ones.
    static var conformance: [TestDatabase] { all + upgrades }

    var testDescription: String { release.map { "\(engine.rawValue) from \($0)" } ?? engine.rawValue }
}

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let value: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { value = Mutex(start) }
    var now: Date { value.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { value.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var serverClock: ServerClock { ServerClock { [self] in self.now } }
}

/// Captures SMS messages instead of sending them.
final class CapturedSMS: SMSSender, Sendable {
    private let messages = Mutex<[(String, String)]>([])
    func send(to phone: String, message: String) async throws { messages.withLock { $0.append((phone, message)) } }
    var all: [(phone: String, message: String)] { messages.withLock { $0.map { (phone: $0.0, message: $0.1) } } }
}

/// Captures back-channel logout tokens instead of sending them.
final class CapturedLogouts: LogoutDelivery, Sendable {
    private let tokens = Mutex<[(token: String, uri: String)]>([])
    func deliver(logoutToken: String, to uri: String) async throws {
        tokens.withLock { $0.append((logoutToken, uri)) }
    }
    var all: [(token: String, uri: String)] { tokens.withLock { $0 } }

    /// Waits (up to 5 s) until at least `count` tokens arrived: they are sent after the request has answered.
    func awaiting(_ count: Int) async throws -> [(token: String, uri: String)] {
        for _ in 0..<100 where all.count < count { try await Task.sleep(for: .milliseconds(50)) }
        return all
    }
}

/// One isolated database (a fresh SQLite file, or a fresh PostgreSQL schema) and the settings to serve it.
struct TestServer: Sendable {
    let database: TestDatabase
    var configuration: ServerConfiguration
    let clock = TestClock()
    let sms = CapturedSMS()
    let logouts = CapturedLogouts()
    let schema: String?
    var rateLimits = RateLimitPolicy()
    /// Sees every statement the server's store runs (`QueryPlanTests`).
    var statementObserver: StatementObserver?
    /// What the background services (the purge, the outbox's sender) count their turns on; a `ManualClock` keeps
    /// them idle, so a test reads the outbox's mails itself.
    var serviceClock: (any Clock<Duration>)?
    /// The groups accounts belong to (`MemoryAccountGroups` in tests of rules that read them).
    var accountGroups: (any AccountGroups)?
    /// The roots an uploaded metadata BLOB is verified against (the example BLOB's root in the console's tests).
    var metadataTrust = MetadataTrust.bundled
    /// The server's logger, when a test reads what is logged (`CapturedLog`); otherwise only critical lines.
    var logger: Logger?

    init(
        _ database: TestDatabase, origin: String = "http://localhost:8080",
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) {
        self.database = database
        var configuration = ServerConfiguration()
        configuration.origin = origin
        configuration.rpID = "localhost"
        configuration.port = 0
        configuration.passwordScryptLogN = 10
        configuration.trustForwardedFor = true
        // HummingbirdTesting's live client keeps one connection and never opens another, so the server closing it
        // after the default 30 idle seconds fails the test's next request ("I/O on closed channel") whenever a
        // loaded machine takes that long between two requests (a vault's scrypt, a parallel suite). Tests of the
        // timeout itself set their own (`SlowClientTests`).
        configuration.idleTimeout = 600
        // Messages go to `CapturedSMS`, never to standard output; https test servers may keep the console default.
        configuration.allowConsoleSMS = true
        let name = "t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        switch (database.engine, database.release) {
        case (.sqlite, let release):
            configuration.database =
                FileManager.default.temporaryDirectory.appendingPathComponent("sesame-\(name).sqlite").path
            if let release { UpgradeFixture.load(release, intoSQLite: configuration.database) }
            schema = nil
        case (.postgres, nil):
            configuration.database = TestDatabase.postgresURL ?? ""
            schema = String(name)
        case (.postgres, let release?):
            // pg_dump writes the public schema, so an upgraded database is a database of its own.
            configuration.database = UpgradeFixture.load(release, intoNewPostgresDatabase: String(name))
            schema = nil
        }
        // The production deadline (2 s) is a limit for a loaded server's database, not a test of one: in the whole
        // suite, a thousand tests share two cores and PostgreSQL, and a statement once waited longer (QueryPlanTests
        // in CI). Tests of the deadline set their own.
        configuration.databaseTimeout = 30
        configure(&configuration)
        self.configuration = configuration
    }

    var environment: ServerEnvironment {
        var environment = ServerEnvironment()
        environment.clock = clock.serverClock
        var logger = Logger(label: "sesame.test")
        logger.logLevel = .critical
        environment.logger = self.logger ?? logger
        environment.smsSender = sms
        environment.logoutDelivery = logouts
        environment.postgresSchema = schema
        environment.rateLimits = rateLimits
        environment.statementObserver = statementObserver
        environment.accountGroups = accountGroups
        environment.metadataTrust = metadataTrust
        if let serviceClock { environment.serviceClock = serviceClock }
        return environment
    }

    func app() async throws -> some ApplicationProtocol {
        try await buildApplication(configuration: configuration, environment: environment)
    }

    /// A second handle on the same database, for seeding and checking rows directly.
    func withStore<T: Sendable>(_ body: (SQLStore) async throws -> T) async throws -> T {
        var logger = Logger(label: "sesame.test.store")
        logger.logLevel = .critical
        let (engine, store) = try await openStore(configuration, environment: environment, logger: logger)
        do {
            let result = try await body(store)
            try await engine.shutdown()
            return result
        } catch {
            try? await engine.shutdown()
            throw error
        }
    }

    /// Creates an account with a password directly in the store.
    @discardableResult
    func seedUser(_ username: String, password: String? = nil) async throws -> User {
        let user = User(
            id: UUID().uuidString.lowercased(), username: username, displayName: username.capitalized,
            userHandle: Secrets.random(64), disabled: false, createdAt: clock.now
        )
        let hasher = PasswordHasher(logN: configuration.passwordScryptLogN)
        try await withStore { store in
            try await store.createUser(user)
            if let password { try await store.setPassword(userID: user.id, try hasher.hash(password), at: clock.now) }
        }
        return user
    }
}

// MARK: HTTP helpers

extension TestClientProtocol {
    @discardableResult
    func json(
        _ uri: String, _ method: HTTPRequest.Method = .get, body: String? = nil, headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers
        if body != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        if headers[.init("X-Forwarded-For")!] == nil { headers[.init("X-Forwarded-For")!] = "192.0.2.1" }
        // Tests act as a native app unless they say otherwise (pages get no session token in the body).
        if headers[.init("Sesame-Client")!] == nil { headers[.init("Sesame-Client")!] = "native" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    var text: String { body.getString(at: body.readerIndex, length: body.readableBytes) ?? "" }

    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { object["error"] as? String }

    /// The session cookie's `name=value`, if the response set one.
    func cookie(named name: String) -> String? {
        for field in headers[values: .setCookie] where field.hasPrefix(name + "=") {
            return String(field.split(separator: ";").first ?? "")
        }
        return nil
    }
}

/// A signed-in client's credentials.
struct SignedIn: Sendable {
    let cookie: String
    let csrf: String
    let token: String

    var cookieHeaders: HTTPFields { [.cookie: cookie, .init("X-CSRF-Token")!: csrf] }
    var bearerHeaders: HTTPFields { [.authorization: "Bearer \(token)"] }
}

func jsonString(_ object: [String: Any]) -> String {
    String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
}

func signInWithPassword(
    _ client: some TestClientProtocol, _ username: String, _ password: String, cookieName: String = "sesame_session"
) async throws -> SignedIn {
    let response = try await client.json(
        "/api/sessions/password", .post, body: jsonString(["username": username, "password": password]))
    #expect(response.status == .ok, "sign-in answered \(response.status): \(response.text)")
    let object = response.object
    return SignedIn(
        cookie: response.cookie(named: cookieName) ?? "",
        csrf: object["csrfToken"] as? String ?? "",
        token: object["sessionToken"] as? String ?? ""
    )
}

/// Signs up with a new passkey (a virtual authenticator that verifies the user): a session whose method is
/// `passkey` (`acr` `phr`), as the console and the admin API need. The authenticator comes back for later
/// ceremonies.
@discardableResult
func signUpWithPasskey(
    _ client: some TestClientProtocol, _ username: String, origin: String = "http://localhost:8080",
    cookieName: String = "sesame_session"
) async throws -> (SignedIn, VirtualAuthenticator) {
    let va = VirtualAuthenticator(configuration: .init(transports: ["internal"]))
    let options = try await client.json(
        "/api/registration/options", .post,
        body: jsonString(["username": username, "displayName": "\(username) Example"]))
    #expect(options.status == .ok, "\(options.text)")
    let ceremony = HTTPField.Name("Sesame-Ceremony")!
    let created = try va.create(optionsJSON: Array(options.body.readableBytesView), origin: origin)
    let response = try await client.json(
        "/api/registration", .post, body: #"{"credential":"# + String(decoding: created.json, as: UTF8.self) + "}",
        headers: [ceremony: options.headers[ceremony] ?? ""])
    #expect(response.status == .ok || response.status == .created, "\(response.text)")
    let signedIn = SignedIn(
        cookie: response.cookie(named: cookieName) ?? "", csrf: response.object["csrfToken"] as? String ?? "",
        token: response.object["sessionToken"] as? String ?? "")
    return (signedIn, va)
}

typealias SignInChallenges = ServerConfiguration.SignInChallenges

extension ServerConfiguration.SignInChallenges {
    /// Both kinds of sign-in challenge, for the tests that attack sign-in (`auto` is one of them per engine).
    static let allModes: [Self] = [.stored, .sealed]
}
