import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import WebAuthn

@testable import Keychain
@testable import SesameServer
@testable import SesameCore
@testable import SesamePasskeys
@testable import SesameKeychainSync

/// Keychain sync over `sesame serve` (`Sync/`, `Store/Areas/KeychainSync.swift`), on SQLite and PostgreSQL: the
/// keychain's own client (`HTTPSyncTransport`, over real sockets) syncs, joins and recovers through it, and an
/// attacker with an account, a stolen or revoked token, or a stale push gets nowhere.
@Suite struct KeychainSyncTests {
    static let scrypt = ScryptParameters(logN: 10, r: 8, p: 1)
    static let policy = KDFPolicy(minimum: scrypt)
    static let passphrase = "correct horse battery staple"

    /// A fresh directory for one test's keychains.
    final class Folder: Sendable {
        let path = NSTemporaryDirectory() + "sesame-sync-test-" + UUID().uuidString
        init() { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func sub(_ name: String) -> VaultDirectory { VaultDirectory(path: path + "/" + name) }
    }

    /// Signs in with the password (a fresh, so recent, session) and enrolls one keychain device.
    static func enroll(_ client: some TestClientProtocol, _ user: String, name: String = "laptop") async throws -> (
        token: String, id: String
    ) {
        let session = try await signInWithPassword(client, user, "correct horse")
        let answer = try await client.json(
            "/api/keychain/enrollments", .post, body: jsonString(["name": name]), headers: session.bearerHeaders)
        #expect(answer.status == .created, "\(answer.text)")
        let token = try #require(answer.object["token"] as? String)
        let enrollment = try #require(answer.object["enrollment"] as? [String: Any])
        return (token, try #require(enrollment["id"] as? String))
    }

    static func transport(_ client: some TestClientProtocol, _ token: String) throws -> HTTPSyncTransport {
        let port = try #require(client.port)
        return try HTTPSyncTransport(
            enrollment: SyncEnrollment(server: "http://127.0.0.1:\(port)", token: token, enrollment: "test"))
    }

    static func device(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    static func open(_ directory: VaultDirectory) throws -> Keychain {
        try Keychain.open(directory, passphrase: passphrase, policy: policy)
    }

    static func password(_ site: String, _ user: String, _ password: String) -> ItemContent {
        .password(Password(sites: [site], username: user, password: password))
    }

    /// What the server holds for the account, as its pull answer's bytes (everything since version 0).
    static func held(_ server: TestServer, _ user: User) async throws -> [UInt8] {
        try await server.withStore { try await $0.keychainPull(userID: user.id, since: 0, device: []).json }
    }

    // MARK: The keychain's own client against the server

    /// Opens the vault, runs `body`, saves, and lets go of the vault (and its directory lock).
    static func using<T>(_ directory: VaultDirectory, _ body: (Keychain) async throws -> T) async throws -> T {
        let keychain = try open(directory)
        let result = try await body(keychain)
        try keychain.save()
        return result
    }

    /// A new vault (closed again at once); its recovery key.
    static func create(_ directory: VaultDirectory, name: String) throws -> RecoveryKey {
        let (keychain, recovery) = try Keychain.create(
            in: directory, passphrase: passphrase, deviceName: name, parameters: scrypt, policy: policy)
        try keychain.save()
        return recovery
    }

    /// Starts a join from `directory` (closed again at once); the pairing code.
    static func beginJoin(_ directory: VaultDirectory, name: String, transport: HTTPSyncTransport) async throws
        -> PairingCode
    {
        let (joining, code) = try await Keychain.beginJoin(
            in: directory, passphrase: passphrase, deviceName: name, transport: transport, parameters: scrypt,
            policy: policy)
        withExtendedLifetime(joining) {}
        return code
    }

    @Test(arguments: TestDatabase.all)
    func twoDevicesJoinSyncAndRecoverThroughTheServer(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("kira", password: "correct horse")
        let folder = Folder()
        try await server.app().test(.live) { client in
            let a = try Self.transport(client, try await Self.enroll(client, "kira", name: "A").token)
            let recovery = try Self.create(folder.sub("a"), name: "A")
            try await Self.using(folder.sub("a")) { vault in
                _ = try vault.add(Self.password("example.com", "alice", "pw-from-a"))
                #expect(try await vault.sync(with: a).sent == 1)
            }

            // B enrolls and asks to join; A approves; B finishes and has the item.
            let b = try Self.transport(client, try await Self.enroll(client, "kira", name: "B").token)
            let code = try await Self.beginJoin(folder.sub("b"), name: "B", transport: b)
            try await Self.using(folder.sub("a")) { approver in
                _ = try await approver.approveJoin(code: code, name: "B", transport: a)
                _ = try await approver.sync(with: a)
            }
            try await Self.using(folder.sub("b")) { joined in
                _ = try await joined.completeJoin(transport: b)
                #expect(joined.items.map(\.title) == ["example.com — alice"])
                // An addition on B while A, offline, adds another: both stay.
                _ = try joined.add(Self.password("b.example", "bob", "pw-from-b"))
            }
            try await Self.using(folder.sub("a")) { later in
                _ = try later.add(Self.password("a.example", "ann", "pw-2-from-a"))
                _ = try await later.sync(with: a)
            }
            let onB = try await Self.using(folder.sub("b")) { joined in
                _ = try await joined.sync(with: b)
                return joined.items.map(\.title).sorted()
            }
            let onA = try await Self.using(folder.sub("a")) { later in
                _ = try await later.sync(with: a)
                return later.items.map(\.title).sorted()
            }
            #expect(onA == onB && onA.count == 3)

            // A wrong recovery key changes nothing on the server; the right one restores everything.
            let before = try await Self.held(server, user)
            let c = try Self.transport(client, try await Self.enroll(client, "kira", name: "C").token)
            let otherKey = try Self.create(folder.sub("other"), name: "other")
            await #expect(throws: KeychainError(.wrongRecoveryKey, reason: "")) {
                _ = try await Keychain.recover(
                    in: folder.sub("c"), recoveryKey: otherKey, passphrase: Self.passphrase, deviceName: "C",
                    transport: c, parameters: Self.scrypt, policy: Self.policy)
            }
            #expect(try await Self.held(server, user) == before)
            let (recovered, _) = try await Keychain.recover(
                in: folder.sub("c"), recoveryKey: recovery, passphrase: Self.passphrase, deviceName: "C",
                transport: c, parameters: Self.scrypt, policy: Self.policy)
            #expect(recovered.items.map(\.title).sorted() == onA)
        }
    }

    @Test(arguments: TestDatabase.all)
    func anotherAccountCannotReadOrWriteMyVault(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let mine = try await server.seedUser("mine", password: "correct horse")
        try await server.seedUser("theirs", password: "correct horse")
        let folder = Folder()
        try await server.app().test(.live) { client in
            let a = try Self.transport(client, try await Self.enroll(client, "mine").token)
            _ = try Self.create(folder.sub("a"), name: "A")
            let status = try #require(
                try await Self.using(folder.sub("a")) { vault in
                    _ = try vault.add(Self.password("example.com", "alice", "secret-pw"))
                    _ = try await vault.sync(with: a)
                    return vault.vaultStatus
                })
            let b = try Self.transport(client, try await Self.enroll(client, "mine", name: "B").token)
            _ = try await Self.beginJoin(folder.sub("b"), name: "B", transport: b)
            let share = ShareMessage(
                id: Secrets.random(16), sender: status.sharingKey, recipient: Secrets.random(32),
                blob: Secrets.random(64))
            try await a.postShare(share)
            let before = try await Self.held(server, mine)

            let theirs = try await Self.enroll(client, "theirs")
            let them = try Self.transport(client, theirs.token)
            // Their pull sees their own (empty) vault, never mine.
            let pulled = try await them.pull(since: 0, device: Secrets.random(16))
            #expect(pulled.vault == nil && pulled.records.isEmpty && pulled.version == 0)
            #expect(try await them.joinRequests().isEmpty)
            #expect(try await them.shares(sender: status.sharingKey).isEmpty)
            // A push naming my vault and version lands in their own space, not in mine.
            let theirDevice = Secrets.random(16)
            let bound = try await client.json(
                "/api/keychain/sync?since=0&device=\(Base64URL.encode(theirDevice))", headers: Self.device(theirs.token)
            )
            #expect(bound.status == .ok)
            let planted = try await client.json(
                "/api/keychain/sync", .post,
                body: Self.push(
                    vault: status.vaultId, expected: 0, device: theirDevice, records: [(Secrets.random(16), 1)]),
                headers: Self.device(theirs.token))
            #expect(planted.status == .ok && planted.object["version"] as? Int == 1)
            // My join request's approval, and my share, are not theirs to touch.
            let request = try #require(try await a.joinRequests().first)
            let approval = JoinApproval(request: request.request, blob: Secrets.random(64))
            await #expect(throws: KeychainError(.transportFailure, reason: "")) {
                try await them.postJoinApproval(approval)
            }
            #expect(try await them.joinApproval(request: request.request) == nil)
            await #expect(throws: KeychainError(.transportFailure, reason: "")) {
                try await them.refuseJoin(request: request.request)
            }
            await #expect(throws: KeychainError(.transportFailure, reason: "")) {
                try await them.revokeShare(id: share.id, sender: share.sender)
            }
            #expect(try await Self.held(server, mine) == before)
            #expect(try await a.shares(sender: status.sharingKey) == [share])
            #expect(try await a.joinRequests().count == 1)
        }
    }

    /// A device of the account refuses a waiting join (`DELETE /api/keychain/join/{request}`): the request is gone,
    /// a second refusal or an approval of it is 404, and the joining device's next try ends its join.
    @Test(arguments: TestDatabase.all)
    func aRefusedJoinEndsOnTheJoiningDevice(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("rui", password: "correct horse")
        let folder = Folder()
        try await server.app().test(.live) { client in
            let a = try Self.transport(client, try await Self.enroll(client, "rui", name: "A").token)
            _ = try Self.create(folder.sub("a"), name: "A")
            try await Self.using(folder.sub("a")) { vault in _ = try await vault.sync(with: a) }
            let b = try Self.transport(client, try await Self.enroll(client, "rui", name: "B").token)
            let code = try await Self.beginJoin(folder.sub("b"), name: "B", transport: b)
            await #expect(throws: KeychainError(.joinPending, reason: "")) {
                try await Self.using(folder.sub("b")) { joining in _ = try await joining.completeJoin(transport: b) }
            }
            let waiting = try await Self.using(folder.sub("a")) { vault in try await vault.waitingJoins(transport: a) }
            #expect(waiting.map(\.codeStart) == [String(code.text.prefix(14))])
            let request = try #require(waiting.first).request
            try await Self.using(folder.sub("a")) { vault in try await vault.refuseJoin(request: request, transport: a)
            }
            #expect(try await a.joinRequests().isEmpty)
            await #expect(throws: KeychainError(.transportFailure, reason: "")) {
                try await a.refuseJoin(request: request)
            }
            await #expect(throws: KeychainError(.pairingCodeMismatch, reason: "")) {
                try await Self.using(folder.sub("a")) { vault in
                    _ = try await vault.approveJoin(code: code, name: "B", transport: a)
                }
            }
            await #expect(throws: KeychainError(.joinRefused, reason: "")) {
                try await Self.using(folder.sub("b")) { joining in _ = try await joining.completeJoin(transport: b) }
            }
            #expect(try Self.open(folder.sub("b")).pendingPairingCode == nil)
        }
    }

    // MARK: Tokens

    @Test(arguments: TestDatabase.all)
    func aRevokedOrRemovedDevicesTokenFails(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("rey", password: "correct horse")
        let folder = Folder()
        try await server.app().test(.live) { client in
            // Revoked on the account page.
            let revoked = try await Self.enroll(client, "rey", name: "old phone")
            let device = Base64URL.encode(Secrets.random(16))
            #expect(
                try await client.json(
                    "/api/keychain/sync?since=0&device=\(device)", headers: Self.device(revoked.token)
                )
                .status == .ok)
            let session = try await signInWithPassword(client, "rey", "correct horse")
            let list = try await client.json("/api/keychain/enrollments", headers: session.bearerHeaders)
            #expect((list.object["enrollments"] as? [[String: Any]])?.count == 1)
            let gone = try await client.json(
                "/api/keychain/enrollments/\(revoked.id)", .delete, headers: session.bearerHeaders)
            #expect(gone.status == .ok)
            let after = try await client.json(
                "/api/keychain/sync?since=0&device=\(device)", headers: Self.device(revoked.token))
            #expect(after.status == .unauthorized && after.errorCode == "keychain_device_unknown")
            #expect(after.headers[.wwwAuthenticate] == "Bearer")

            // Removed from the vault by another device: the push that removes it revokes its token.
            let a = try Self.transport(client, try await Self.enroll(client, "rey", name: "A").token)
            let b = try Self.transport(client, try await Self.enroll(client, "rey", name: "B").token)
            _ = try Self.create(folder.sub("a"), name: "A")
            try await Self.using(folder.sub("a")) { _ = try await $0.sync(with: a) }
            let code = try await Self.beginJoin(folder.sub("b"), name: "B", transport: b)
            try await Self.using(folder.sub("a")) {
                _ = try await $0.approveJoin(code: code, name: "B", transport: a)
                _ = try await $0.sync(with: a)
            }
            let deviceB = try await Self.using(folder.sub("b")) {
                _ = try await $0.completeJoin(transport: b)
                _ = try await $0.sync(with: b)
                return $0.deviceId
            }
            try await Self.using(folder.sub("a")) {
                try $0.removeDevice(deviceB)
                _ = try await $0.sync(with: a)
            }
            let file = try Data(contentsOf: URL(fileURLWithPath: folder.sub("b").path + "/vault"))
            await #expect(throws: KeychainError(.notEnrolled, reason: "")) {
                _ = try await Self.using(folder.sub("b")) { try await $0.sync(with: b) }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder.sub("b").path + "/vault")) == file)
            // A still syncs.
            try await Self.using(folder.sub("a")) { _ = try await $0.sync(with: a) }
        }
    }

    @Test(arguments: TestDatabase.all)
    func tokensDoNotStandInForEachOther(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("tao", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "tao", "correct horse")
            let device = try await Self.enroll(client, "tao")
            let sync = "/api/keychain/sync?since=0&device=\(Base64URL.encode(Secrets.random(16)))"
            let withSession = try await client.json(sync, headers: session.bearerHeaders)
            #expect(withSession.status == .unauthorized && withSession.errorCode == "keychain_device_unknown")
            #expect(try await client.json("/api/account", headers: Self.device(device.token)).status == .unauthorized)
            let enrollWithDevice = try await client.json(
                "/api/keychain/enrollments", .post, body: #"{"name":"x"}"#, headers: Self.device(device.token))
            #expect(enrollWithDevice.status == .unauthorized)
            // The right ID with another secret is refused too (the secret is what is compared).
            var bytes = try Base64URL.decode(device.token)
            bytes[40] ^= 1
            let forged = try await client.json(sync, headers: Self.device(Base64URL.encode(bytes)))
            #expect(forged.status == .unauthorized)
            #expect(try await client.json(sync, headers: Self.device(device.token)).status == .ok)
        }
    }

    @Test(arguments: TestDatabase.all)
    func wrongTokensAreRateLimitedPerAddress(_ db: TestDatabase) async throws {
        var configured = TestServer(db)
        configured.rateLimits.perAddress = 3
        let server = configured
        try await server.seedUser("ula", password: "correct horse")
        try await server.app().test(.router) { client in
            let good = try await Self.enroll(client, "ula")
            let sync = "/api/keychain/sync?since=0&device=\(Base64URL.encode(Secrets.random(16)))"
            for _ in 0..<3 {
                let wrong = try await client.json(sync, headers: Self.device(KeychainDeviceToken.issue().token))
                #expect(wrong.status == .unauthorized)
            }
            let limited = try await client.json(sync, headers: Self.device(KeychainDeviceToken.issue().token))
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil)
            // Past the limit even the right token is answered 429, so the answer tells no guess apart.
            #expect(try await client.json(sync, headers: Self.device(good.token)).status == .tooManyRequests)
            let elsewhere: HTTPFields = [
                .authorization: "Bearer \(good.token)", .init("X-Forwarded-For")!: "192.0.2.9",
            ]
            #expect(try await client.json(sync, headers: elsewhere).status == .ok)
            server.clock.advance(RateLimitPolicy().window + 1)
            #expect(try await client.json(sync, headers: Self.device(good.token)).status == .ok)
        }
    }

    @Test(arguments: TestDatabase.all)
    func aTokenActsForOneListedDevice(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("vic", password: "correct horse")
        try await server.app().test(.router) { client in
            let token = try await Self.enroll(client, "vic").token
            let me = Secrets.random(16)
            let pull = "/api/keychain/sync?since=0&device="
            #expect(try await client.json(pull + Base64URL.encode(me), headers: Self.device(token)).status == .ok)
            let push = Self.push(vault: Secrets.random(16), expected: 0, device: me, records: [(Secrets.random(16), 1)])
            #expect(
                try await client.json("/api/keychain/sync", .post, body: push, headers: Self.device(token)).status
                    == .ok)
            // Listed now: the token cannot pull as another device, nor push a listing without its own device.
            let other = try await client.json(pull + Base64URL.encode(Secrets.random(16)), headers: Self.device(token))
            #expect(other.status == .forbidden && other.errorCode == "keychain_device_mismatch")
        }
    }

    // MARK: Push with expected version

    /// A push message with random blobs (the server never opens them).
    static func push(
        vault: [UInt8], expected: UInt64, device: [UInt8], records: [([UInt8], UInt64)],
        devices extra: [[UInt8]] = []
    ) -> String {
        let request = PushRequest(
            vault: vault, expectedVersion: expected, manifest: Secrets.random(SealedRecord.overhead + 40),
            records: records.map {
                WireRecord(id: $0.0, version: $0.1, blob: Secrets.random(SealedRecord.overhead + 20))
            },
            wraps: [], recovery: WireRecovery(epoch: 1, blob: Secrets.random(80)),
            devices: ([device] + extra).map { WireDevice(id: $0, publicKey: Secrets.random(32)) })
        return String(decoding: request.json, as: UTF8.self)
    }

    @Test(arguments: TestDatabase.all)
    func aStalePushIsAConflictAndWritesNothing(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("wes", password: "correct horse")
        try await server.app().test(.router) { client in
            let token = try await Self.enroll(client, "wes").token
            let me = Secrets.random(16)
            let vault = Secrets.random(16)
            let item = Secrets.random(16)
            _ = try await client.json(
                "/api/keychain/sync?since=0&device=\(Base64URL.encode(me))", headers: Self.device(token))
            for expected in [UInt64(0), 1] {
                let accepted = try await client.json(
                    "/api/keychain/sync", .post,
                    body: Self.push(vault: vault, expected: expected, device: me, records: [(item, expected + 1)]),
                    headers: Self.device(token))
                #expect(accepted.status == .ok && accepted.object["version"] as? Int == Int(expected) + 1)
            }
            let before = try await Self.held(server, user)
            let stalePushes: [(UInt64, [([UInt8], UInt64)])] = [
                (0, [(Secrets.random(16), 1)]), (1, [(item, 9)]), (7, []),
            ]
            for (expected, records) in stalePushes {
                let stale = try await client.json(
                    "/api/keychain/sync", .post,
                    body: Self.push(vault: vault, expected: expected, device: me, records: records),
                    headers: Self.device(token))
                #expect(stale.status == .conflict && stale.errorCode == "keychain_version_conflict")
                #expect(stale.object["version"] as? String == "2")
            }
            // Another vault, and a record that does not move its version forward: refused, nothing written.
            let wrongVault = try await client.json(
                "/api/keychain/sync", .post,
                body: Self.push(vault: Secrets.random(16), expected: 2, device: me, records: []),
                headers: Self.device(token))
            #expect(wrongVault.status == .conflict && wrongVault.errorCode == "keychain_wrong_vault")
            let backwards = try await client.json(
                "/api/keychain/sync", .post,
                body: Self.push(vault: vault, expected: 2, device: me, records: [(Secrets.random(16), 1), (item, 2)]),
                headers: Self.device(token))
            #expect(backwards.status == .badRequest && backwards.errorCode == "keychain_invalid_message")
            let garbage = try await client.json(
                "/api/keychain/sync", .post, body: #"{"format":1,"vault":"x","kdf":"none"}"#,
                headers: Self.device(token))
            #expect(garbage.status == .badRequest && garbage.errorCode == "keychain_invalid_message")
            #expect(try await Self.held(server, user) == before)
        }
    }

    /// `keychainQuota` (issue 26: no storage quota per account): a push or a share offer that would take the account
    /// past it is 409 `keychain_limit_reached` with nothing written; under it, and a push that leaves an account
    /// over a lowered quota with less than before, are accepted.
    @Test(arguments: TestDatabase.all)
    func anAccountsKeychainStaysWithinItsQuota(_ db: TestDatabase) async throws {
        var server = TestServer(db) { $0.keychainQuota = 1 }
        let user = try await server.seedUser("qin", password: "correct horse")
        let kib = 1024
        let me = Secrets.random(16)
        let vault = Secrets.random(16)
        let publicKey = Secrets.random(32)
        @Sendable func push(_ expected: UInt64, _ records: [([UInt8], UInt64, Int)]) -> String {
            let request = PushRequest(
                vault: vault, expectedVersion: expected, manifest: Secrets.random(SealedRecord.overhead + 40),
                records: records.map { WireRecord(id: $0.0, version: $0.1, blob: Secrets.random($0.2)) },
                wraps: [], recovery: WireRecovery(epoch: 1, blob: Secrets.random(80)),
                devices: [WireDevice(id: me, publicKey: publicKey)])
            return String(decoding: request.json, as: UTF8.self)
        }
        let (a, b, c) = (Secrets.random(16), Secrets.random(16), Secrets.random(16))
        let token = try await server.app().test(.router) { [server] client in
            let token = try await Self.enroll(client, "qin").token
            _ = try await client.json(
                "/api/keychain/sync?since=0&device=\(Base64URL.encode(me))", headers: Self.device(token))
            let tooMuch = try await client.json(
                "/api/keychain/sync", .post, body: push(0, [(a, 1, 400 * kib), (b, 1, 400 * kib), (c, 1, 400 * kib)]),
                headers: Self.device(token))
            #expect(tooMuch.status == .conflict && tooMuch.errorCode == "keychain_limit_reached", "\(tooMuch.text)")
            let empty = try await Self.held(server, user)
            let fits = try await client.json(
                "/api/keychain/sync", .post, body: push(0, [(a, 1, 400 * kib), (b, 1, 400 * kib)]),
                headers: Self.device(token))
            #expect(fits.status == .ok && fits.object["version"] as? Int == 1, "\(fits.text)")
            let held = try await Self.held(server, user)
            #expect(held != empty)
            let third = try await client.json(
                "/api/keychain/sync", .post, body: push(1, [(c, 1, 400 * kib)]), headers: Self.device(token))
            #expect(third.status == .conflict && third.errorCode == "keychain_limit_reached")
            let share = ShareMessage(
                id: Secrets.random(16), sender: publicKey, recipient: Secrets.random(32),
                blob: Secrets.random(300 * kib))
            let offered = try await client.json(
                "/api/keychain/shares", .post, body: String(decoding: share.json, as: UTF8.self),
                headers: Self.device(token))
            #expect(offered.status == .conflict && offered.errorCode == "keychain_limit_reached")
            #expect(try await Self.held(server, user) == held)
            return token
        }
        // A larger quota takes the third record; the operator then lowers it below what the account holds: a push
        // that grows the account is refused, one that shrinks it is accepted.
        server.configuration.keychainQuota = 2
        try await server.app().test(.router) { client in
            let third = try await client.json(
                "/api/keychain/sync", .post, body: push(1, [(c, 1, 400 * kib)]), headers: Self.device(token))
            #expect(third.status == .ok, "\(third.text)")
        }
        server.configuration.keychainQuota = 1
        try await server.app().test(.router) { client in
            let grown = try await client.json(
                "/api/keychain/sync", .post, body: push(2, [(a, 2, 500 * kib)]), headers: Self.device(token))
            #expect(grown.status == .conflict && grown.errorCode == "keychain_limit_reached", "\(grown.text)")
            let shrunk = try await client.json(
                "/api/keychain/sync", .post, body: push(2, [(a, 2, 300 * kib)]), headers: Self.device(token))
            #expect(shrunk.status == .ok, "\(shrunk.text)")
        }
    }

    /// Two nodes (two connection pools on one PostgreSQL database) push for the same version at once, round after
    /// round: exactly one push of each pair is accepted. SQLite serves one node: its two pushes race through the
    /// one engine's gate instead (a second engine on the same file would only add `SQLITE_BUSY` waits).
    @Test(arguments: TestDatabase.all)
    func concurrentPushesOnTwoConnectionsExactlyOneWins(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("xia", password: "correct horse")
        let vault = Secrets.random(16)
        let device = WireDevice(id: Secrets.random(16), publicKey: Secrets.random(32))
        func request(_ expected: UInt64) -> PushRequest {
            PushRequest(
                vault: vault, expectedVersion: expected, manifest: Secrets.random(SealedRecord.overhead + 8),
                records: [WireRecord(id: Secrets.random(16), version: 1, blob: Secrets.random(SealedRecord.overhead))],
                wraps: [], recovery: WireRecovery(epoch: 1, blob: Secrets.random(64)), devices: [device])
        }
        try await server.withStore { first in
            try await server.withStore { other in
                let second = db == .postgres ? other : first
                let rounds: UInt64 = 12
                for round in 0..<rounds {
                    async let one = first.keychainPush(
                        userID: user.id, request(round), quota: .max, at: server.clock.now)
                    async let two = second.keychainPush(
                        userID: user.id, request(round), quota: .max, at: server.clock.now)
                    let outcomes = try await [one, two]
                    let accepted = outcomes.filter { $0 == .accepted(version: round + 1, revokedEnrollments: 0) }
                    #expect(accepted.count == 1, "round \(round): \(outcomes)")
                    #expect(outcomes.contains(.conflict(current: round + 1)), "round \(round): \(outcomes)")
                }
                let pulled = try await first.keychainPull(userID: user.id, since: 0, device: device.id)
                #expect(pulled.version == rounds)
                #expect(pulled.records.count == Int(rounds))
            }
        }
    }

    // MARK: Provider name

    @Test func theKeychainsPasskeysAreNamedSesameKeychain() throws {
        let aaguid = "fbae9a5b-c577-444c-ab08-4fbf3dadd3a1"
        #expect(KeychainProvider.aaguidString == aaguid)
        #expect(ProviderNames.provider(for: aaguid, in: ProviderNames.bundled)?.name == "Sesame Keychain")
    }
}
