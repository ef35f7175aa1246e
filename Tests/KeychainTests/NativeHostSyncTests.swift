import Foundation
import Testing

@testable import Keychain

/// The toolbar window's sync requests (`syncStatus`, `syncNow`, `approveDevice`) through the native host, over an
/// in-memory sync server: the same library calls as `sesame keychain sync`, `devices` and `approve`.
@Suite struct NativeHostSyncTests {
    func host(_ directory: VaultDirectory, transport: (any SyncTransport)?) -> NativeHost {
        let sync = transport.map { transport in
            NativeHost.SyncControl { () throws(KeychainError) -> any SyncTransport in transport }
        }
        return NativeHost(suffixes: suffixes, sync: sync) { () throws(KeychainError) -> Keychain in
            try open(directory)
        }
    }

    func ask(_ host: NativeHost, _ members: [String: Any]) async -> [String: Any] {
        let bytes = await host.replyWithSync(to: Array(try! JSONSerialization.data(withJSONObject: members)))
        return try! JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
    }

    func result(_ reply: [String: Any]) -> [String: Any]? { reply["result"] as? [String: Any] }
    func code(_ reply: [String: Any]) -> String? { (reply["error"] as? [String: String])?["code"] }

    @Test func statusSyncNowAndApprovingADevice() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        let hostA = host(a, transport: server)
        let status = result(await ask(hostA, ["id": 1, "kind": "syncStatus", "origin": ""]))
        #expect(status?["configured"] as? Bool == true)
        let devices = status?["devices"] as? [[String: Any]] ?? []
        #expect(devices.map { $0["name"] as? String }.compactMap { $0 }.sorted() == ["device A", "device B"])
        #expect(devices.filter { $0["thisDevice"] as? Bool == true }.map { $0["name"] as? String } == ["device A"])

        // Sync now: A sends what it added, B receives it.
        try await using(a) { try $0.add(samplePassword()) }
        #expect(result(await ask(hostA, ["id": 2, "kind": "syncNow", "origin": ""]))?["sent"] as? Int == 1)
        #expect(
            result(await ask(host(b, transport: server), ["id": 3, "kind": "syncNow", "origin": ""]))?["received"]
                as? Int == 1)
        #expect(try itemTitles(b) == ["example.com — alice"])

        // A third device joins; A approves it from the window with the code it shows.
        let c = dir.sub("c")
        let pairing: PairingCode
        do {
            let (joining, shown) = try await Keychain.beginJoin(
                in: c, passphrase: passphrase, deviceName: "device C", transport: server, parameters: fastKDF,
                policy: fastPolicy, clock: ManualClock())
            pairing = shown
            withExtendedLifetime(joining) {}
        }
        let approved = result(
            await ask(
                hostA,
                ["id": 4, "kind": "approveDevice", "origin": "", "pairingCode": pairing.text, "deviceName": "tablet"]))
        #expect(approved?["name"] as? String == "tablet")
        try await using(c) { keychain in _ = try await keychain.completeJoin(transport: server) }
        #expect(try itemTitles(c) == ["example.com — alice"])

        // Removing it from the window: out of the list, the key rotated at the sync that follows; this device
        // cannot remove itself.
        let listed =
            result(await ask(hostA, ["id": 6, "kind": "syncStatus", "origin": ""]))?["devices"]
            as? [[String: Any]] ?? []
        let tablet = listed.first { $0["name"] as? String == "tablet" }?["deviceId"] as? String
        let mine = listed.first { $0["thisDevice"] as? Bool == true }?["deviceId"] as? String
        let removed = result(
            await ask(hostA, ["id": 7, "kind": "removeDevice", "origin": "", "deviceId": tablet ?? ""]))
        #expect(removed?["removed"] as? String == "tablet")
        #expect(removed?["version"] as? Int != nil)
        let after = result(await ask(hostA, ["id": 8, "kind": "syncStatus", "origin": ""]))?["devices"] as? [Any]
        #expect(after?.count == 2)
        #expect(
            code(await ask(hostA, ["id": 9, "kind": "removeDevice", "origin": "", "deviceId": mine ?? ""]))
                == "invalidDeviceRemoval")
        #expect(await errorCode { _ = try await sync(c, server) } == .deviceRemoved)

        // A code that is not one, and one no device shows.
        let malformed = await ask(hostA, ["id": 5, "kind": "approveDevice", "origin": "", "pairingCode": "nope"])
        #expect(code(malformed) == "pairingCodeMalformed")
    }

    /// Refusing a joining device from the window: the waiting list shows the start of the code it shows, Refuse
    /// drops its request, and the device's next try ends its join (`joinRefused`) with nothing of the vault; the
    /// approving vault is byte-identical, and refusing again (or a request no one made) says no device waits.
    @Test func refusingAJoiningDeviceEndsItsJoin() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, _, _) = try await enrolledPair(dir, transport: server)
        let hostA = host(a, transport: server)
        #expect(
            (result(await ask(hostA, ["id": 1, "kind": "waitingDevices", "origin": ""]))?["waiting"] as? [Any])?.isEmpty
                == true)

        let c = dir.sub("c")
        let pairing: PairingCode
        do {
            let (joining, shown) = try await Keychain.beginJoin(
                in: c, passphrase: passphrase, deviceName: "device C", transport: server, parameters: fastKDF,
                policy: fastPolicy, clock: ManualClock())
            pairing = shown
            withExtendedLifetime(joining) {}
        }
        // Still waiting: C's next try says so and keeps its join.
        #expect(
            await errorCode { try await using(c) { _ = try await $0.completeJoin(transport: server) } } == .joinPending)

        let waiting =
            result(await ask(hostA, ["id": 2, "kind": "waitingDevices", "origin": ""]))?["waiting"]
            as? [[String: Any]] ?? []
        #expect(waiting.count == 1)
        let codeStart = waiting.first?["codeStart"] as? String
        #expect(codeStart == String(pairing.text.prefix(14)))
        #expect(codeStart?.count == 14 && pairing.text.hasPrefix(codeStart ?? "-"))
        let request = waiting.first?["joinRequest"] as? String ?? ""

        let vaultBefore = readBytes(a.vaultFile)
        let refused = result(await ask(hostA, ["id": 3, "kind": "refuseDevice", "origin": "", "joinRequest": request]))
        #expect(refused?["refused"] as? String == request)
        #expect(readBytes(a.vaultFile) == vaultBefore)
        #expect(
            (result(await ask(hostA, ["id": 4, "kind": "waitingDevices", "origin": ""]))?["waiting"] as? [Any])?.isEmpty
                == true)
        #expect(
            code(await ask(hostA, ["id": 5, "kind": "refuseDevice", "origin": "", "joinRequest": request]))
                == "pairingCodeMismatch")
        #expect(
            code(await ask(hostA, ["id": 6, "kind": "refuseDevice", "origin": "", "joinRequest": "short"]))
                == "malformedNativeMessage")

        // C's next try: the join is over, and stays over (no code to show, nothing of the vault).
        #expect(
            await errorCode { try await using(c) { _ = try await $0.completeJoin(transport: server) } } == .joinRefused)
        let ended = try open(c)
        #expect(ended.pendingPairingCode == nil)
        #expect(ended.items.isEmpty)
        // The code it showed can no longer let it in.
        #expect(
            code(
                await ask(
                    hostA, ["id": 7, "kind": "approveDevice", "origin": "", "pairingCode": pairing.text]))
                == "pairingCodeMismatch")
    }

    /// An approval that lands after the joining device found no approval but before it read the waiting list is
    /// taken, not mistaken for a refusal (the approval is read again after the list).
    @Test func anApprovalBetweenTheTwoReadsIsNotARefusal() async throws {
        struct ApprovesDuringTheList: SyncTransport {
            let inner: InMemorySyncTransport
            let approve: @Sendable () async throws -> Void
            func pull(since v: UInt64, device: [UInt8]) async throws(KeychainError) -> PullResponse {
                try await inner.pull(since: v, device: device)
            }
            func push(_ r: PushRequest) async throws(KeychainError) -> PushResponse { try await inner.push(r) }
            func postJoinRequest(_ r: JoinRequest) async throws(KeychainError) { try await inner.postJoinRequest(r) }
            func joinRequests() async throws(KeychainError) -> [JoinRequest] {
                do { try await approve() } catch { Issue.record(error) }
                return try await inner.joinRequests()
            }
            func postJoinApproval(_ a: JoinApproval) async throws(KeychainError) { try await inner.postJoinApproval(a) }
            func joinApproval(request: [UInt8]) async throws(KeychainError) -> JoinApproval? {
                try await inner.joinApproval(request: request)
            }
            func refuseJoin(request: [UInt8]) async throws(KeychainError) {
                try await inner.refuseJoin(request: request)
            }
            func postShare(_ s: ShareMessage) async throws(KeychainError) {}
            func shares(recipient: [UInt8]) async throws(KeychainError) -> [ShareMessage] { [] }
            func shares(sender: [UInt8]) async throws(KeychainError) -> [ShareMessage] { [] }
            func revokeShare(id: [UInt8], sender: [UInt8]) async throws(KeychainError) {}
        }
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, _, _) = try await enrolledPair(dir, transport: server)
        let c = dir.sub("c")
        let pairing: PairingCode
        do {
            let (joining, shown) = try await Keychain.beginJoin(
                in: c, passphrase: passphrase, deviceName: "device C", transport: server, parameters: fastKDF,
                policy: fastPolicy, clock: ManualClock())
            pairing = shown
            withExtendedLifetime(joining) {}
        }
        let racing = ApprovesDuringTheList(inner: server) {
            try await using(a) { keychain in
                try await keychain.approveJoin(code: pairing, name: "device C", transport: server)
                _ = try await keychain.sync(with: server)
            }
        }
        try await using(c) { _ = try await $0.completeJoin(transport: racing) }
        #expect(try open(c).pendingPairingCode == nil)
    }

    @Test func withoutASyncPlaceTheRequestsSaySo() async throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = host(dir.vault, transport: nil)
        #expect(code(await ask(host, ["id": 1, "kind": "syncNow", "origin": ""])) == "syncNotConfigured")
        #expect(
            result(await ask(host, ["id": 2, "kind": "syncStatus", "origin": ""]))?["configured"] as? Bool == false)
        // The synchronous entry never reaches the network.
        let reply = host.reply(to: Array(#"{"id": 3, "kind": "syncNow", "origin": ""}"#.utf8))
        #expect(String(decoding: reply, as: UTF8.self).contains("syncNotConfigured"))
        #expect(
            code(await ask(host, ["id": 4, "kind": "approveDevice", "origin": ""])) == "malformedNativeMessage")
        #expect(code(await ask(host, ["id": 5, "kind": "waitingDevices", "origin": ""])) == "syncNotConfigured")
    }
}
