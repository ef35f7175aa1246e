import Crypto
import Foundation
import OneTimeCode
import Testing
import WebAuthn

@testable import Keychain

@Suite struct CXFTests {
    static func vector(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        return Array(try Data(contentsOf: url.appendingPathComponent("cxf/" + name)))
    }

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus/cxf")
    static let corpusPresent = FileManager.default.fileExists(atPath: corpus.appendingPathComponent("index.json").path)

    func passkeys(_ keychain: Keychain) -> [Passkey] {
        keychain.items.compactMap { if case .passkey(let p) = $0.content { p } else { nil } }
    }

    @Test func specShapedDocumentImports() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let report = try keychain.importCXF(try Self.vector("spec-shaped-header.json"))
        #expect(report.imported == [.password: 1, .code: 1, .passkey: 2])
        #expect(report.skippedTypes == ["credit-card": 1])
        #expect(report.failures.isEmpty)

        let password = try #require(keychain.items.first { $0.kind == .password })
        guard case .password(let p) = password.content else { return }
        #expect(p.sites == ["shop.example.org", "m.shop.example.org"])
        #expect(p.username == "sam" && p.password == "c0rrect-h0rse")
        #expect(password.notes == "Shop account; recovery questions are in the safe.")
        #expect(password.created == Date(timeIntervalSince1970: 1_760_000_000))

        let code = try #require(keychain.items.first { $0.kind == .code })
        guard case .codeGenerator(let c) = code.content, case .totp(let totp) = c.key.generator else { return }
        #expect(totp.algorithm == .sha256 && totp.digits == 8 && totp.period == 60)
        #expect(c.key.issuer == "shop.example.org" && c.key.account == "sam")

        let keys = passkeys(keychain)
        let es = try #require(keys.first { $0.rpId == "passkeys.example.org" })
        #expect(
            es.credentialId == [0xfb, 0xff, 0xfe] + Array(try Base64URL.decode("-__-Kg36P0IXzNaY7QQNOvYMzWs")[3...]))
        #expect(es.credentialId.count == 20)
        #expect(es.algorithm == .es256)
        let ed = try #require(keys.first { $0.rpId == "ed.example.org" })
        #expect(ed.credentialId == (try Base64URL.decode("RP9oiS0KWg")))
        #expect(ed.algorithm == .edDSA)
        #expect(ed.userHandle == Array("sam".utf8))
    }

    @Test func draftEraSpellingsImport() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let report = try keychain.importCXF(try Self.vector("draft-camelcase-header.json"))
        #expect(report.imported == [.password: 1, .code: 1, .passkey: 1])
        #expect(report.failures.isEmpty)
        guard case .password(let p) = keychain.items.first(where: { $0.kind == .password })!.content else { return }
        #expect(p.sites == ["forum.example.org"] && p.password == "forum-password-1")
        #expect(keychain.items.first { $0.kind == .password }?.notes == "bare-string note")
        let passkey = try #require(passkeys(keychain).first)
        #expect(passkey.rpId == "passkeys.example.org")
        #expect(passkey.credentialId.count == 20 && passkey.credentialId.prefix(3) == [0xfb, 0xff, 0xfe])
        #expect(passkey.userName == "sam@example.org")
        // An 80-bit secret from a service is kept; the code matches RFC 6238's algorithm at a fixed time.
        let code = try #require(keychain.items.first { $0.kind == .code })
        guard case .codeGenerator(let c) = code.content else { return }
        #expect(c.key.secret.bytes.count == 10)
    }

    @Test func anImportedPasskeySignsAndKeepsCountingFromZero() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        _ = try keychain.importCXF(try Self.vector("spec-shaped-header.json"))
        let rp = try relyingParty(id: "passkeys.example.org", origin: "https://passkeys.example.org")
        let request = rp.makeRequestOptions()
        let assertion = try keychain.signIn(
            optionsJSON: json(request), origin: "https://passkeys.example.org", suffixes: suffixes)
        let response = try AuthenticationResponseJSON.decode(assertion.responseJSON)
        // The public key of the fixture's P-256 key, as the site would have stored it.
        let der = try Base64URL.decode(
            "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQVGeAxpQztfZQPPhaOfypq7Wg61Lm-TuSKG1-ve-spKhRANCAARsc4VRhSlHS2GmyBVPMQmQmPZVYzs96JXuXaq0kl63A3jtvu4p9OFgpCOiOGomzPWNqBcElMqwWS-rvNSsNSXj"
        )
        let key = try P256.Signing.PrivateKey(derRepresentation: der)
        let cose = CredentialKey.es256(key).coseKey
        let record = CredentialRecord(
            id: response.rawId.bytes, publicKey: cose, signCount: 0, transports: [], backupEligible: true,
            backupState: true,
            uvInitialized: true)
        let result = try rp.verifyAuthentication(
            response: response,
            expected: AuthenticationExpectation(
                options: request, credential: record,
                userHandle: try Base64URL.decode("E_n6sxdJvjCZvhiuvTR0JfqCraOy3cXop64E4LZbhP8")),
            now: Date())
        #expect(result.signCount == 0)
        #expect(Array(response.response.authenticatorData.bytes[33..<37]) == [0, 0, 0, 0])
    }

    @Test func exportThenImportIntoAFreshVaultRoundTripsEveryItem() throws {
        let dir = TemporaryDirectory()
        let (source, _) = try makeVault(dir.sub("source"))
        try source.add(samplePassword(), notes: "with a note")
        try source.add(.password(Password(sites: ["a.example", "b.example"], username: "", password: "p@ss")))
        for algorithm in ["SHA1", "SHA256", "SHA512"] {
            try source.add(
                try sampleCode(
                    "otpauth://totp/Svc:u-\(algorithm)?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&algorithm=\(algorithm)&digits=8&period=45&issuer=Svc"
                ))
        }
        for (i, algorithm) in PasskeyAlgorithm.allCases.enumerated() {
            let key = CredentialKey.generate(algorithm)
            try source.add(
                .passkey(
                    Passkey(
                        rpId: "site\(i).example", credentialId: [UInt8(i), 0xff, 0xfe] + SecureRandom.bytes(29),
                        userHandle: SecureRandom.bytes(64), userName: "user\(i)", displayName: "User \(i)",
                        algorithm: algorithm, privateKey: key.rawPrivateKey)),
                notes: "passkey \(i)")
        }
        let hotp = try source.add(
            try sampleCode("otpauth://hotp/Bank:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=3"))
        let (json, report) = source.exportCXF(exporterRpId: "keychain.example")
        #expect(report.exported == [.password: 2, .code: 3, .passkey: 2])
        #expect(report.skipped == ["\(hotp.id): HOTP has no CXF 1.0 type"])

        let (target, _) = try makeVault(dir.sub("target"))
        let imported = try target.importCXF(json)
        #expect(imported.importedCount == 7)
        #expect(imported.failures.isEmpty && imported.skippedTypes.isEmpty)
        func shape(_ items: [KeychainItem]) -> [String] {
            items.filter { !($0.kind == .code && Merge.counter(($0.content.codeGenerator)!.key) != nil) }
                .map { "\($0.content)|\(ItemCoding.cbor(KeychainItem.comparable($0)))" }.sorted()
        }
        #expect(shape(target.items) == shape(source.items))
        // A second import finds everything already there.
        let again = try target.importCXF(json)
        #expect(again.importedCount == 0 && again.duplicates == 7)
    }

    @Test(arguments: [
        "not json", "[]", "{}", "{\"version\":{\"major\":2,\"minor\":0},\"accounts\":[]}",
        "{\"version\":7,\"accounts\":[]}",
        "{\"items\":[{\"credentials\":[{\"type\":\"passkey\",\"credentialId\":\"a+b/\",\"rpId\":\"x.example\"}]}]}",
    ])
    func brokenDocuments(_ text: String) throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        do {
            let report = try keychain.importCXF(Array(text.utf8))
            // A well-formed document with a bad credential reports the failure and imports nothing.
            #expect(report.importedCount == 0)
            #expect(!report.failures.isEmpty)
        } catch {
            #expect([.invalidCXF, .unsupportedCXFVersion].contains(error.code))
        }
        #expect(keychain.items.isEmpty)
    }

    @Test(
        .enabled(
            if: CXFTests.corpusPresent,
            "../shared/corpus/cxf is missing: these real exports are read in place, not copied"))
    func bitwardenExampleImports() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let report = try keychain.importCXF(
            Array(try Data(contentsOf: Self.corpus.appendingPathComponent("bitwarden-cxf-example.json"))))
        #expect(report.imported == [.password: 1, .code: 1, .passkey: 1])
        #expect(report.failures.isEmpty)
        #expect(report.skippedTypes.values.reduce(0, +) == 11)
        let passkey = try #require(passkeys(keychain).first)
        #expect(passkey.credentialId == Array("credentialIdExample".utf8))
        #expect(passkey.rpId == "webauthn.io")
    }

    @Test(
        .enabled(
            if: CXFTests.corpusPresent,
            "../shared/corpus/cxf is missing: these real exports are read in place, not copied"),
        arguments: [("1password-cxf-account.json", 1, 0), ("dashlane-cxf-account.json", 1, 1)])
    func otherManagersAccountsImport(_ file: String, _ passwords: Int, _ codes: Int) throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let report = try keychain.importCXF(Array(try Data(contentsOf: Self.corpus.appendingPathComponent(file))))
        #expect(report.imported[.password, default: 0] == passwords)
        #expect(report.imported[.code, default: 0] == codes)
        #expect(report.failures.isEmpty, "\(report.failures)")
    }
}

extension ItemContent {
    var codeGenerator: CodeGenerator? { if case .codeGenerator(let c) = self { c } else { nil } }
}

extension KeychainItem {
    /// The item without what an export cannot keep: its ID and sub-second times.
    static func comparable(_ item: KeychainItem) -> KeychainItem {
        var copy = item
        copy.id = ItemID(unchecked: Array(repeating: 0, count: 16))
        copy.created = Date(timeIntervalSince1970: item.created.timeIntervalSince1970.rounded(.down))
        copy.modified = copy.created
        return copy
    }
}
