import Foundation
import Testing
import WebAuthn

@testable import Keychain

@Suite struct SharingTests {
    struct People {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let alice: VaultDirectory
        let bob: VaultDirectory
        let bobKey: SharingKey
        let aliceKey: SharingKey

        init() throws {
            alice = dir.sub("alice")
            bob = dir.sub("bob")
            _ = try makeVault(alice)
            _ = try makeVault(bob)
            bobKey = try open(bob).sharingKey!
            aliceKey = try open(alice).sharingKey!
        }
    }

    @Test func shareAcceptAndRevoke() async throws {
        let p = try People()
        let itemId = try await using(p.alice) { try $0.add(samplePassword("shared.example"), notes: "for bob").id }
        let sent = try await using(p.alice) { k in
            try await k.share(
                itemId, to: p.bobKey, confirmedFingerprint: p.bobKey.fingerprint.description, transport: p.server)
        }
        #expect(try open(p.alice).sentShares.map(\.id) == [sent.id])
        #expect(sent.recipientFingerprint == p.bobKey.fingerprint)

        let offers = try await using(p.bob) { try await $0.incomingShares(transport: p.server) }
        #expect(offers.map(\.id) == [sent.id])
        #expect(offers[0].sender.fingerprint == p.aliceKey.fingerprint)
        let accepted = try await using(p.bob) { k in
            try await k.acceptShare(
                id: sent.id, expectedSender: p.aliceKey.fingerprint.description, transport: p.server)
        }
        #expect(accepted.id != itemId)
        #expect(accepted.notes == "for bob")
        #expect(try itemTitles(p.bob) == ["shared.example — alice"])
        // Accepting twice is refused; the offer no longer shows.
        #expect(
            await errorCode {
                try await using(p.bob) { _ = try await $0.acceptShare(id: sent.id, transport: p.server) }
            } == .shareAlreadyAccepted)
        #expect(try await using(p.bob) { try await $0.incomingShares(transport: p.server) }.isEmpty)

        // Revoking withdraws the offer from the server.
        let second = try await using(p.alice) { k in
            try await k.share(
                itemId, to: p.bobKey, confirmedFingerprint: p.bobKey.fingerprint.description, transport: p.server)
        }
        try await using(p.alice) { try await $0.revokeShare(id: second.id, transport: p.server) }
        #expect(p.server.snapshot.shares.allSatisfy { $0.id != second.id })
        #expect(try open(p.alice).sentShares.map(\.id) == [sent.id])
    }

    @Test func aWrongFingerprintSendsNothing() async throws {
        let p = try People()
        let itemId = try await using(p.alice) { try $0.add(samplePassword()).id }
        let impostor = try SharingKey(publicKey: DeviceKey.generate().publicKey)
        let got = await errorCode {
            try await using(p.alice) { k in
                _ = try await k.share(
                    itemId, to: impostor, confirmedFingerprint: p.bobKey.fingerprint.description, transport: p.server)
            }
        }
        #expect(got == .fingerprintMismatch)
        #expect(p.server.snapshot.shares.isEmpty)
    }

    @Test func forgedAndTamperedSharesAreRefused() async throws {
        let p = try People()
        let itemId = try await using(p.alice) { try $0.add(samplePassword()).id }
        let sent = try await using(p.alice) { k in
            try await k.share(
                itemId, to: p.bobKey, confirmedFingerprint: p.bobKey.fingerprint.description, transport: p.server)
        }
        // The server claims the share came from someone else: the sender check and the HPKE auth both fail.
        let other = DeviceKey.generate()
        p.server.edit { state in
            state.shares = state.shares.map {
                ShareMessage(id: $0.id, sender: other.publicKey, recipient: $0.recipient, blob: $0.blob)
            }
        }
        #expect(
            await errorCode {
                try await using(p.bob) { k in
                    _ = try await k.acceptShare(
                        id: sent.id, expectedSender: p.aliceKey.fingerprint.description, transport: p.server)
                }
            } == .fingerprintMismatch)
        #expect(
            await errorCode {
                try await using(p.bob) { _ = try await $0.acceptShare(id: sent.id, transport: p.server) }
            } == .shareInvalid)
        // A changed blob does not open.
        p.server.edit { state in
            state.shares = state.shares.map {
                var blob = $0.blob
                blob[blob.count - 1] ^= 1
                return ShareMessage(id: $0.id, sender: p.aliceKey.publicKey, recipient: $0.recipient, blob: blob)
            }
        }
        #expect(
            await errorCode {
                try await using(p.bob) { _ = try await $0.acceptShare(id: sent.id, transport: p.server) }
            } == .shareInvalid)
        // Moved to another share ID, it does not open either (the ID is bound in HPKE's info).
        p.server.edit { state in
            state.shares = state.shares.map {
                ShareMessage(id: SecureRandom.bytes(16), sender: $0.sender, recipient: $0.recipient, blob: $0.blob)
            }
        }
        let moved = p.server.snapshot.shares[0].id
        #expect(
            await errorCode { try await using(p.bob) { _ = try await $0.acceptShare(id: moved, transport: p.server) } }
                == .shareInvalid)
        #expect(try open(p.bob).items.isEmpty)
    }

    @Test func sharingKeyText() throws {
        let key = try SharingKey(publicKey: DeviceKey.generate().publicKey)
        #expect(try SharingKey(text: key.text) == key)
        for bad in ["", "sesame-share:", "sesame-share:AAAA", "other:" + Base64URL.encode(key.publicKey)] {
            #expect(errorCode { _ = try SharingKey(text: bad) } == .invalidSharingKey)
        }
    }
}

@Suite struct CodeTests {
    /// RFC 6238 Appendix B, through items (SHA-1, SHA-256 and SHA-512 with their 20-, 32- and 64-byte seeds).
    @Test(arguments: [
        ("SHA1", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", 59.0, "94287082"),
        ("SHA256", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA", 1_111_111_109.0, "68084774"),
        (
            "SHA512",
            "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNA",
            20_000_000_000.0, "47863826"
        ),
    ])
    func totpVectors(_ algorithm: String, _ secret: String, _ time: Double, _ expected: String) throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock(Date(timeIntervalSince1970: time))
        let (keychain, _) = try makeVault(dir.vault, clock: clock)
        let item = try keychain.add(
            sampleCode("otpauth://totp/RFC:6238?secret=\(secret)&algorithm=\(algorithm)&digits=8&issuer=RFC"))
        let code = try keychain.code(for: item.id)
        #expect(code.code == expected)
        #expect(code.secondsLeft == 30 - Int(time) % 30)
    }

    @Test func hotpMovesItsCounterOn() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        // RFC 4226 Appendix D: counter 0 → 755224, 1 → 287082.
        let item = try keychain.add(
            try sampleCode("otpauth://hotp/RFC:4226?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=0"))
        #expect(try keychain.code(for: item.id).code == "755224")
        #expect(try keychain.code(for: item.id).code == "287082")
        #expect(try keychain.code(for: item.id).counter == 2)
        let password = try keychain.add(samplePassword())
        #expect(errorCode { _ = try keychain.code(for: password.id) } == .notACodeGenerator)
    }

    @Test func appleOtpauthLinksKeepTheirDomainAsSite() throws {
        let generator = try CodeGenerator(
            parsing: "apple-otpauth://totp/example.com:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=example.com"
        )
        #expect(generator.sites == ["example.com"])
        #expect(generator.key.issuer == "example.com")
        #expect(errorCode { _ = try CodeGenerator(parsing: "otpauth://totp/x?secret=") } == .invalidItem)
    }

    /// A one-word issuer names the service but is no site: "Example" must not become the site "example".
    @Test(arguments: [
        (
            "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example", [String](),
            [String](),
            "Example — alice"
        ),
        (
            "otpauth://totp/Example.COM:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example.COM", [],
            ["example.com"], "example.com — alice"
        ),
        (
            "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example", ["example.org"],
            ["example.org"], "Example, example.org — alice"
        ),
    ])
    func issuerAndSites(_ uri: String, _ given: [String], _ sites: [String], _ title: String) throws {
        let generator = try CodeGenerator(parsing: uri, sites: given)
        #expect(generator.sites == sites)
        let item = try KeychainItem(content: .codeGenerator(generator), created: Date(timeIntervalSince1970: 0))
        #expect(item.title == title)
        // The issuer is searchable, but never listed twice when it is also the site.
        #expect(item.sites.count == Set(item.sites.map { $0.lowercased() }).count)
    }

    /// `code(for:at:)` uses the time asked for, not the clock's (for `sesame keychain code --at`).
    @Test func codeAtAGivenTime() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault, clock: ManualClock(Date(timeIntervalSince1970: 1_800_000_000)))
        let item = try keychain.add(
            sampleCode("otpauth://totp/RFC:6238?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&digits=8&issuer=RFC"))
        let code = try keychain.code(for: item.id, at: Date(timeIntervalSince1970: 59))
        #expect(code.code == "94287082")  // RFC 6238 Appendix B, SHA-1 at T = 59
        #expect(code.secondsLeft == 1)
        let now = try keychain.code(for: item.id)
        #expect(now == (try keychain.code(for: item.id, at: Date(timeIntervalSince1970: 1_800_000_000))))
        #expect(now.secondsLeft == 30)  // 1_800_000_000 is a multiple of 30
    }
}
