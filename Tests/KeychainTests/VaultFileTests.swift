import Crypto
import Foundation
import Testing

@testable import Keychain

@Suite struct VaultFileTests {
    @Test func createOpenAndSave() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        do {
            let (keychain, _) = try makeVault(dir.vault, clock: clock)
            try keychain.add(samplePassword())
            try keychain.save()
        }
        let keychain = try open(dir.vault, clock: clock)
        #expect(keychain.items.count == 1)
        #expect(keychain.userVerified)
        #expect(dir.files(in: dir.vault) == [".lock", "vault"])
        let mode = try FileManager.default.attributesOfItem(atPath: dir.vault.vaultFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let dirMode = try FileManager.default.attributesOfItem(atPath: dir.vault.path)[.posixPermissions] as? Int
        #expect(dirMode == 0o700)
    }

    @Test func initRefusesToOverwrite() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let before = readBytes(dir.vault.vaultFile)
        #expect(errorCode { _ = try makeVault(dir.vault) } == .vaultExists)
        #expect(readBytes(dir.vault.vaultFile) == before)
    }

    @Test func wrongPassphraseChangesNothing() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let before = readBytes(dir.vault.vaultFile)
        #expect(errorCode { _ = try open(dir.vault, passphrase: "wrong passphrase") } == .wrongPassphrase)
        #expect(errorCode { _ = try open(dir.vault, passphrase: nil) } == .locked)
        #expect(readBytes(dir.vault.vaultFile) == before)
    }

    @Test func noVault() {
        let dir = TemporaryDirectory()
        #expect(errorCode { _ = try open(dir.vault) } == .vaultNotFound)
    }

    @Test func passphrasesAreNormalisedAndChecked() throws {
        let dir = TemporaryDirectory()
        // "é" precomposed and decomposed are the same passphrase.
        _ = try Keychain.create(
            in: dir.vault, passphrase: "caf\u{E9} caf\u{E9} caf\u{E9}", deviceName: "d", parameters: fastKDF,
            policy: fastPolicy)
        _ = try open(dir.vault, passphrase: "cafe\u{301} cafe\u{301} cafe\u{301}")
        let other = TemporaryDirectory()
        #expect(
            errorCode {
                _ = try Keychain.create(
                    in: other.vault, passphrase: "short", deviceName: "d", parameters: fastKDF, policy: fastPolicy)
            } == .passphraseTooShort)
        #expect(!FileManager.default.fileExists(atPath: other.vault.vaultFile))
    }

    /// Every truncation of a valid file is a clear error, never a crash or a partial read, and the file is left as
    /// it was.
    @Test func truncatedFilesAreRefused() throws {
        let dir = TemporaryDirectory()
        do {
            let (keychain, _) = try makeVault(dir.vault)
            try keychain.add(samplePassword())
            try keychain.save()
        }
        let full = readBytes(dir.vault.vaultFile)!
        for length in stride(from: 0, to: full.count, by: max(1, full.count / 97)) + [full.count - 1] {
            let truncated = Array(full.prefix(length))
            writeBytes(truncated, dir.vault.vaultFile)
            let code = errorCode { _ = try open(dir.vault) }
            #expect(
                [.truncatedFile, .notAVaultFile, .corruptFile].contains(code),
                "length \(length): \(String(describing: code))")
            #expect(readBytes(dir.vault.vaultFile) == truncated)
        }
    }

    @Test func foreignFilesAreNotVaults() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.vault.path, withIntermediateDirectories: true)
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + Array(repeating: 0, count: 200)
        for foreign in [png, Array("{\"format\":1}".utf8), Array(repeating: 0, count: 500)] {
            writeBytes(foreign, dir.vault.vaultFile)
            #expect(errorCode { _ = try open(dir.vault) } == .notAVaultFile)
            #expect(readBytes(dir.vault.vaultFile) == foreign)
        }
    }

    @Test func otherFormatVersionsAreRefused() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        var bytes = readBytes(dir.vault.vaultFile)!
        for version: UInt8 in [0, 2, 255] {
            bytes[8] = version
            writeBytes(bytes, dir.vault.vaultFile)
            #expect(errorCode { _ = try open(dir.vault) } == .unsupportedFormatVersion)
        }
    }

    /// A file claiming cheaper scrypt parameters than the client's minimum is refused before any key is derived,
    /// whatever else it holds; parameters above the maximum are refused as a denial of service.
    @Test func kdfDowngradeAndExcessAreRefused() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let original = readBytes(dir.vault.vaultFile)!
        var weak = original
        weak[26] = 9  // log2 N below the minimum of 10
        writeBytes(weak, dir.vault.vaultFile)
        #expect(errorCode { _ = try open(dir.vault) } == .weakKDFParameters)
        var weakR = original
        weakR[30] = 1  // r = 1
        writeBytes(weakR, dir.vault.vaultFile)
        #expect(errorCode { _ = try open(dir.vault) } == .weakKDFParameters)
        var costly = original
        costly[26] = 30
        writeBytes(costly, dir.vault.vaultFile)
        #expect(errorCode { _ = try open(dir.vault) } == .kdfParametersTooCostly)
        // Raising N within bounds changes the derived key, and the header is authenticated: the file fails to open.
        var raised = original
        raised[26] = 11
        writeBytes(raised, dir.vault.vaultFile)
        #expect(errorCode { _ = try open(dir.vault) } == .wrongPassphrase)
        // The command line's standard policy refuses this test vault's own N = 2^10.
        writeBytes(original, dir.vault.vaultFile)
        #expect(
            errorCode { _ = try Keychain.open(dir.vault, passphrase: passphrase, policy: .standard) }
                == .weakKDFParameters)
    }

    @Test func standardParametersWork() throws {
        let dir = TemporaryDirectory()
        do {
            _ = try Keychain.create(in: dir.vault, passphrase: passphrase, deviceName: "d")
        }
        let keychain = try Keychain.open(dir.vault, passphrase: passphrase)
        #expect(keychain.kdfParameters == .default)
        #expect(ScryptParameters.default.memory == 128 * 1024 * 1024)
    }

    @Test func flippedBytesAreCorruption() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let original = readBytes(dir.vault.vaultFile)!
        for offset in [9, 40, 70, 100, 127, 135, original.count - 1] {
            var bytes = original
            bytes[offset] ^= 0x40
            writeBytes(bytes, dir.vault.vaultFile)
            let code = errorCode { _ = try open(dir.vault) }
            #expect([.wrongPassphrase, .corruptFile, .truncatedFile].contains(code), "offset \(offset)")
        }
        writeBytes(original + [0], dir.vault.vaultFile)
        #expect(errorCode { _ = try open(dir.vault) } == .corruptFile)
    }

    @Test func savesLeaveNoTemporaryFiles() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        for i in 0..<5 {
            try keychain.add(samplePassword("s\(i).example"))
            try keychain.save()
        }
        #expect(dir.files(in: dir.vault) == [".lock", "vault"])
    }

    @Test func changingThePassphrase() throws {
        let dir = TemporaryDirectory()
        do {
            let (keychain, _) = try makeVault(dir.vault)
            try keychain.add(samplePassword())
            try keychain.changePassphrase(to: "a new passphrase", parameters: fastKDF, policy: fastPolicy)
        }
        #expect(errorCode { _ = try open(dir.vault) } == .wrongPassphrase)
        #expect(try open(dir.vault, passphrase: "a new passphrase").items.count == 1)
    }

    @Test func directoryResolution() throws {
        #expect(try VaultDirectory.resolve(explicit: "/x/", environment: [:]).path == "/x")
        #expect(try VaultDirectory.resolve(explicit: nil, environment: ["SESAME_KEYCHAIN_DIR": "/k"]).path == "/k")
        #expect(
            try VaultDirectory.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]).path
                == "/d/sesame-keychain")
        #expect(
            try VaultDirectory.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "rel", "HOME": "/h"]).path
                == "/h/.local/share/sesame-keychain")
        #expect(errorCode { _ = try VaultDirectory.resolve(explicit: nil, environment: [:]) } == .invalidDirectory)
    }
}

@Suite struct SessionTests {
    @Test func unlockThenOpenWithoutPassphraseUntilIdle() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        _ = try makeVault(dir.vault, clock: clock)
        let status = try Keychain.unlock(
            dir.vault, passphrase: passphrase, idle: 600, verifyWindow: 120, policy: fastPolicy, clock: clock)
        #expect(status.userVerified)
        let mode = try FileManager.default.attributesOfItem(atPath: dir.vault.sessionFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        clock.advance(60)
        #expect(try open(dir.vault, passphrase: nil, clock: clock).userVerified)
        clock.advance(100)  // 160 s after unlock: past the verification window, within the idle time
        #expect(try open(dir.vault, passphrase: nil, clock: clock).userVerified == false)
        clock.advance(599)  // each use moved "last used" forward
        #expect(try open(dir.vault, passphrase: nil, clock: clock).userVerified == false)
        clock.advance(601)  // idle for longer than 600 s
        #expect(errorCode { _ = try open(dir.vault, passphrase: nil, clock: clock) } == .locked)
        #expect(!FileManager.default.fileExists(atPath: dir.vault.sessionFile))
    }

    @Test func aPassphraseRestoresUserVerification() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        _ = try makeVault(dir.vault, clock: clock)
        _ = try Keychain.unlock(
            dir.vault, passphrase: passphrase, idle: 600, verifyWindow: 10, policy: fastPolicy, clock: clock)
        clock.advance(30)
        #expect(try open(dir.vault, passphrase: nil, clock: clock).userVerified == false)
        #expect(try open(dir.vault, passphrase: passphrase, clock: clock).userVerified)
    }

    @Test func lockEndsTheSession() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        #expect(try Keychain.sessionStatus(dir.vault) != nil)
        try Keychain.lock(dir.vault)
        #expect(try Keychain.sessionStatus(dir.vault) == nil)
        #expect(errorCode { _ = try open(dir.vault, passphrase: nil) } == .locked)
    }

    @Test func wrongPassphraseStartsNoSession() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        #expect(
            errorCode { _ = try Keychain.unlock(dir.vault, passphrase: "nope nope nope", policy: fastPolicy) }
                == .wrongPassphrase)
        #expect(!FileManager.default.fileExists(atPath: dir.vault.sessionFile))
    }

    @Test func foreignOrCorruptSessionsAreRemoved() throws {
        let dir = TemporaryDirectory()
        let other = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        _ = try makeVault(other.vault)
        _ = try Keychain.unlock(other.vault, passphrase: passphrase, policy: fastPolicy)
        // A session of another vault file does not open this one.
        writeBytes(readBytes(other.vault.sessionFile)!, dir.vault.sessionFile)
        #expect(errorCode { _ = try open(dir.vault, passphrase: nil) } == .locked)
        #expect(!FileManager.default.fileExists(atPath: dir.vault.sessionFile))
        writeBytes([1, 2, 3], dir.vault.sessionFile)
        #expect(errorCode { _ = try open(dir.vault, passphrase: nil) } == .locked)
        #expect(!FileManager.default.fileExists(atPath: dir.vault.sessionFile))
    }

    /// A session file whose times lie outside years 1 to 9999 is not a session (found by FuzzVaultFile).
    @Test func sessionTimesOutOfRangeAreRefused() throws {
        let session = Session(
            fileId: Array(repeating: 1, count: 16), fileKey: SymmetricKey(size: .bits256),
            unlockedAt: Date(timeIntervalSince1970: 1_800_000_000), idle: 600, verifyWindow: 300)
        #expect(try Session(bytes: session.bytes).bytes == session.bytes)
        for offset in [57, 65] {
            var bytes = session.bytes
            bytes.replaceSubrange(offset..<offset + 8, with: [0x7f, 0xff, 0xff, 0xfe, 0x5d, 0xf2, 0x17, 0xf8])
            #expect(errorCode { _ = try Session(bytes: bytes) } == .sessionInvalid)
        }
    }

    @Test func aClockSetBackEndsTheSession() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        _ = try makeVault(dir.vault, clock: clock)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy, clock: clock)
        clock.advance(-3600)
        #expect(errorCode { _ = try open(dir.vault, passphrase: nil, clock: clock) } == .locked)
    }
}
