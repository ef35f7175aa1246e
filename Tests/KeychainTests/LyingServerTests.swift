import Crypto
import Foundation
import Testing
import WebAuthn

@testable import Keychain

/// A server that lies: it edits what it stores or what it answers between two syncs. Every attack must end in a
/// typed error on the device, and the device's vault file must be left as it was.
@Suite struct LyingServerTests {
    /// Two enrolled devices with two synced items, and B's vault file as it is before the attack.
    struct Setup {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        var a: VaultDirectory!
        var b: VaultDirectory!
        var ids: [ItemID] = []

        static func make() async throws -> Setup {
            var s = Setup()
            let (a, b, _) = try await enrolledPair(s.dir, transport: s.server)
            s.a = a
            s.b = b
            s.ids = try await using(a) { k in
                [try k.add(samplePassword("one.example")).id, try k.add(samplePassword("two.example")).id]
            }
            try await sync(a, s.server)
            try await sync(b, s.server)
            return s
        }

        /// A changes the first item and syncs, so B has something to pull.
        func changeOnA() async throws {
            try await using(a) { k in
                var item = k.item(id: ids[0])!
                item.notes = "changed on A"
                try k.update(item)
            }
            try await sync(a, server)
        }

        /// Runs B's sync expecting `code`, and checks B's vault file did not change.
        func expectBRefuses(_ code: KeychainError.Code, sourceLocation: SourceLocation = #_sourceLocation) async {
            let before = readBytes(b.vaultFile)
            let got = await errorCode({ try await sync(b, server) }, sourceLocation: sourceLocation)
            #expect(got == code, sourceLocation: sourceLocation)
            #expect(readBytes(b.vaultFile) == before, "B's vault changed", sourceLocation: sourceLocation)
        }
    }

    static func editJSON(_ json: [UInt8], _ change: (inout [String: Any]) -> Void) -> [UInt8] {
        var object = try! JSONSerialization.jsonObject(with: Data(json)) as! [String: Any]
        change(&object)
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    // MARK: Records

    @Test func swappedRecordsAreRefused() async throws {
        let s = try await Setup.make()
        try await s.changeOnA()
        try await using(s.a) { k in
            var item = k.item(id: s.ids[1])!
            item.notes = "also changed"
            try k.update(item)
        }
        try await sync(s.a, s.server)
        s.server.edit { state in
            let one = state.records[s.ids[0].bytes]!
            let two = state.records[s.ids[1].bytes]!
            state.records[s.ids[0].bytes]!.record = WireRecord(
                id: one.record.id, version: one.record.version, blob: two.record.blob)
            state.records[s.ids[1].bytes]!.record = WireRecord(
                id: two.record.id, version: two.record.version, blob: one.record.blob)
        }
        await s.expectBRefuses(.manifestMismatch)
    }

    @Test func aReplayedOldVersionIsRefused() async throws {
        let s = try await Setup.make()
        let old = s.server.snapshot.records[s.ids[0].bytes]!.record
        try await s.changeOnA()
        // The current manifest with the item's previous record (and version) in place of the new one.
        s.server.edit { state in state.records[s.ids[0].bytes]!.record = old }
        s.server.tamper { json in
            LyingServerTests.editJSON(json) { o in
                var records = o["records"] as! [[String: Any]]
                records = records.map { r in
                    var r = r
                    if r["id"] as? String == Base64URL.encode(old.id) {
                        r["version"] = old.version + 1
                    }
                    return r
                }
                o["records"] = records
            }
        }
        await s.expectBRefuses(.manifestMismatch)
    }

    @Test func aRolledBackServerIsRefused() async throws {
        let s = try await Setup.make()
        let earlier = s.server.snapshot
        try await s.changeOnA()
        try await sync(s.b, s.server)
        // The server goes back to the state before A's change (B saw the later version).
        s.server.restore(earlier)
        await s.expectBRefuses(.rollbackDetected)
        // A server that forgets the vault entirely is a rollback too.
        s.server.restore(SyncServerState())
        await s.expectBRefuses(.rollbackDetected)
    }

    @Test func aServerThatDropsAPushIsCaughtAtTheNextPull() async throws {
        let s = try await Setup.make()
        let before = s.server.snapshot
        try await s.changeOnA()  // accepted, then silently forgotten
        s.server.restore(before)
        let got = await errorCode { try await sync(s.a, s.server) }
        #expect(got == .rollbackDetected)
    }

    @Test func aPlantedRecordIsRefused() async throws {
        let s = try await Setup.make()
        try await s.changeOnA()
        // A well-formed record under a random key, and a real record of another vault.
        let planted = try SealedRecord.seal(
            Array("evil".utf8), type: .item, vaultId: open(s.b).vaultStatus!.vaultId, recordId: ItemID.random().bytes,
            version: 1, key: .random(epoch: 1))
        s.server.edit { state in
            state.records[planted.recordId] = .init(
                record: WireRecord(id: planted.recordId, version: 1, blob: planted.bytes), writtenAt: state.version)
        }
        await s.expectBRefuses(.manifestMismatch)
    }

    @Test func aRecordFromAnotherVaultIsRefused() async throws {
        let s = try await Setup.make()
        let otherServer = InMemorySyncTransport()
        let other = s.dir.sub("other")
        do {
            let (k, _) = try makeVault(other)
            try k.add(samplePassword())
            _ = try await k.sync(with: otherServer)
            try k.save()
        }
        try await s.changeOnA()
        let foreign = otherServer.snapshot.records.values.first!.record
        s.server.edit { state in
            let mine = state.records[s.ids[0].bytes]!.record
            state.records[s.ids[0].bytes]!.record = WireRecord(id: mine.id, version: mine.version, blob: foreign.blob)
        }
        await s.expectBRefuses(.manifestMismatch)
        // Even with a wire version matching, another vault's manifest does not open here.
        s.server.restore(otherServer.snapshot)
        s.server.edit { state in state.vault = try! open(s.b).vaultStatus!.vaultId }
        s.server.edit { state in state.version = 100 }
        await s.expectBRefuses(.recordMismatch)
    }

    @Test func aWithheldRecordIsRefused() async throws {
        let s = try await Setup.make()
        try await s.changeOnA()
        s.server.tamper { json in LyingServerTests.editJSON(json) { $0["records"] = [[String: Any]]() } }
        await s.expectBRefuses(.manifestMismatch)
    }

    @Test func anOldManifestUnderANewVersionNumberIsRefused() async throws {
        let s = try await Setup.make()
        let oldManifest = s.server.snapshot.manifest!
        try await s.changeOnA()
        s.server.edit { state in state.manifest = oldManifest }
        await s.expectBRefuses(.recordMismatch)
    }

    @Test func aDifferentManifestForAVersionAlreadySeenIsRefused() async throws {
        let s = try await Setup.make()
        try await s.changeOnA()
        try await sync(s.b, s.server)
        // Same version number, other bytes: the server cannot show two histories under one version.
        s.server.edit { state in
            var bytes = state.manifest!
            bytes[bytes.count - 1] ^= 1
            state.manifest = bytes
        }
        await s.expectBRefuses(.manifestMismatch)
    }

    @Test func aTamperedBlobFailsAuthentication() async throws {
        let s = try await Setup.make()
        try await s.changeOnA()
        s.server.edit { state in
            var r = state.records[s.ids[0].bytes]!.record
            var blob = r.blob
            blob[blob.count - 1] ^= 1
            r = WireRecord(id: r.id, version: r.version, blob: blob)
            state.records[s.ids[0].bytes]!.record = r
        }
        await s.expectBRefuses(.manifestMismatch)
    }

    // MARK: Keys and devices

    @Test func theServersOwnDeviceIsNeverGivenTheKey() async throws {
        let s = try await Setup.make()
        let intruder = DeviceKey.generate()
        let intruderId = SecureRandom.bytes(16)
        s.server.edit { state in state.devices.append(WireDevice(id: intruderId, publicKey: intruder.publicKey)) }
        let report = try await sync(s.b, s.server)
        #expect(report.unknownServerDevices.map(\.id) == [intruderId])
        #expect(try open(s.b).devices.count == 2)
        // A rotation wraps the new key for the vault's own devices only.
        let bId = try open(s.b).deviceId
        try await using(s.a) { try $0.removeDevice(bId) }
        s.server.edit { state in state.devices.append(WireDevice(id: intruderId, publicKey: intruder.publicKey)) }
        try await sync(s.a, s.server)
        #expect(s.server.snapshot.wraps.allSatisfy { $0.device != intruderId })
    }

    @Test func aSwappedDeviceKeyIsRefused() async throws {
        let s = try await Setup.make()
        let aId = try open(s.a).deviceId
        s.server.tamper { json in
            LyingServerTests.editJSON(json) { o in
                o["devices"] = (o["devices"] as! [[String: Any]]).map { d in
                    var d = d
                    if d["id"] as? String == Base64URL.encode(aId) {
                        d["publicKey"] = Base64URL.encode(DeviceKey.generate().publicKey)
                    }
                    return d
                }
            }
        }
        await s.expectBRefuses(.untrustedDeviceKey)
    }

    @Test func aForgedKeyRotationIsRefused() async throws {
        let s = try await Setup.make()
        let bId = try open(s.b).deviceId
        let aId = try open(s.a).deviceId
        let vaultId = try open(s.b).vaultStatus!.vaultId
        // The server makes its own epoch-2 key and manifest, wrapped for B "from A" with the server's key.
        let fake = VaultKey.random(epoch: 2)
        let forger = DeviceKey.generate()
        let bKey = try DeviceKey.publicKey(open(s.b).devices.first { $0.id == bId }!.publicKey)
        let box = try HPKEBox.seal(
            fake.bytes, to: bKey,
            info: SyncEngine.deviceWrapInfo(vaultId: vaultId, recipient: bId, sender: aId, epoch: 2),
            sender: forger.privateKey)
        let manifest = Manifest(
            vaultId: vaultId, version: s.server.snapshot.version + 1, epoch: 2, author: aId,
            roster: try open(s.b).devices,
            recovery: RecoveryPublicInfo(publicKey: forger.publicKey, psk: Array(repeating: 0, count: 32)),
            sharingKey: forger.rawPrivateKey, entries: [:])
        let sealed = try manifest.seal(with: fake)
        s.server.edit { state in
            state.version += 1
            state.manifest = sealed.bytes
            state.wraps.append(WireWrap(device: bId, sender: aId, epoch: 2, blob: box.bytes))
        }
        await s.expectBRefuses(.recordAuthenticationFailed)
        // From a sender the vault does not know at all, it is refused before any decryption.
        s.server.edit { state in
            state.wraps = [WireWrap(device: bId, sender: SecureRandom.bytes(16), epoch: 2, blob: box.bytes)]
        }
        await s.expectBRefuses(.untrustedDeviceKey)
    }

    @Test func aSwappedJoinRequestKeyIsCaughtByThePairingCode() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let a = dir.sub("a")
        do {
            let (k, _) = try makeVault(a)
            _ = try await k.sync(with: server)
            try k.save()
        }
        let (joining, code) = try await Keychain.beginJoin(
            in: dir.sub("b"), passphrase: passphrase, deviceName: "b", transport: server, parameters: fastKDF,
            policy: fastPolicy)
        withExtendedLifetime(joining) {}
        // The server replaces the joining device's key with its own.
        let serverKey = DeviceKey.generate()
        server.edit { state in
            state.joinRequests = state.joinRequests.map {
                JoinRequest(request: $0.request, device: $0.device, publicKey: serverKey.publicKey)
            }
        }
        let before = server.snapshot
        let got = await errorCode {
            try await using(a) { k in _ = try await k.approveJoin(code: code, name: "b", transport: server) }
        }
        #expect(got == .pairingCodeMismatch)
        #expect(server.snapshot == before)
    }

    @Test func aForgedJoinApprovalEndsTheJoin() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let b = dir.sub("b")
        let requestId: [UInt8]
        let deviceKey: [UInt8]
        do {
            let (joining, _) = try await Keychain.beginJoin(
                in: b, passphrase: passphrase, deviceName: "b", transport: server, parameters: fastKDF,
                policy: fastPolicy)
            withExtendedLifetime(joining) {}
            requestId = server.snapshot.joinRequests[0].request
            deviceKey = server.snapshot.joinRequests[0].publicKey
        }
        // The server "approves" with a vault key of its own, guessing the pairing secret.
        let guess = PairingCode(publicKey: deviceKey, secret: [0, 0, 0, 0, 0])
        let box = try HPKEBox.seal(
            Array(repeating: 1, count: 40), to: try DeviceKey.publicKey(deviceKey),
            info: Keychain.joinInfo(
                request: requestId, device: server.snapshot.joinRequests[0].device, publicKey: deviceKey),
            psk: (guess.psk(request: requestId, publicKey: deviceKey), Domain.bytes(Domain.joinPSK)))
        try await server.postJoinApproval(JoinApproval(request: requestId, blob: box.bytes))
        let got = await errorCode { try await using(b) { _ = try await $0.completeJoin(transport: server) } }
        #expect(got == .joinApprovalInvalid)
        // The join is over: a second (perhaps luckier) try finds nothing to complete.
        let again = await errorCode { try await using(b) { _ = try await $0.completeJoin(transport: server) } }
        #expect(again == .vaultNotFound)
    }

    // MARK: Parameters and formats

    @Test func extraParametersInAnswersAreRefused() async throws {
        let s = try await Setup.make()
        try await s.changeOnA()
        s.server.tamper { json in LyingServerTests.editJSON(json) { $0["kdf"] = ["name": "scrypt", "logN": 1] } }
        await s.expectBRefuses(.malformedMessage)
        s.server.tamper { json in
            LyingServerTests.editJSON(json) { o in
                var recovery = o["recovery"] as! [String: Any]
                recovery["suite"] = "legacy"
                o["recovery"] = recovery
            }
        }
        await s.expectBRefuses(.malformedMessage)
    }

    @Test func olderFormatsAreRefused() async throws {
        let s = try await Setup.make()
        try await s.changeOnA()
        s.server.tamper { json in LyingServerTests.editJSON(json) { $0["format"] = 0 } }
        await s.expectBRefuses(.unsupportedFormat)
        // A manifest relabelled as format 0 (its digest then differs too, but the format is refused first).
        s.server.tamper(nil)
        s.server.edit { state in
            var m = state.manifest!
            m[0] = 0
            state.manifest = m
        }
        await s.expectBRefuses(.unsupportedFormat)
    }

    @Test func aStaleOrForgedRecoveryWrapIsRefused() async throws {
        let s = try await Setup.make()
        let stale = s.server.snapshot.recovery!
        let bId = try open(s.b).deviceId
        try await using(s.a) { try $0.removeDevice(bId) }
        try await sync(s.a, s.server)
        // The server offers the epoch-1 wrap with the epoch-2 vault.
        s.server.edit { state in state.recovery = stale }
        let recovery = try RecoveryKey(text: RecoveryKey.generate().text)
        #expect(
            await errorCode {
                _ = try await Keychain.recover(
                    in: s.dir.sub("r"), recoveryKey: recovery, passphrase: passphrase, deviceName: "r",
                    transport: s.server,
                    parameters: fastKDF, policy: fastPolicy)
            } == .manifestMismatch)
        #expect(!FileManager.default.fileExists(atPath: s.dir.sub("r").vaultFile))
    }

    @Test func aPushAnswerWithTheWrongVersionIsRefused() async throws {
        struct Liar: SyncTransport {
            let inner: InMemorySyncTransport
            func pull(since v: UInt64, device: [UInt8]) async throws(KeychainError) -> PullResponse {
                try await inner.pull(since: v, device: device)
            }
            func push(_ r: PushRequest) async throws(KeychainError) -> PushResponse {
                _ = try await inner.push(r)
                return PushResponse(version: r.expectedVersion + 7)
            }
            func postJoinRequest(_ r: JoinRequest) async throws(KeychainError) {}
            func joinRequests() async throws(KeychainError) -> [JoinRequest] { [] }
            func postJoinApproval(_ a: JoinApproval) async throws(KeychainError) {}
            func joinApproval(request: [UInt8]) async throws(KeychainError) -> JoinApproval? { nil }
            func refuseJoin(request: [UInt8]) async throws(KeychainError) {}
            func postShare(_ s: ShareMessage) async throws(KeychainError) {}
            func shares(recipient: [UInt8]) async throws(KeychainError) -> [ShareMessage] { [] }
            func shares(sender: [UInt8]) async throws(KeychainError) -> [ShareMessage] { [] }
            func revokeShare(id: [UInt8], sender: [UInt8]) async throws(KeychainError) {}
        }
        let dir = TemporaryDirectory()
        let a = dir.sub("a")
        _ = try makeVault(a)
        let before = readBytes(a.vaultFile)
        #expect(await errorCode { try await sync(a, Liar(inner: InMemorySyncTransport())) } == .malformedMessage)
        #expect(readBytes(a.vaultFile) == before)
    }

    @Test func anAnswerForAnotherVaultIsRefused() async throws {
        let s = try await Setup.make()
        s.server.tamper { json in
            LyingServerTests.editJSON(json) { $0["vault"] = Base64URL.encode(SecureRandom.bytes(16)) }
        }
        await s.expectBRefuses(.wrongVault)
    }
}
