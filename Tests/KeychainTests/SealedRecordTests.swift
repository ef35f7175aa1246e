import Crypto
import Foundation
import Testing

@testable import Keychain

@Suite struct SealedRecordTests {
    let vault = Array(repeating: UInt8(0xaa), count: 16)
    let item = Array(repeating: UInt8(0x11), count: 16)
    let key = VaultKey.random(epoch: 3)

    @Test func sealsAndOpens() throws {
        let record = try SealedRecord.seal(
            [1, 2, 3], type: .item, vaultId: vault, recordId: item, version: 5, key: key)
        let parsed = try SealedRecord(bytes: record.bytes)
        try parsed.expect(type: .item, vaultId: vault, recordId: item, version: 5)
        #expect(try parsed.open(with: key) == [1, 2, 3])
        #expect(parsed.epoch == 3)
        #expect(record.bytes.count == SealedRecord.overhead + 3)
    }

    /// Flipping any byte of a record (header, nonce, ciphertext, tag) makes it fail: the header is associated data.
    @Test func everyByteIsAuthenticated() throws {
        let record = try SealedRecord.seal(
            Array("secret".utf8), type: .item, vaultId: vault, recordId: item, version: 5, key: key)
        for i in record.bytes.indices {
            var bytes = record.bytes
            bytes[i] ^= 0x01
            let code = errorCode {
                let parsed = try SealedRecord(bytes: bytes)
                _ = try parsed.open(with: key)
            }
            #expect(
                [.recordAuthenticationFailed, .unsupportedFormat, .malformedRecord, .recordMismatch].contains(code))
        }
    }

    @Test func headerFieldsAreBoundToTheirPlace() throws {
        let record = try SealedRecord.seal([1], type: .item, vaultId: vault, recordId: item, version: 5, key: key)
        let other = Array(repeating: UInt8(0x22), count: 16)
        #expect(
            errorCode { try record.expect(type: .item, vaultId: vault, recordId: other, version: 5) } == .recordMismatch
        )
        #expect(
            errorCode { try record.expect(type: .item, vaultId: other, recordId: item, version: 5) } == .recordMismatch)
        #expect(
            errorCode { try record.expect(type: .item, vaultId: vault, recordId: item, version: 4) } == .recordMismatch)
        #expect(
            errorCode { try record.expect(type: .tombstone, vaultId: vault, recordId: item, version: 5) }
                == .recordMismatch)
        #expect(errorCode { _ = try record.open(with: VaultKey.random(epoch: 3)) } == .recordAuthenticationFailed)
        #expect(errorCode { _ = try record.open(with: VaultKey.random(epoch: 4)) } == .recordMismatch)
    }

    @Test func otherFormatsAreRefusedNotTried() throws {
        var bytes = try SealedRecord.seal([1], type: .item, vaultId: vault, recordId: item, version: 1, key: key).bytes
        bytes[0] = 0
        #expect(errorCode { _ = try SealedRecord(bytes: bytes) } == .unsupportedFormat)
        bytes[0] = 2
        #expect(errorCode { _ = try SealedRecord(bytes: bytes) } == .unsupportedFormat)
        let valid = try SealedRecord.seal([1], type: .item, vaultId: vault, recordId: item, version: 1, key: key).bytes
        #expect(errorCode { _ = try SealedRecord(bytes: Array(valid.prefix(60))) } == .malformedRecord)
        #expect(errorCode { _ = try SealedRecord(bytes: []) } == .malformedRecord)
    }

    @Test func hpkeBoxesBindModeAndSuite() throws {
        let recipient = DeviceKey.generate()
        let sender = DeviceKey.generate()
        let info = Array("info".utf8)
        let box = try HPKEBox.seal([7, 7], to: recipient.privateKey.publicKey, info: info, sender: sender.privateKey)
        #expect(
            try box.open(with: recipient.privateKey, info: info, expecting: .auth, sender: sender.privateKey.publicKey)
                == [7, 7])
        // Another sender, another info, or another expected mode fail.
        #expect(
            errorCode {
                _ = try box.open(
                    with: recipient.privateKey, info: info, expecting: .auth,
                    sender: DeviceKey.generate().privateKey.publicKey)
            } == .recordAuthenticationFailed)
        #expect(
            errorCode {
                _ = try box.open(
                    with: recipient.privateKey, info: [1], expecting: .auth, sender: sender.privateKey.publicKey)
            } == .recordAuthenticationFailed)
        #expect(
            errorCode { _ = try box.open(with: recipient.privateKey, info: info, expecting: .base) }
                == .recordAuthenticationFailed)
        // A message naming another suite is refused before any decryption.
        var bytes = box.bytes
        bytes[3] = 2
        #expect(errorCode { _ = try HPKEBox(bytes: bytes) } == .unsupportedFormat)
    }
}
