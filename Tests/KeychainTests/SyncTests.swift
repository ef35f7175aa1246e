import Foundation
import Testing
import WebAuthn

@testable import Keychain

@Suite struct SyncTests {
    @Test func firstPushAndPullOnASecondDevice() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        try await using(a) { try $0.add(samplePassword()) }
        let sent = try await sync(a, server)
        #expect(sent.sent == 1)
        let received = try await sync(b, server)
        #expect(received.received == 1)
        #expect(try itemTitles(b) == ["example.com — alice"])
        #expect(try open(a).devices.map(\.name).sorted() == ["device A", "device B"])
        #expect(try open(b).devices.count == 2)
        // Both see the same vault and no pending changes.
        #expect(try open(a).vaultStatus?.vaultId == open(b).vaultStatus?.vaultId)
        #expect(try open(b).vaultStatus?.pendingChanges == 0)
    }

    /// The last successful sync is recorded in the vault (so it survives reopening) and shown by `status`; a sync
    /// that fails leaves it where it was.
    @Test func theLastSuccessfulSyncIsRecorded() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let clock = ManualClock()
        _ = try makeVault(dir.vault, clock: clock)
        #expect(try open(dir.vault).vaultStatus?.lastSynced == nil)
        clock.advance(60)
        let first = clock.now
        try await sync(dir.vault, server, clock: clock)
        #expect(try open(dir.vault).vaultStatus?.lastSynced == first)
        clock.advance(60)
        try await using(dir.vault, clock: clock) { try $0.add(samplePassword()) }
        let second = clock.now
        #expect(try await sync(dir.vault, server, clock: clock).sent == 1)  // a sync that pushed
        #expect(try open(dir.vault).vaultStatus?.lastSynced == second)

        // A server that lies: the sync fails and the recorded time stays.
        clock.advance(60)
        server.tamper { json in
            LyingServerTests.editJSON(json) { $0["vault"] = Base64URL.encode(SecureRandom.bytes(16)) }
        }
        #expect(await errorCode { try await sync(dir.vault, server, clock: clock) } == .wrongVault)
        #expect(try open(dir.vault).vaultStatus?.lastSynced == second)
    }

    @Test func theServerStoresNoPlaintext() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, _, _) = try await enrolledPair(dir, transport: server)
        try await using(a) {
            try $0.add(samplePassword("secret-site.example", user: "secret-user", password: "secret-password-123"))
            try $0.add(try sampleCode())
        }
        try await sync(a, server)
        let stored = StoredServerState.encode(server.snapshot)
        let text = String(decoding: stored, as: UTF8.self)
        for secret in [
            "secret-site", "secret-user", "secret-password", "GEZDGNBV", "Example", "alice", "device A", "device B",
        ] {
            #expect(!text.contains(secret), "\(secret) is visible to the server")
        }
    }

    @Test func concurrentEditsOfDifferentFieldsBothSurvive() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let clock = ManualClock()
        let (a, b, _) = try await enrolledPair(dir, transport: server, clock: clock)
        let id = try await using(a, clock: clock) { try $0.add(samplePassword(), notes: "old note").id }
        try await sync(a, server, clock: clock)
        try await sync(b, server, clock: clock)
        // A changes the password; B, offline, changes the notes.
        clock.advance(5)
        try await using(a, clock: clock) { k in
            var item = k.item(id: id)!
            item.content = samplePassword(password: "new-password-A")
            try k.update(item)
        }
        clock.advance(5)
        try await using(b, clock: clock) { k in
            var item = k.item(id: id)!
            item.notes = "note from B"
            try k.update(item)
        }
        try await sync(a, server, clock: clock)
        let merged = try await sync(b, server, clock: clock)
        #expect(merged.conflictCopies == 0)
        try await sync(a, server, clock: clock)
        for device in [a, b] {
            let item = try open(device).item(id: id)!
            #expect(item.notes == "note from B")
            guard case .password(let p) = item.content else { Issue.record("kind changed"); continue }
            #expect(p.password == "new-password-A")
            #expect(try open(device).items.count == 1)
        }
    }

    @Test func concurrentEditsOfTheSameFieldKeepAConflictCopy() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let clock = ManualClock()
        let (a, b, _) = try await enrolledPair(dir, transport: server, clock: clock)
        let id = try await using(a, clock: clock) { try $0.add(samplePassword()).id }
        try await sync(a, server, clock: clock)
        try await sync(b, server, clock: clock)
        clock.advance(5)
        try await using(a, clock: clock) { k in
            var item = k.item(id: id)!
            item.content = samplePassword(password: "password-from-A")
            try k.update(item)
        }
        clock.advance(5)  // B's edit is later: B's value wins the field, A's is kept as a copy.
        try await using(b, clock: clock) { k in
            var item = k.item(id: id)!
            item.content = samplePassword(password: "password-from-B")
            try k.update(item)
        }
        try await sync(a, server, clock: clock)
        let merge = try await sync(b, server, clock: clock)
        #expect(merge.conflictCopies == 1)
        try await sync(a, server, clock: clock)
        for device in [a, b] {
            let keychain = try open(device)
            let passwords = keychain.items.compactMap { item -> (String, String?)? in
                if case .password(let p) = item.content { return (p.password, item.notes) }
                return nil
            }
            #expect(passwords.count == 2)
            #expect(
                keychain.item(id: id).map { if case .password(let p) = $0.content { p.password } else { "" } }
                    == "password-from-B")
            #expect(passwords.contains { $0.0 == "password-from-A" && $0.1?.contains("Conflict copy") == true })
        }
    }

    @Test func anEditBeatsAConcurrentDeletion() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let clock = ManualClock()
        let (a, b, _) = try await enrolledPair(dir, transport: server, clock: clock)
        let id = try await using(a, clock: clock) { try $0.add(samplePassword()).id }
        try await sync(a, server, clock: clock)
        try await sync(b, server, clock: clock)
        try await using(a, clock: clock) { try $0.delete(id) }
        try await using(b, clock: clock) { k in
            var item = k.item(id: id)!
            item.notes = "edited while A deleted it"
            try k.update(item)
        }
        try await sync(a, server, clock: clock)
        try await sync(b, server, clock: clock)
        try await sync(a, server, clock: clock)
        #expect(try open(a).item(id: id)?.notes == "edited while A deleted it")
        #expect(try open(b).item(id: id)?.notes == "edited while A deleted it")
        // And the other order: B deletes after A's edit reached it; the deletion stands everywhere.
        try await using(b, clock: clock) { try $0.delete(id) }
        try await sync(b, server, clock: clock)
        try await sync(a, server, clock: clock)
        #expect(try open(a).item(id: id) == nil)
    }

    @Test func aDeletionMeetingAnUnchangedItemDeletes() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        let id = try await using(a) { try $0.add(samplePassword()).id }
        try await sync(a, server)
        try await sync(b, server)
        try await using(b) { try $0.delete(id) }
        try await using(a) { try $0.delete(id) }
        try await sync(b, server)
        try await sync(a, server)
        #expect(try open(a).items.isEmpty)
        #expect(try open(b).items.isEmpty)
    }

    @Test func offlineEditsAcrossManyVersionsMerge() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let clock = ManualClock()
        let (a, b, _) = try await enrolledPair(dir, transport: server, clock: clock)
        // B is offline while A syncs ten times; B adds its own items meanwhile.
        for i in 0..<10 {
            clock.advance(1)
            try await using(a, clock: clock) { try $0.add(samplePassword("a\(i).example")) }
            try await sync(a, server, clock: clock)
        }
        try await using(b, clock: clock) { k in
            for i in 0..<3 { try k.add(samplePassword("b\(i).example")) }
        }
        try await sync(b, server, clock: clock)
        try await sync(a, server, clock: clock)
        #expect(try open(a).items.count == 13)
        #expect(try itemTitles(a) == itemTitles(b))
    }

    @Test func passkeyLastUsedMergesToTheLater() throws {
        let key = CredentialKey.generate(.es256)
        let passkey = Passkey(
            rpId: "example.com", credentialId: [1], userHandle: [1], userName: "a", displayName: "A", algorithm: .es256,
            privateKey: key.rawPrivateKey, lastUsed: Date(timeIntervalSince1970: 100))
        let base = try KeychainItem(
            id: ItemID(unchecked: Array(repeating: 1, count: 16)), content: .passkey(passkey),
            created: Date(timeIntervalSince1970: 1))
        var local = base
        var remote = base
        var lp = passkey
        lp.lastUsed = Date(timeIntervalSince1970: 300)
        var rp = passkey
        rp.lastUsed = Date(timeIntervalSince1970: 200)
        rp.userName = "renamed"
        local.content = .passkey(lp)
        local.modified = Date(timeIntervalSince1970: 300)
        remote.content = .passkey(rp)
        remote.modified = Date(timeIntervalSince1970: 200)
        let outcome = Merge.merge(base: base, local: local, remote: remote, now: Date())
        #expect(outcome.conflictCopy == nil)
        guard case .passkey(let merged) = outcome.merged.content else { Issue.record("kind"); return }
        #expect(merged.lastUsed == Date(timeIntervalSince1970: 300))
        #expect(merged.userName == "renamed")
    }

    @Test func siteSetsMergeAsSets() {
        #expect(Merge.mergeSets(["a", "b"], ["a", "b", "c"], ["b"]) == ["b", "c"])
        #expect(Merge.mergeSets(nil, ["a"], ["b"]) == ["a", "b"])
        #expect(Merge.mergeSets(["a"], ["a"], ["a", "d"]) == ["a", "d"])
    }

    @Test func hotpCountersNeverGoBack() throws {
        let uri = "otpauth://hotp/bank.example:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=5"
        let base = try KeychainItem(content: try sampleCode(uri), created: Date(timeIntervalSince1970: 1))
        var local = base
        var remote = base
        local.content = try sampleCode(uri.replacingOccurrences(of: "counter=5", with: "counter=9"))
        remote.content = try sampleCode(uri.replacingOccurrences(of: "counter=5", with: "counter=7"))
        remote.modified = Date(timeIntervalSince1970: 50)
        let outcome = Merge.merge(base: base, local: local, remote: remote, now: Date())
        #expect(outcome.conflictCopy == nil)
        guard case .codeGenerator(let c) = outcome.merged.content else { Issue.record("kind"); return }
        #expect(Merge.counter(c.key) == 9)
    }

    @Test func aPushThatLosesTheRacePullsAndRetries() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        try await using(a) { try $0.add(samplePassword("a.example")) }
        try await using(b) { try $0.add(samplePassword("b.example")) }
        // A's sync moves the server on; B's push then conflicts once, pulls A's item and pushes again.
        try await sync(a, server)
        let report = try await sync(b, server)
        #expect(report.received == 1 && report.sent == 1)
        try await sync(a, server)
        #expect(try itemTitles(a) == ["a.example — alice", "b.example — alice"])
    }

    @Test func removingADeviceRotatesTheKeyAndLocksItOut() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        try await using(a) { try $0.add(samplePassword()) }
        try await sync(a, server)
        try await sync(b, server)
        let bId = try open(b).deviceId
        try await using(a) { try $0.removeDevice(bId) }
        let report = try await sync(a, server)
        #expect(report.sent == 1)  // the item re-sealed under the new key
        #expect(try open(a).vaultStatus?.epoch == 2)
        #expect(try open(a).devices.count == 1)
        // B can no longer follow the vault: no wrap of the new key was made for it.
        #expect(await errorCode { try await sync(b, server) } == .deviceRemoved)
        // Every record on the server is now under epoch 2.
        for stored in server.snapshot.records.values {
            #expect(try SealedRecord(bytes: stored.record.blob).epoch == 2)
        }
        #expect(server.snapshot.wraps.allSatisfy { $0.device != bId })
        // A device cannot remove itself.
        let keychain = try open(a)
        #expect(errorCode { try keychain.removeDevice(keychain.deviceId) } == .invalidDeviceRemoval)
    }

    @Test func aRotationReachesTheRemainingDevices() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        // A third device joins, then A removes it: B must receive the new key from A.
        let c = dir.sub("c")
        let code: PairingCode
        do {
            let (joining, pairing) = try await Keychain.beginJoin(
                in: c, passphrase: passphrase, deviceName: "device C", transport: server, parameters: fastKDF,
                policy: fastPolicy)
            code = pairing
            withExtendedLifetime(joining) {}
        }
        try await using(a) { k in
            try await k.approveJoin(code: code, name: "device C", transport: server)
            _ = try await k.sync(with: server)
        }
        try await using(c) { _ = try await $0.completeJoin(transport: server) }
        try await sync(b, server)
        let cId = try open(c).deviceId
        try await using(a) { k in
            try k.removeDevice(cId)
            try k.add(samplePassword("after-rotation.example"))
        }
        try await sync(a, server)
        try await sync(b, server)
        #expect(try open(b).vaultStatus?.epoch == 2)
        #expect(try itemTitles(b) == ["after-rotation.example — alice"])
        #expect(await errorCode { try await sync(c, server) } == .deviceRemoved)
    }

    @Test func recoveryRestoresEverythingAfterAllDevicesAreLost() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let a = dir.sub("a")
        let recovery: RecoveryKey
        do {
            let (keychain, key) = try makeVault(a)
            recovery = key
            try keychain.add(samplePassword())
            try keychain.add(try sampleCode())
            _ = try await keychain.sync(with: server)
            try keychain.save()
        }
        try FileManager.default.removeItem(atPath: a.path)
        let restored = dir.sub("restored")
        let before = server.snapshot
        // A wrong (but well-formed) recovery key changes nothing, locally or on the server.
        #expect(
            await errorCode {
                _ = try await Keychain.recover(
                    in: restored, recoveryKey: RecoveryKey.generate(), passphrase: passphrase, deviceName: "new",
                    transport: server, parameters: fastKDF, policy: fastPolicy)
            } == .wrongRecoveryKey)
        #expect(!FileManager.default.fileExists(atPath: restored.vaultFile))
        #expect(server.snapshot == before)

        let (keychain, report) = try await Keychain.recover(
            in: restored, recoveryKey: try RecoveryKey(text: recovery.text), passphrase: "a new passphrase",
            deviceName: "new",
            transport: server, parameters: fastKDF, policy: fastPolicy)
        #expect(report.received == 2)
        #expect(keychain.items.count == 2)
        #expect(keychain.devices.map(\.name).sorted() == ["laptop", "new"])
        withExtendedLifetime(keychain) {}
    }

    @Test func recoveryStillWorksAfterARotation() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, recovery) = try await enrolledPair(dir, transport: server)
        let bId = try open(b).deviceId
        try await using(a) { k in
            try k.removeDevice(bId)
            try k.add(samplePassword())
        }
        try await sync(a, server)
        #expect(server.snapshot.recovery?.epoch == 2)
        try FileManager.default.removeItem(atPath: a.path)
        try FileManager.default.removeItem(atPath: b.path)
        let (keychain, _) = try await Keychain.recover(
            in: dir.sub("r"), recoveryKey: recovery, passphrase: passphrase, deviceName: "r", transport: server,
            parameters: fastKDF, policy: fastPolicy)
        #expect(keychain.items.count == 1)
        #expect(keychain.vaultStatus?.epoch == 2)
        withExtendedLifetime(keychain) {}
    }
}
