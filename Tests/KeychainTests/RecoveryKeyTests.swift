import Foundation
import Testing

@testable import Keychain

@Suite struct RecoveryKeyTests {
    @Test func textRoundTripsAndIsGrouped() throws {
        let key = RecoveryKey.generate()
        let text = key.text
        let groups = text.split(separator: "-")
        #expect(groups.count == 11)
        #expect(groups.allSatisfy { $0.count == 5 })
        let read = try RecoveryKey(text: text)
        #expect(read.secret == key.secret)
        // Case, separators and the look-alike letters do not matter.
        let sloppy = text.lowercased().replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "0", with: "o")
            .replacingOccurrences(of: "1", with: "l")
        #expect(try RecoveryKey(text: sloppy).secret == key.secret)
    }

    @Test func everySingleCharacterTypoIsCaughtByTheChecksum() throws {
        let key = RecoveryKey.generate()
        let chars = Array(key.text.replacingOccurrences(of: "-", with: ""))
        var caught = 0
        for i in chars.indices {
            var typo = chars
            let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
            typo[i] = alphabet[(alphabet.firstIndex(of: chars[i])! + 1) % alphabet.count]
            let code = errorCode { _ = try RecoveryKey(text: String(typo)) }
            // The last character's unused padding bits can absorb some changes; every other typo is a checksum error.
            if code == .recoveryKeyChecksum { caught += 1 } else { #expect(code == .recoveryKeyMalformed) }
        }
        #expect(caught >= chars.count - 1)
    }

    @Test(arguments: ["", "ABCDE", "U" + String(repeating: "0", count: 54), String(repeating: "A", count: 56)])
    func malformedTextIsMalformed(_ text: String) {
        #expect(errorCode { _ = try RecoveryKey(text: text) } == .recoveryKeyMalformed)
    }

    @Test func derivedKeysAreStableAndDistinct() {
        let key = RecoveryKey(secret: Array(repeating: 1, count: 32))
        let again = RecoveryKey(secret: Array(repeating: 1, count: 32))
        let other = RecoveryKey(secret: Array(repeating: 2, count: 32))
        #expect(key.derived.publicInfo == again.derived.publicInfo)
        #expect(key.derived.publicInfo.publicKey != other.derived.publicInfo.publicKey)
        #expect(key.derived.publicInfo.psk != key.derived.publicInfo.publicKey)
        #expect(key.description == "RecoveryKey(redacted)")
    }
}

@Suite struct PairingCodeTests {
    @Test func roundTripAndMatching() throws {
        let device = DeviceKey.generate()
        let secret = PairingCode.newSecret()
        let code = PairingCode(publicKey: device.publicKey, secret: secret)
        #expect(code.text.split(separator: "-").map(\.count) == [5, 5, 5, 5])
        let typed = try PairingCode(text: code.text.lowercased())
        #expect(typed == code)
        #expect(typed.matches(publicKey: device.publicKey))
        #expect(!typed.matches(publicKey: DeviceKey.generate().publicKey))
        let scanned = try PairingCode(text: code.qrPayload)
        #expect(scanned == code)
    }

    @Test(arguments: ["", "12345", "SESAME-KEYCHAIN-JOIN:", "UUUUU-UUUUU-UUUUU-UUUUU", "00000-00000-00000-0000000"])
    func malformedCodes(_ text: String) {
        #expect(errorCode { _ = try PairingCode(text: text) } == .pairingCodeMalformed)
    }

    @Test func fingerprintTextMatches() {
        let key = DeviceKey.generate()
        let fingerprint = key.fingerprint
        #expect(fingerprint.description.split(separator: "-").map(\.count) == [4, 4, 4, 4])
        #expect(fingerprint.matches(fingerprint.description.lowercased()))
        #expect(!fingerprint.matches(DeviceKey.generate().fingerprint.description))
        #expect(!fingerprint.matches("not a fingerprint"))
    }
}
