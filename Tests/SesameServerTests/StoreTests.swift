import Foundation
import Logging
import Testing

@testable import SesameServer
@testable import SesameCore
@testable import SesameSecondFactors
@testable import SesameIdentityProvider
@testable import SesamePasskeys
import SesameBytes
@testable import SesamePasswords
@testable import SesameKeychainSync
@testable import SesameMetadata

/// The store's guarantees (its conformance suite), on every engine, on fresh databases and on databases earlier
/// releases wrote (see `TestDatabase`).
@Suite struct StoreTests {
    /// Reports why PostgreSQL cases are absent from this run instead of silently leaving them out.
    @Test(
        .enabled(
            if: TestDatabase.postgresURL != nil,
            "SESAME_TEST_POSTGRES_URL is not set; scripts/test starts PostgreSQL 15 and sets it"))
    func postgresAvailable() async throws {
        let server = TestServer(.postgres)
        try await server.withStore { try await $0.ping() }
    }

    @Test(arguments: TestDatabase.conformance)
    func migrationsRunOnceAndAreRecorded(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        var logger = Logger(label: "t")
        logger.logLevel = .critical
        let (engine, _) = try await openStore(server.configuration, environment: server.environment, logger: logger)
        #expect(try await engine.appliedMigrations() == ServerSchema.full.migrations.map(\.version))
        // A second run applies nothing.
        #expect(try await Migrations.run(ServerSchema.full, on: engine, now: Date()).isEmpty)
        try await engine.shutdown()
    }

    /// The schema the composition root puts together from the core's part and the features' (keychain sync's and
    /// metadata's tables are their own): one rising sequence of numbers, and every account table it names exists with a `user_id`
    /// column, so deleting an account empties what each part says it holds.
    @Test func thePartsMakeOneSchema() async throws {
        let versions = ServerSchema.full.migrations.map(\.version)
        #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 })
        #expect(KeychainSyncSchema.part.migrations.map(\.version) == [5])
        #expect(MetadataSchema.part.migrations.map(\.version) == [10])
        #expect(!Migrations.core.migrations.contains { [5, 10].contains($0.version) })
        let tables = ServerSchema.full.accountTables
        #expect(Set(tables).count == tables.count)
        #expect(tables.contains("keychain_vaults") && tables.contains("credentials"))
        #expect(IdentityProviderSchema.part.migrations.map(\.version) == [4, 6, 8, 9, 15])
        #expect(SecondFactorsSchema.part.migrations.map(\.version) == [2])
        let server = TestServer(.sqlite)
        try await server.withStore { store in
            func columns(_ table: String) async throws -> [String] {
                try await store.db.raw("PRAGMA table_info(\(ident: table))").all().map {
                    try $0.decode(column: "name", as: String.self)
                }
            }
            for table in tables {
                #expect(try await columns(table).contains("user_id"), "\(table)")
            }
            // Every table that holds an account's rows (a user_id column) is some part's account table, or deleting
            // an account would leave them behind wherever the foreign keys' cascade is off.
            let all = try await store.db.raw("SELECT name FROM sqlite_master WHERE type = 'table'").all().map {
                try $0.decode(column: "name", as: String.self)
            }
            // The audit trail outlives the account it names (docs/server.md, "People's own data"): kept on purpose.
            for table in all where table != "audit_events" {
                guard try await columns(table).contains("user_id") else { continue }
                #expect(tables.contains(table), "\(table) holds user_id but no part lists it as an account table")
            }
            for rows in ServerSchema.full.expiring {
                #expect(try await columns(rows.table).contains(rows.column), "\(rows.table).\(rows.column)")
            }
            for sealed in ServerSchema.full.sealedColumns {
                let names = try await columns(sealed.table)
                #expect(names.contains(sealed.column) && names.contains(sealed.rowID), "\(sealed.table)")
            }
        }
    }

    /// Several nodes starting at once: each migrates under the lock; exactly one applies each migration.
    @Test(arguments: TestDatabase.conformance)
    func concurrentStartsMigrateOnce(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let logger = {
            var l = Logger(label: "t"); l.logLevel = .critical; return l
        }()
        let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let location = try DatabaseLocation(parsing: server.configuration.database)
                    let engine = try await SQLEngine.open(location, searchPath: server.schema, logger: logger)
                    do {
                        let versions = try await Migrations.run(ServerSchema.full, on: engine, now: Date())
                        try await engine.shutdown()
                        return versions
                    } catch {
                        Issue.record("migration failed: \(error)")
                        try? await engine.shutdown()
                        throw error
                    }
                }
            }
            var all: [Int] = []
            for try await versions in group { all += versions }
            return all
        }
        // Each migration the database lacked (all of them when fresh) was applied by exactly one of the four.
        let before = try db.release.map(UpgradeFixture.schema) ?? 0
        #expect(applied.sorted() == ServerSchema.full.migrations.map(\.version).filter { $0 > before })
    }

    @Test(arguments: TestDatabase.conformance)
    func serverSecretIsGeneratedOnceAndShared(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let first = try await server.withStore {
            try await $0.serverSecret(named: "server", generate: { Secrets.random(32) }, now: Date())
        }
        let second = try await server.withStore {
            try await $0.serverSecret(named: "server", generate: { Secrets.random(32) }, now: Date())
        }
        #expect(first.count == 32)
        #expect(first == second)
    }

    @Test(arguments: TestDatabase.conformance)
    func usernamesAreUniqueCaseFolded(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("Alice")
        await #expect(throws: StoreError.conflict) { try await server.seedUser("aLiCe") }
        let found = try await server.withStore { try await $0.user(usernameKey: Usernames.key("ALICE")) }
        #expect(found?.username == "Alice")
        #expect(found?.userHandle.count == 64)
    }

    @Test(arguments: TestDatabase.conformance)
    func challengesAreSingleUseBoundAndExpire(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try await server.withStore { store in
            let record = ChallengeRecord(
                purpose: "authentication", userID: nil, payload: "{}", expiresAt: now.addingTimeInterval(300))
            try await store.insertChallenge(id: [1, 2, 3], binding: [9], record)
            // Wrong purpose or binding: not consumed, not returned.
            #expect(
                try await store.consumeChallenge(id: [1, 2, 3], purpose: "registration", binding: [9], now: now) == nil)
            #expect(
                try await store.consumeChallenge(id: [1, 2, 3], purpose: "authentication", binding: [8], now: now)
                    == nil)
            #expect(
                try await store.consumeChallenge(id: [1, 2, 3], purpose: "authentication", binding: [9], now: now)
                    == record)
            #expect(
                try await store.consumeChallenge(id: [1, 2, 3], purpose: "authentication", binding: [9], now: now)
                    == nil)

            try await store.insertChallenge(id: [4], binding: [], record)
            #expect(
                try await store.consumeChallenge(
                    id: [4], purpose: "authentication", binding: [], now: now.addingTimeInterval(301)) == nil)
        }
    }

    /// Many concurrent attempts to finish one ceremony: exactly one gets the challenge.
    @Test(arguments: TestDatabase.conformance)
    func concurrentConsumptionHasOneWinner(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let winners = try await server.withStore { store in
            try await store.insertChallenge(
                id: [7], binding: [],
                ChallengeRecord(purpose: "p", userID: nil, payload: "{}", expiresAt: now.addingTimeInterval(60))
            )
            return try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        try await store.consumeChallenge(id: [7], purpose: "p", binding: [], now: now) != nil
                    }
                }
                var count = 0
                for try await won in group where won { count += 1 }
                return count
            }
        }
        #expect(winners == 1)
    }

    @Test(arguments: TestDatabase.conformance)
    func rateLimitCountsEveryConcurrentFailureAndWindowsReset(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try await server.withStore { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask { _ = try await store.recordFailure(bucket: "b", now: now, window: 60) }
                }
                try await group.waitForAll()
            }
            #expect(try await store.failures(bucket: "b", now: now, window: 60).count == 20)
            #expect(try await store.failures(bucket: "b", now: now.addingTimeInterval(61), window: 60).count == 0)
            let after = try await store.recordFailure(bucket: "b", now: now.addingTimeInterval(61), window: 60)
            #expect(after.count == 1)
        }
    }

    /// Bucket names are stored, so they must stay what earlier versions wrote (`String(format: "%02x")` per byte).
    @Test func rateLimitBucketNamesKeepTheirHexForm() {
        #expect(Hex.encode([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
        let digest = Secrets.sha256("198.51.100.7").prefix(16)
        #expect(
            RateLimiter.bucket(address: "198.51.100.7") == "addr:" + digest.map { String(format: "%02x", $0) }.joined())
        #expect(RateLimiter.bucket("password", account: "amy").hasPrefix("password:acct:"))
        #expect(RateLimiter.bucket("password", account: "amy").count == "password:acct:".count + 32)
    }

    /// A ceremony start stores its challenge only within the address's budget, also when many race.
    @Test(arguments: TestDatabase.conformance)
    func ceremonyStartsStoreChallengesOnlyWithinTheLimit(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let record = ChallengeRecord(
            purpose: "authentication", userID: nil, payload: "{}", expiresAt: now.addingTimeInterval(300))
        try await server.withStore { store in
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        try await store.startCeremony(
                            bucket: "c", limit: 5, now: now, window: 60, challengeID: [UInt8(i)], binding: [1], record
                        ).count
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(counts.sorted() == Array(1...20))
            var stored = 0
            for i in 0..<20
            where try await store.peekChallenge(id: [UInt8(i)], purpose: "authentication", binding: [1], now: now)
                != nil
            {
                stored += 1
            }
            #expect(stored == 5)
            // A new window starts the budget again.
            let later = now.addingTimeInterval(61)
            let next = try await store.startCeremony(
                bucket: "c", limit: 5, now: later, window: 60, challengeID: [99], binding: [1], record
            )
            #expect(next.count == 1 && next.windowStart == later)
            #expect(try await store.peekChallenge(id: [99], purpose: "authentication", binding: [1], now: later) != nil)
        }
    }

    /// The joined reads of a sign-in answer what the separate reads did.
    @Test(arguments: TestDatabase.conformance)
    func joinedSignInReadsMatchTheSeparateOnes(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let owner = try await server.seedUser("Joined")
        let bare = try await server.seedUser("bare")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try await server.withStore { store in
            for (n, id) in [[3], [1, 2]].enumerated() {
                try await store.addCredential(
                    StoredCredential(
                        id: id.map(UInt8.init), userID: owner.id, publicKey: [0xA5], signCount: UInt32(n),
                        transports: ["usb"], aaguid: [9],
                        backupEligible: false, backedUp: false, userVerified: true, attestationFormat: "none",
                        name: "k\(n)",
                        createdAt: now.addingTimeInterval(Double(n)), lastUsedAt: nil
                    )
                )
            }
            let separate = try await store.credentials(userID: owner.id)
            #expect(separate.count == 2)
            #expect(try await store.credentials(usernameKey: Usernames.key("JOINED")) == separate)
            #expect(try await store.credentials(usernameKey: Usernames.key(bare.username)).isEmpty)
            #expect(try await store.credentials(usernameKey: "nobody").isEmpty)
            #expect(try await store.credentials(usernameKey: "jo\u{0}ined").isEmpty)

            let found = try #require(try await store.credentialWithUser(id: [1, 2]))
            #expect(found.credential == separate[1])
            #expect(found.user == owner)
            #expect(try await store.credentialWithUser(id: [7]) == nil)
        }
    }

    /// The writes of a sign-in land together or not at all.
    @Test(arguments: TestDatabase.conformance)
    func passkeySignInWritesAllOrNothing(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("signin")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func session(_ id: String) -> SessionRecord {
            SessionRecord(
                id: id, userID: user.id, createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(3600),
                userAgent: "t",
                method: "passkey", authenticatedAt: now
            )
        }
        func event(_ id: String) -> AuditEvent {
            AuditEvent(
                id: id, at: now, kind: "sign_in.passkey", outcome: "success", userID: user.id, username: user.username,
                clientAddress: "a", detail: "")
        }
        try await server.withStore { store in
            try await store.addCredential(
                StoredCredential(
                    id: [5], userID: user.id, publicKey: [0xA5], signCount: 1, transports: [], aaguid: nil,
                    backupEligible: true,
                    backedUp: false, userVerified: true, attestationFormat: "none", name: "key", createdAt: now,
                    lastUsedAt: nil
                )
            )
            #expect(
                try await store.recordPasskeySignIn(
                    credentialID: [5], signCount: 7, backedUp: true, at: now, audit: event("e1"), sessionTokenHash: [1],
                    session: session("s1"), spending: nil
                ) == .signedIn
            )
            let used = try #require(try await store.credential(id: [5]))
            #expect(used.signCount == 7 && used.backedUp && used.lastUsedAt == now)
            #expect(try await store.session(tokenHash: [1], now: now)?.id == "s1")
            #expect(try await store.auditEvents(userID: user.id, limit: 10).map(\.id) == ["e1"])

            // The session insert fails (its token hash exists): the sign count and the audit event are not written either.
            await #expect(throws: StoreError.conflict) {
                try await store.recordPasskeySignIn(
                    credentialID: [5], signCount: 9, backedUp: false, at: now.addingTimeInterval(5), audit: event("e2"),
                    sessionTokenHash: [1], session: session("s2"), spending: nil
                )
            }
            let after = try #require(try await store.credential(id: [5]))
            #expect(after.signCount == 7 && after.backedUp && after.lastUsedAt == now)
            #expect(try await store.auditEvents(userID: user.id, limit: 10).map(\.id) == ["e1"])
            #expect(try await store.sessions(userID: user.id, now: now).map(\.id) == ["s1"])

            // The sign count guard: a count that is not above the stored one writes nothing at all.
            for count: UInt32 in [7, 3, 0] {
                #expect(
                    try await store.recordPasskeySignIn(
                        credentialID: [5], signCount: count, backedUp: false, at: now.addingTimeInterval(9),
                        audit: event("e\(count)x"),
                        sessionTokenHash: [2], session: session("s\(count)x"), spending: nil
                    ) == .signCountRegression
                )
            }
            #expect(try await store.credential(id: [5])?.signCount == 7)
            #expect(try await store.auditEvents(userID: user.id, limit: 10).map(\.id) == ["e1"])
            #expect(try await store.sessions(userID: user.id, now: now).map(\.id) == ["s1"])
            #expect(try await !store.recordCredentialUse(id: [5], signCount: 7, backedUp: false, at: now))
            #expect(try await store.recordCredentialUse(id: [5], signCount: 8, backedUp: false, at: now))
        }
    }

    /// A sealed challenge is spent once, on every path: on its own (a failed check), in the sign-in statement, or in
    /// a sign-in statement the sign count guard refuses; a spent one stops the sign-in with nothing written; of
    /// concurrent sign-ins with one challenge exactly one gets a session; expired entries are purged.
    @Test(arguments: TestDatabase.conformance)
    func sealedChallengesAreSpentOnce(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("spent")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func challenge(_ byte: UInt8) -> SpentChallenge {
            SpentChallenge(id: Array(repeating: byte, count: 32), expiresAt: now.addingTimeInterval(300))
        }
        func signIn(_ store: any PasskeyStorage, count: UInt32, _ id: String, spending: SpentChallenge) async throws
            -> PasskeySignInOutcome
        {
            try await store.recordPasskeySignIn(
                credentialID: [6], signCount: count, backedUp: false, at: now,
                audit: AuditEvent(
                    id: id, at: now, kind: "sign_in.passkey", outcome: "success", userID: user.id,
                    username: user.username, clientAddress: "a", detail: ""),
                sessionTokenHash: Array(id.utf8),
                session: SessionRecord(
                    id: id, userID: user.id, createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(3600),
                    userAgent: "t", method: "passkey", authenticatedAt: now),
                spending: spending)
        }
        try await server.withStore { store in
            try await store.addCredential(
                StoredCredential(
                    id: [6], userID: user.id, publicKey: [0xA5], signCount: 1, transports: [], aaguid: nil,
                    backupEligible: false, backedUp: false, userVerified: true, attestationFormat: "none", name: "key",
                    createdAt: now, lastUsedAt: nil))
            #expect(try await store.spendChallenge(challenge(1)))
            #expect(try await !store.spendChallenge(challenge(1)))
            // Spent on its own: the sign-in statement then writes nothing.
            #expect(try await signIn(store, count: 2, "s-spent", spending: challenge(1)) == .challengeSpent)
            #expect(try await store.credential(id: [6])?.signCount == 1)
            #expect(try await store.sessions(userID: user.id, now: now).isEmpty)
            #expect(try await store.auditEvents(userID: user.id, limit: 10).isEmpty)

            #expect(try await signIn(store, count: 2, "s-ok", spending: challenge(2)) == .signedIn)
            #expect(try await !store.spendChallenge(challenge(2)))
            #expect(try await signIn(store, count: 3, "s-again", spending: challenge(2)) == .challengeSpent)

            // The guard refuses (count 2 is not above 2): nothing written, and the challenge is spent all the same.
            #expect(try await signIn(store, count: 2, "s-clone", spending: challenge(3)) == .signCountRegression)
            #expect(try await !store.spendChallenge(challenge(3)))
            #expect(try await store.sessions(userID: user.id, now: now).map(\.id) == ["s-ok"])

            // Ten sign-ins with one challenge (and growing counts) at once: one session.
            let outcomes = try await withThrowingTaskGroup(of: PasskeySignInOutcome.self) { group in
                for i in 0..<10 {
                    group.addTask {
                        try await signIn(store, count: UInt32(10 + i), "race-\(i)", spending: challenge(4))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .signedIn }.count == 1)
            #expect(outcomes.filter { $0 == .challengeSpent }.count == 9)
            #expect(try await store.sessions(userID: user.id, now: now).count == 2)

            // Purged once expired, not before.
            try await store.purgeExpired(now: now.addingTimeInterval(299), rateLimitWindow: 60)
            #expect(try await !store.spendChallenge(challenge(1)))
            try await store.purgeExpired(now: now.addingTimeInterval(300), rateLimitWindow: 60)
            #expect(try await store.spendChallenge(challenge(1)))
        }
    }

    /// A transaction that rolls back takes nothing else with it: statements of other requests running at the
    /// same time (on SQLite, the same connection) all stay written.
    @Test(arguments: TestDatabase.conformance)
    func rolledBackTransactionsLeaveConcurrentWritesAlone(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("concurrent")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try await server.withStore { store in
            try await store.addCredential(
                StoredCredential(
                    id: [1], userID: user.id, publicKey: [0xA5], signCount: 0, transports: [], aaguid: nil,
                    backupEligible: false,
                    backedUp: false, userVerified: true, attestationFormat: "none", name: "key", createdAt: now,
                    lastUsedAt: nil
                )
            )
            try await store.createSession(
                tokenHash: [9],
                SessionRecord(
                    id: "taken", userID: user.id, createdAt: now, lastSeenAt: now,
                    expiresAt: now.addingTimeInterval(3600),
                    userAgent: "", method: "passkey", authenticatedAt: now)
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<30 {
                    group.addTask {
                        // Fails on its last statement (the token hash is taken) and rolls back.
                        let event = AuditEvent(
                            id: "failed-\(i)", at: now, kind: "k", outcome: "success", userID: user.id, username: nil,
                            clientAddress: "", detail: "")
                        let session = SessionRecord(
                            id: "s\(i)", userID: user.id, createdAt: now, lastSeenAt: now,
                            expiresAt: now.addingTimeInterval(3600),
                            userAgent: "", method: "passkey", authenticatedAt: now
                        )
                        await #expect(throws: StoreError.conflict) {
                            try await store.recordPasskeySignIn(
                                credentialID: [1], signCount: 1, backedUp: false, at: now, audit: event,
                                sessionTokenHash: [9], session: session, spending: nil
                            )
                        }
                    }
                    group.addTask {
                        try await store.appendAudit(
                            AuditEvent(
                                id: "kept-\(i)", at: now, kind: "k", outcome: "success", userID: user.id, username: nil,
                                clientAddress: "", detail: "")
                        )
                        _ = try await store.recordFailure(bucket: "concurrent", now: now, window: 60)
                    }
                }
                try await group.waitForAll()
            }
            let ids = try await store.auditEvents(userID: user.id, limit: 100).map(\.id)
            #expect(ids.filter { $0.hasPrefix("kept-") }.count == 30)
            #expect(!ids.contains { $0.hasPrefix("failed-") })
            #expect(try await store.failures(bucket: "concurrent", now: now, window: 60).count == 30)
            #expect(try await store.credential(id: [1])?.signCount == 0)
        }
    }

    /// Multi-statement transactions (`SQLEngine.withTransaction`; on SQLite behind `SQLiteGate`) roll back alone:
    /// other requests' statements issued meanwhile are neither undone nor left half-applied.
    @Test(arguments: TestDatabase.conformance)
    func failedTransactionsRollBackOnlyThemselves(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("gate")
        try await server.withStore { store in
            try await store.replaceRecoveryCodes(userID: user.id, salt: [1], hashes: [[1], [2]], at: Date())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        // The second insert repeats the first code: the replacement fails and must undo its delete.
                        await #expect(throws: (any Error).self) {
                            try await store.replaceRecoveryCodes(
                                userID: user.id, salt: [2], hashes: [[3], [3]], at: Date())
                        }
                    }
                    group.addTask {
                        try await store.appendAudit(
                            AuditEvent(
                                id: "kept-\(i)", at: Date(), kind: "k", outcome: "success", userID: user.id,
                                username: nil, clientAddress: "", detail: "")
                        )
                    }
                }
                try await group.waitForAll()
            }
            let codes = try #require(try await store.recoveryCodes(userID: user.id))
            #expect(codes.salt == [1])
            #expect(codes.unused.sorted { $0.lexicographicallyPrecedes($1) } == [[1], [2]])
            #expect(try await store.auditEvents(userID: user.id, limit: 100).count == 20)
        }
    }

    @Test(arguments: TestDatabase.conformance)
    func totpStepsAreAcceptedOnlyOnceAndInOrder(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("totp-user")
        try await server.withStore { store in
            try await store.setPendingTOTP(userID: user.id, secret: Array(repeating: 1, count: 20), at: Date())
            #expect(try await !store.acceptTOTPStep(userID: user.id, step: 10))  // not confirmed yet
            let pending = try #require(try await store.totp(userID: user.id))
            #expect(try await store.confirmTOTP(userID: user.id, step: 10, revision: pending.revision))
            // Confirmed already.
            #expect(try await !store.confirmTOTP(userID: user.id, step: 11, revision: pending.revision))
            #expect(try await !store.acceptTOTPStep(userID: user.id, step: 10))  // replay
            #expect(try await !store.acceptTOTPStep(userID: user.id, step: 9))  // older
            #expect(try await store.acceptTOTPStep(userID: user.id, step: 11))
            // A confirmed secret is not replaced by a new pending one.
            try await store.setPendingTOTP(userID: user.id, secret: Array(repeating: 2, count: 20), at: Date())
            #expect(try await store.totp(userID: user.id)?.secret == Array(repeating: 1, count: 20))
        }
    }

    @Test(arguments: TestDatabase.conformance)
    func lastWayInCannotBeRemoved(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("ways")
        func credential(_ id: UInt8) -> StoredCredential {
            StoredCredential(
                id: [id], userID: user.id, publicKey: [0xA5], signCount: 0, transports: ["internal", "hybrid"],
                aaguid: nil,
                backupEligible: true, backedUp: true, userVerified: true, attestationFormat: "none", name: "key \(id)",
                createdAt: Date(), lastUsedAt: nil
            )
        }
        try await server.withStore { store in
            try await store.addCredential(credential(1))
            try await store.addCredential(credential(2))
            await #expect(throws: StoreError.conflict) { try await store.addCredential(credential(2)) }
            #expect(
                try await store.credentials(userID: user.id).map(\.transports) == [
                    ["internal", "hybrid"], ["internal", "hybrid"],
                ])
            #expect(try await store.deleteCredential(userID: user.id, id: [1]) == .removed)
            #expect(try await store.deleteCredential(userID: user.id, id: [2]) == .lastWayIn)
            #expect(try await store.deleteCredential(userID: user.id, id: [3]) == .notFound)
            #expect(try await store.deletePassword(userID: user.id) == .notFound)
            try await store.setPassword(userID: user.id, PasswordHasher(logN: 10).hash("password1"), at: Date())
            #expect(try await store.deleteCredential(userID: user.id, id: [2]) == .removed)
            #expect(try await store.deletePassword(userID: user.id) == .lastWayIn)
        }
    }

    /// Two concurrent removals of an account's last two passkeys: one must be refused.
    @Test(arguments: TestDatabase.conformance)
    func concurrentRemovalsKeepOneWayIn(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("race")
        try await server.withStore { store in
            for id in [UInt8(1), 2] {
                try await store.addCredential(
                    StoredCredential(
                        id: [id], userID: user.id, publicKey: [1], signCount: 0, transports: [], aaguid: nil,
                        backupEligible: false,
                        backedUp: false, userVerified: true, attestationFormat: "none", name: "", createdAt: Date(),
                        lastUsedAt: nil
                    )
                )
            }
            let outcomes = try await withThrowingTaskGroup(of: RemovalOutcome.self) { group in
                for id in [UInt8(1), 2] {
                    group.addTask { try await store.deleteCredential(userID: user.id, id: [id]) }
                }
                var all: [RemovalOutcome] = []
                for try await outcome in group { all.append(outcome) }
                return all
            }
            #expect(outcomes.filter { $0 == .removed }.count == 1)
            #expect(try await store.credentials(userID: user.id).count == 1)
        }
    }

    @Test(arguments: TestDatabase.conformance)
    func recoveryCodesAreSingleUse(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("codes")
        try await server.withStore { store in
            try await store.replaceRecoveryCodes(userID: user.id, salt: [5], hashes: [[1], [2]], at: Date())
            #expect(try await store.unusedRecoveryCodeCount(userID: user.id) == 2)
            #expect(try await store.useRecoveryCode(userID: user.id, hash: [1], at: Date()))
            #expect(try await !store.useRecoveryCode(userID: user.id, hash: [1], at: Date()))
            #expect(try await store.unusedRecoveryCodeCount(userID: user.id) == 1)
        }
    }

    @Test(arguments: TestDatabase.conformance)
    func deletingAUserRemovesEverythingOfIt(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("gone", password: "password1")
        try await server.withStore { store in
            try await store.createSession(
                tokenHash: [1],
                SessionRecord(
                    id: "s", userID: user.id, createdAt: Date(), lastSeenAt: Date(),
                    expiresAt: Date().addingTimeInterval(60), userAgent: "", method: "password", authenticatedAt: Date()
                )
            )
            #expect(try await store.deleteUser(id: user.id))
            #expect(try await store.user(id: user.id) == nil)
            #expect(try await store.password(userID: user.id) == nil)
            #expect(try await store.session(tokenHash: [1], now: Date()) == nil)
        }
    }
}
