import Foundation
import Glibc
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import SQLKit
import Testing
import VirtualAuthenticator

@testable import SesameCore

/// The second outside review's two database findings (issue 26): the live SQLite files were created with the umask's
/// mode although they hold the server secret, and a PostgreSQL that stops answering (not one that refuses) held every
/// request and `/health` until it came back. `scripts/faults` (`pg-frozen`) stops PostgreSQL with SIGSTOP under load
/// over HTTP; these hold the parts to their deadlines one by one.
@Suite struct DatabaseSafetyTests {
    let journey = PasskeyJourneyTests()

    private static func mode(_ path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o777 : nil
    }

    private static func removeDatabase(_ path: String) {
        for file in SQLiteFileMode.files(of: path) { try? FileManager.default.removeItem(atPath: file) }
    }

    // MARK: The live SQLite files

    /// A database the server creates, and the log and index SQLite writes beside it while it serves a sign-up, are
    /// the server user's only, whatever the umask.
    @Test func theServerCreatesItsDatabaseAndItsLogForItsUserOnly() async throws {
        let server = TestServer(.sqlite)
        let path = server.configuration.database
        defer { Self.removeDatabase(path) }
        #expect(Self.mode(path) == nil)
        let previous = umask(0o022)
        defer { umask(previous) }
        try await server.app().test(.router) { client in
            let created = try await journey.signUp(client, VirtualAuthenticator(), "ines")
            #expect(created.status == .created)
            for file in SQLiteFileMode.files(of: path) {
                #expect(Self.mode(file) == 0o600, "\(file)")
            }
        }
    }

    /// A database (or its log) that group or others may read is refused before it is opened, with the fix named,
    /// and is left as it was.
    @Test(arguments: ["", "-wal"])
    func anExposedDatabaseIsRefusedWithTheFix(_ suffix: String) async throws {
        let server = TestServer(.sqlite)
        let path = server.configuration.database
        defer { Self.removeDatabase(path) }
        try await server.app().test(.router) { client in
            let created = try await journey.signUp(client, VirtualAuthenticator(), "jon")
            #expect(created.status == .created)
        }
        let exposed = path + suffix
        if suffix == "-wal", Self.mode(exposed) == nil {
            #expect(
                FileManager.default.createFile(
                    atPath: exposed, contents: Data(), attributes: [.posixPermissions: 0o600]))
        }
        #expect(chmod(exposed, 0o644) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try await server.app()
            Issue.record("a database readable by others was opened")
        } catch let error as DatabaseError where error.code == .exposedFiles {
            #expect(error.extra["exposed"] == exposed)
            #expect(error.description.contains("chmod 600 '\(exposed)'"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(Self.mode(exposed) == 0o644)
        // The fix the message names lets it start.
        #expect(chmod(exposed, 0o600) == 0)
        try await server.app().test(.router) { client in
            let health = try await client.json("/health")
            #expect(health.status == .ok)
        }
    }

    // MARK: Deadlines on a database that does not answer

    @Test func theDeadlineIsASettingOfTwoSecondsByDefault() throws {
        #expect(ServerConfiguration().databaseTimeout == 2)
        let setting = try #require(ServerConfiguration.settings.first { $0.key == "databaseTimeout" })
        #expect(Double(setting.defaultValue) == ServerConfiguration.defaultDatabaseTimeout)
        let half = try ServerConfiguration.resolve(flags: ["databaseTimeout": "0.5"], environment: [:], configFile: nil)
        #expect(half.databaseTimeout == 0.5)
        #expect(DatabaseDeadline(seconds: 0.5).healthLimit == .milliseconds(250))
        for refused in ["0", "0.05", "61", "soon", ""] {
            #expect(throws: ConfigurationError.self) {
                try ServerConfiguration.resolve(
                    flags: [:], environment: ["SESAME_DATABASE_TIMEOUT": refused], configFile: nil)
            }
        }
    }

    /// A listening socket whose connections nobody answers: a PostgreSQL whose processes are stopped looks exactly
    /// like this from the client (the kernel completes the TCP handshake; the start-up message gets no reply).
    private final class SilentListener: Sendable {
        let descriptor: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(fd, pointer, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &length) == 0
                }
            }
            guard bound else {
                close(fd)
                throw DatabaseError("could not listen on loopback")
            }
            descriptor = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    /// Opening a connection (TCP, then start-up and authentication that never come) and so acquiring one from the
    /// pool end within the deadline with an error the server answers as 503 `unavailable`.
    /// Without the deadlines the statement would wait for ever: the time limit fails it. No wall-clock assertion: the
    /// error says which deadline ended the wait.
    @Test(.timeLimit(.minutes(10))) func aSilentDatabaseFailsWithinTheDeadlineAsUnavailable() async throws {
        let silent = try SilentListener()
        var logger = Logger(label: "sesame.test")
        logger.logLevel = .critical
        let engine = try await SQLEngine.open(
            .postgres(url: "postgres://sesame@127.0.0.1:\(silent.port)/sesame"), logger: logger, observer: nil,
            deadline: DatabaseDeadline(seconds: 0.5))
        defer { Task { try? await engine.shutdown() } }
        var failure: (any Error)?
        do { _ = try await engine.sql.raw("SELECT 1").all() } catch { failure = error }
        let error = try #require(failure)
        // The pool's request timeout (DatabaseError.timeout) or the connect timeout, whichever the event loop runs first;
        // both are the deadline (postgres-nio's own connect timeout would be 10 s).
        #expect(ErrorMiddleware.isUnreachableDatabase(error), "\(error)")
        #expect(
            (error as? DatabaseError)?.code == .timeout || (error as? PSQLError)?.code == .connectionError, "\(error)")
        #expect(engine.postgresConfiguration?.coreConfiguration.options.connectTimeout == .milliseconds(500))
        // The health check has its own, shorter deadline, whatever the pool does: it ends the wait, not the pool.
        await expectExactly(DatabaseError.timeout(.check)) {
            try await DatabaseDeadline.first(within: .milliseconds(1), stage: .check) {
                _ = try await engine.sql.raw("SELECT 1").all()
            }
        }
    }

    /// A statement past the deadline ends with `DatabaseError.timeout`, its connection is closed, and the next statement
    /// gets a fresh connection: the pool heals by itself.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, "needs SESAME_TEST_POSTGRES_URL"), .timeLimit(.minutes(10)))
    func aStatementPastTheDeadlineClosesItsConnectionAndThePoolHeals() async throws {
        let server = TestServer(.postgres) {
            // 2 s: long enough for the suite's load on two cores, short against the 30 s statement below.
            $0.databaseTimeout = 2
            $0.postgresConnections = 1
        }
        let user = try await server.seedUser("kim")
        try await server.withStore { store in
            #expect(store.engine.deadline == DatabaseDeadline(seconds: 2))
            // Without the deadline the statement would succeed after 30 s; with it, it ends as a timeout.
            await expectExactly(DatabaseError.timeout(.statement)) {
                try await store.engine.sql.raw("SELECT pg_sleep(30)").run()
            }
            // Inside a transaction too: nothing of it is committed.
            await expectExactly(DatabaseError.timeout(.statement)) {
                try await store.engine.withTransaction { db in
                    try await db.raw("UPDATE users SET display_name = 'changed' WHERE id = \(bind: user.id)").run()
                    try await db.raw("SELECT pg_sleep(30)").run()
                }
            }
            for _ in 0..<4 {
                let name = try await store.user(id: user.id)?.displayName
                #expect(name == "Kim")
            }
        }
    }

    /// Over HTTP: a request whose statement passes the deadline answers 503 `unavailable`, not 500, and the server
    /// answers the next one.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, "needs SESAME_TEST_POSTGRES_URL"), .timeLimit(.minutes(10)))
    func aRequestWhoseStatementPassesTheDeadlineAnswersUnavailable() async throws {
        // 3 s, not less: the suite runs beside a hundred others on two cores, and the sign-up before the lock must
        // finish well inside it (a 0.5 s deadline once timed out there in CI).
        let server = TestServer(.postgres) { $0.databaseTimeout = 3 }
        try await server.app().test(.router) { client in
            let first = try await journey.signUp(client, VirtualAuthenticator(), "lee")
            #expect(first.status == .created)
            // Another connection holds the tables a sign-up reads and writes: its statements wait on the locks, as
            // they would on a database that stopped answering.
            try await server.withStore { store in
                try await store.engine.withTransaction { db in
                    try await db.raw("LOCK TABLE users, rate_limits, challenges IN ACCESS EXCLUSIVE MODE").run()
                    // Without the deadline this would wait for the lock, which waits for it: the time limit.
                    let answer = try await client.json(
                        "/api/registration/options", .post, body: jsonString(["username": "mia"]))
                    #expect(answer.status == .serviceUnavailable)
                    #expect(answer.errorCode == "unavailable")
                }
            }
            let created = try await journey.signUp(client, VirtualAuthenticator(), "mia")
            #expect(created.status == .created)
            let health = try await client.json("/health")
            #expect(health.status == .ok)
        }
    }
}
