import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import OneTimeCode
import SQLKit
import Testing

@testable import SesameServer
@testable import SesameCore

/// TOTP secrets and phone numbers are sealed at rest (`FieldCipher`), on every engine.
@Suite struct FieldEncryptionTests {
    static let totpSecret: [UInt8] = Array("12345678901234567890".utf8)
    static let phone = "+15555550123"

    static func rawTOTP(_ store: SQLStore, _ userID: String) async throws -> [UInt8] {
        let row = try await store.db.raw("SELECT secret FROM totp WHERE user_id = \(bind: userID)").first()
        return [UInt8](try #require(row).decode(column: "secret", as: Data.self))
    }

    static func rawPhone(_ store: SQLStore, _ userID: String) async throws -> String {
        let row = try await store.db.raw("SELECT phone FROM sms WHERE user_id = \(bind: userID)").first()
        return try #require(row).decode(column: "phone", as: String.self)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    @Test(arguments: TestDatabase.all)
    func columnsHoldNeitherTheSecretNorItsBase32(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("cora")
        try await server.withStore { store in
            try await store.setPendingTOTP(userID: user.id, secret: Self.totpSecret, at: server.clock.now)
            try await store.setSMS(userID: user.id, phone: Self.phone, confirmed: true, at: server.clock.now)
            let raw = try await Self.rawTOTP(store, user.id)
            let base32 = Array(Base32.encode(Self.totpSecret).utf8)
            #expect(!Self.contains(raw, Self.totpSecret))
            #expect(!Self.contains(raw, base32))
            #expect(raw.count == 1 + 12 + Self.totpSecret.count + 16)
            let rawPhone = try await Self.rawPhone(store, user.id)
            #expect(!rawPhone.contains("5555550123"))
            // Read back through the store: the same values.
            #expect(try await store.totp(userID: user.id)?.secret == Self.totpSecret)
            #expect(try await store.sms(userID: user.id)?.phone == Self.phone)
            // Two writes of the same secret differ (fresh nonce).
            try await store.setPendingTOTP(userID: user.id, secret: Self.totpSecret, at: server.clock.now)
            #expect(try await Self.rawTOTP(store, user.id) != raw)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aCiphertextMovedToAnotherRowFailsWithATypedError(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let alice = try await server.seedUser("alice")
        let bob = try await server.seedUser("bob")
        try await server.withStore { store in
            try await store.setPendingTOTP(userID: alice.id, secret: Self.totpSecret, at: server.clock.now)
            try await store.setPendingTOTP(userID: bob.id, secret: Array(repeating: 7, count: 20), at: server.clock.now)
            try await store.setSMS(userID: alice.id, phone: Self.phone, confirmed: true, at: server.clock.now)
            try await store.setSMS(userID: bob.id, phone: "+15555550199", confirmed: true, at: server.clock.now)
            let aliceSecret = try await Self.rawTOTP(store, alice.id)
            let alicePhone = try await Self.rawPhone(store, alice.id)
            try await store.db.raw(
                "UPDATE totp SET secret = \(bind: Data(aliceSecret)) WHERE user_id = \(bind: bob.id)"
            ).run()
            try await store.db.raw("UPDATE sms SET phone = \(bind: alicePhone) WHERE user_id = \(bind: bob.id)").run()
            await expectExactly(StoreError.undecryptable("totp")) { try await store.totp(userID: bob.id) }
            await expectExactly(StoreError.undecryptable("sms")) { try await store.sms(userID: bob.id) }
            // A flipped bit and a truncated value fail the same way.
            var flipped = aliceSecret
            flipped[20] ^= 0x01
            try await store.db.raw("UPDATE totp SET secret = \(bind: Data(flipped)) WHERE user_id = \(bind: alice.id)")
                .run()
            await expectExactly(StoreError.undecryptable("totp")) { try await store.totp(userID: alice.id) }
            try await store.db.raw(
                "UPDATE totp SET secret = \(bind: Data(aliceSecret.prefix(10))) WHERE user_id = \(bind: alice.id)"
            ).run()
            await expectExactly(StoreError.undecryptable("totp")) { try await store.totp(userID: alice.id) }
        }
    }

    /// Over HTTP, a row that fails authentication is a 500 with the generic JSON error (no secret, no crash).
    @Test(arguments: TestDatabase.all)
    func aDamagedSecretIsAServerErrorNotACrash(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("dana", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "dana", "correct horse")
            #expect(
                try await client.json("/api/account/totp", .post, headers: session.bearerHeaders).status == .created)
            try await server.withStore { store in
                try await store.db.raw(
                    "UPDATE totp SET secret = \(bind: Data(Self.totpSecret)) WHERE user_id = \(bind: user.id)"
                ).run()
            }
            let qr = try await client.json("/api/account/totp/qr.png", headers: session.bearerHeaders)
            #expect(qr.status == .internalServerError)
            #expect(qr.errorCode == "internal_error")
            #expect(!qr.text.contains(Base32.encode(Self.totpSecret)))
        }
    }

    /// A database written before migration 2 (secrets in clear) is sealed by it, and the values read back the same.
    @Test(arguments: TestDatabase.all)
    func migrationSealsPlaintextRows(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        var logger = Logger(label: "t")
        logger.logLevel = .critical
        let location = try DatabaseLocation(parsing: server.configuration.database)
        let engine = try await SQLEngine.open(location, searchPath: server.schema, logger: logger)
        do {
            #expect(try await Migrations.run(ServerSchema.full, on: engine, now: server.clock.now, through: 1) == [1])
            let sql = engine.sql
            try await sql.raw(
                """
                INSERT INTO users (id, username, username_key, display_name, user_handle, disabled, created_at)
                VALUES ('u1', 'old', 'old', 'Old', \(bind: Data(Secrets.random(64))), 0, 0)
                """
            ).run()
            try await sql.raw(
                "INSERT INTO totp (user_id, secret, last_step, confirmed, created_at) VALUES ('u1', \(bind: Data(Self.totpSecret)), 5, 1, 0)"
            ).run()
            try await sql.raw(
                "INSERT INTO sms (user_id, phone, confirmed, created_at) VALUES ('u1', \(bind: Self.phone), 1, 0)"
            ).run()

            #expect(try await Migrations.run(ServerSchema.full, on: engine, now: server.clock.now).contains(2))
            let store = try await SQLStore.open(engine: engine, schema: ServerSchema.full, now: server.clock.now)
            let raw = try await Self.rawTOTP(store, "u1")
            #expect(!Self.contains(raw, Self.totpSecret))
            #expect(try await Self.rawPhone(store, "u1") != Self.phone)
            let record = try #require(try await store.totp(userID: "u1"))
            #expect(record.secret == Self.totpSecret)
            #expect(record.lastStep == 5 && record.confirmed)
            #expect(try await store.sms(userID: "u1")?.phone == Self.phone)
            try await engine.shutdown()
        } catch {
            try? await engine.shutdown()
            throw error
        }
    }

    /// Password + TOTP sign-in still works with the sealed secret (codes from the secret the setup returned).
    @Test(arguments: TestDatabase.all)
    func signInWithTOTPStillWorks(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("erin", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "erin", "correct horse")
            let totp = try await SecondFactorTests().enableTOTP(client, session, server: server)
            server.clock.advance(30)
            let pending = try await SecondFactorTests().pendingStep(client, "erin", "correct horse")
            let signedIn = try await client.json(
                "/api/sessions/second-factor", .post,
                body: jsonString([
                    "factor": "totp", "code": try totp.code(at: server.clock.now), "pendingToken": pending.token,
                ])
            )
            #expect(signedIn.status == .ok)
            #expect(signedIn.object["status"] as? String == "signed_in")
        }
    }
}
