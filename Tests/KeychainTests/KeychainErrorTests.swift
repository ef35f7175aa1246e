import Testing

@testable import Keychain

@Suite struct KeychainErrorTests {
    @Test func equalityIsByCode() {
        let a = KeychainError(.locked, reason: "one")
        let b = KeychainError(.locked, reason: "two")
        #expect(a == b)
        #expect(a != KeychainError(.wrongPassphrase, reason: "one"))
        #expect(Set([a, b]).count == 1)
    }

    @Test func descriptionNamesCodeAndPlace() {
        let error = KeychainError(.rollbackDetected, reason: "old version")
        #expect(error.description.hasPrefix("KeychainError.rollbackDetected: old version ("))
        #expect(error.description.contains("KeychainErrorTests.swift"))
    }

    @Test func wrongPassphraseDoesNotEchoThePassphrase() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let secret = "definitely-not-the-passphrase"
        do throws(KeychainError) {
            _ = try open(dir.vault, passphrase: secret)
            Issue.record("opened with a wrong passphrase")
        } catch {
            #expect(error.code == .wrongPassphrase)
            #expect(!error.description.contains(secret))
        }
    }
}
