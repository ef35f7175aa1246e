import Foundation
import Testing
import WebAuthn

@testable @_spi(Fuzzing) import Keychain

@Suite struct WireFormatTests {
    static let id = Base64URL.encode(Array(repeating: 1, count: 16))
    static let key = Base64URL.encode(Array(repeating: 2, count: 32))

    @Test func messagesRoundTrip() throws {
        let record = WireRecord(id: Array(repeating: 1, count: 16), version: 3, blob: Array(repeating: 9, count: 80))
        let wrap = WireWrap(
            device: Array(repeating: 1, count: 16), sender: Array(repeating: 2, count: 16), epoch: 2,
            blob: Array(repeating: 3, count: 60))
        let pull = PullResponse(
            vault: Array(repeating: 5, count: 16), version: 42, manifest: Array(repeating: 6, count: 100),
            records: [record],
            wraps: [wrap], recovery: WireRecovery(epoch: 2, blob: Array(repeating: 7, count: 60)),
            devices: [WireDevice(id: Array(repeating: 1, count: 16), publicKey: Array(repeating: 2, count: 32))])
        #expect(try PullResponse(json: pull.json) == pull)
        let push = PushRequest(
            vault: Array(repeating: 5, count: 16), expectedVersion: 41, manifest: Array(repeating: 6, count: 100),
            records: [record], wraps: [wrap], recovery: WireRecovery(epoch: 2, blob: Array(repeating: 7, count: 60)),
            devices: [])
        #expect(try PushRequest(json: push.json) == push)
        #expect(try PushResponse(json: PushResponse(version: UInt64.max).json).version == UInt64.max)
        let join = JoinRequest(
            request: Array(repeating: 1, count: 16), device: Array(repeating: 2, count: 16),
            publicKey: Array(repeating: 3, count: 32))
        #expect(try JoinRequest(json: join.json) == join)
        let share = ShareMessage(
            id: Array(repeating: 1, count: 16), sender: Array(repeating: 2, count: 32),
            recipient: Array(repeating: 3, count: 32), blob: Array(repeating: 4, count: 50))
        #expect(try ShareMessage(json: share.json) == share)
        let empty = PullResponse(
            vault: nil, version: 0, manifest: nil, records: [], wraps: [], recovery: nil, devices: [])
        #expect(try PullResponse(json: empty.json) == empty)
        #expect(
            String(decoding: empty.json, as: UTF8.self)
                == "{\"devices\":[],\"format\":1,\"manifest\":null,\"records\":[],\"recovery\":null,\"vault\":null,\"version\":0,\"wraps\":[]}"
        )
    }

    @Test(arguments: [
        ("{}", KeychainError.Code.malformedMessage),
        ("[]", .malformedMessage),
        (
            "{\"format\":1,\"request\":\"\(id)\",\"device\":\"\(id)\",\"publicKey\":\"\(key)\",\"legacy\":true}",
            .malformedMessage
        ),
        ("{\"format\":2,\"request\":\"\(id)\",\"device\":\"\(id)\",\"publicKey\":\"\(key)\"}", .unsupportedFormat),
        ("{\"format\":\"1\",\"request\":\"\(id)\",\"device\":\"\(id)\",\"publicKey\":\"\(key)\"}", .malformedMessage),
        ("{\"format\":1,\"request\":\"\(id)=\",\"device\":\"\(id)\",\"publicKey\":\"\(key)\"}", .malformedMessage),
        ("{\"format\":1,\"request\":\"AAAA\",\"device\":\"\(id)\",\"publicKey\":\"\(key)\"}", .malformedMessage),
        ("{\"format\":1,\"request\":\"\(id)\",\"device\":\"\(id)\",\"publicKey\":\"a+b/\"}", .malformedMessage),
        ("{\"format\":1,\"request\":\"\(id)\",\"device\":\"\(id)\"}", .malformedMessage),
        ("{\"format\":1,\"request\":\"\(id)\",\"device\":\"\(id)\",\"publicKey\":null}", .malformedMessage),
    ])
    func joinRequestsAreReadStrictly(_ text: String, _ code: KeychainError.Code) {
        #expect(errorCode { _ = try JoinRequest(json: Array(text.utf8)) } == code)
    }

    @Test(arguments: [
        "{\"format\":1,\"vault\":null,\"version\":-1,\"manifest\":null,\"records\":[],\"wraps\":[],\"recovery\":null,\"devices\":[]}",
        "{\"format\":1,\"vault\":null,\"version\":1.5,\"manifest\":null,\"records\":[],\"wraps\":[],\"recovery\":null,\"devices\":[]}",
        "{\"format\":1,\"vault\":null,\"version\":true,\"manifest\":null,\"records\":[],\"wraps\":[],\"recovery\":null,\"devices\":[]}",
        "{\"format\":1,\"vault\":null,\"version\":0,\"manifest\":null,\"records\":[{\"id\":\"\(id)\",\"version\":1,\"blob\":\"AA\"}],\"wraps\":[],\"recovery\":null,\"devices\":[]}",
        "{\"format\":1,\"vault\":null,\"version\":0,\"manifest\":null,\"records\":{},\"wraps\":[],\"recovery\":null,\"devices\":[]}",
        "{\"format\":1,\"vault\":null,\"version\":0,\"manifest\":null,\"records\":[],\"wraps\":[],\"recovery\":{\"epoch\":1,\"blob\":\"AA\",\"kdf\":1},\"devices\":[]}",
    ])
    func pullAnswersAreReadStrictly(_ text: String) {
        #expect(errorCode { _ = try PullResponse(json: Array(text.utf8)) } == .malformedMessage)
    }
}

/// Replays the fuzzers' regression corpus (FuzzTesting/Corpus/FuzzVaultFile, FuzzSyncMessage,
/// FuzzPublicSuffixList, FuzzCXF, FuzzNativeMessage) through the same entry points without sanitizers, so a crash found once stays
/// fixed.
@Suite struct KeychainFuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FuzzTesting/Corpus")

    static func inputs(_ target: String) -> [[UInt8]] {
        let dir = root.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().compactMap {
            FileManager.default.contents(atPath: dir.appendingPathComponent($0).path).map { Array($0) }
        }
    }

    @Test(arguments: [
        "FuzzVaultFile", "FuzzSyncMessage", "FuzzPublicSuffixList", "FuzzCXF", "FuzzNativeMessage", "FuzzDeflate",
        "FuzzBitwarden", "FuzzKeePassXC",
    ])
    func corpus(_ target: String) {
        let inputs = Self.inputs(target)
        #expect(inputs.count >= 2, "no corpus for \(target)")
        for input in inputs {
            switch target {
            case "FuzzVaultFile": KeychainFuzzing.vaultFile(input)
            case "FuzzSyncMessage": KeychainFuzzing.syncMessage(input)
            case "FuzzPublicSuffixList": KeychainFuzzing.publicSuffixList(input)
            case "FuzzNativeMessage": KeychainFuzzing.nativeMessage(input)
            case "FuzzDeflate": KeychainFuzzing.deflate(input)
            case "FuzzBitwarden": KeychainFuzzing.bitwarden(input)
            case "FuzzKeePassXC": KeychainFuzzing.keePassXC(input)
            default: KeychainFuzzing.cxf(input)
            }
        }
    }

    /// The seeds are what they claim to be: each parses.
    @Test func seedsParse() throws {
        let vault = Self.inputs("FuzzVaultFile")
        #expect(vault.contains { (try? VaultFile(bytes: $0)) != nil })
        #expect(vault.contains { (try? SealedRecord(bytes: $0)) != nil })
        #expect(vault.contains { (try? Session(bytes: $0)) != nil })
        #expect(vault.contains { (try? VaultBody.decode($0)) != nil })
        let messages = Self.inputs("FuzzSyncMessage")
        #expect(messages.contains { (try? PullResponse(json: $0)) != nil })
        #expect(messages.contains { (try? PushRequest(json: $0)) != nil })
        #expect(messages.contains { (try? ShareMessage(json: $0)) != nil })
    }
}
