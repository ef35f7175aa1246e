import Foundation
import Testing

@testable import Keychain

/// Bitwarden's unencrypted JSON export (`BitwardenImport`), on `Vectors/bitwarden/export.json`, written for these
/// tests in the shape of Bitwarden's export: two logins that import (one with its URIs and an otpauth:// code, one
/// whose name is its site, with a bare Base32 code and a passkey that is counted, not imported), a login without a
/// site and one with a bad code (reported), a secure note and a card (counted).
@Suite struct BitwardenImportTests {
    static func vector() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        return Array(try Data(contentsOf: url.appendingPathComponent("bitwarden/export.json")))
    }

    @Test func loginsCodesAndNotesImportAndTheRestIsCounted() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let report = try keychain.importBitwarden(try Self.vector())
        #expect(report.imported == [.password: 2, .code: 2])
        #expect(
            report.skippedTypes == [
                "secure note (Bitwarden)": 1, "card (Bitwarden)": 1, "passkey (Bitwarden)": 1,
            ])
        #expect(report.failures.count == 2)
        #expect(report.failures.contains { $0.hasPrefix("items[2] (login): a password without a site") })
        #expect(report.failures.contains { $0.hasPrefix("items[3] (totp):") })
        let passwords = keychain.items.compactMap { item -> (Password, KeychainItem)? in
            if case .password(let p) = item.content { return (p, item) }
            return nil
        }
        let shop = try #require(passwords.first { $0.0.sites == ["shop.example.com"] })
        #expect(shop.0.username == "ada@example.com" && shop.0.password == "tulip-quarry-19")
        #expect(shop.1.notes == "the shared account")
        #expect(shop.1.created == Date(timeIntervalSince1970: 1_740_823_200))
        let mail = try #require(passwords.first { $0.0.sites == ["mail.example.org"] })
        #expect(mail.0.password == "harbor-violet-7")
        let codes = keychain.items.compactMap { item -> CodeGenerator? in
            if case .codeGenerator(let c) = item.content { return c }
            return nil
        }
        #expect(Set(codes.map(\.sites)) == [["shop.example.com"], ["mail.example.org"]])
        #expect(codes.contains { $0.key.issuer == "Shop" && $0.key.account == "ada" })
        #expect(codes.contains { $0.key.issuer == "mail.example.org" && $0.key.account == "ada" })
        // Again: everything is already here.
        let again = try keychain.importBitwarden(try Self.vector())
        #expect(again.importedCount == 0 && again.duplicates == 4)
    }

    @Test(arguments: [
        ("{\"encrypted\": true, \"data\": \"…\"}", "encryptedExport"),
        ("not json", "invalidExport"),
        ("[]", "invalidExport"),
        ("{\"items\": {}}", "invalidExport"),
        ("{\"encrypted\": \"no\", \"items\": []}", "invalidExport"),
        ("{\"items\": [{\"type\": \"1\", \"login\": {}}]}", "invalidExport"),
        ("{\"items\": [{\"type\": 1}]}", "invalidExport"),
        ("{\"items\": [{\"type\": 1, \"login\": {\"username\": 7}}]}", "invalidExport"),
        ("{\"items\": [{\"type\": 1, \"login\": {\"uris\": [\"https://a.example\"]}}]}", "invalidExport"),
        ("{\"items\": [{\"type\": 1, \"name\": \"a.example\", \"login\": {\"password\": \"p\"}}, 5]}", "invalidExport"),
    ])
    func aBadExportAddsNothing(_ text: String, _ code: String) throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        #expect(errorCode { _ = try keychain.importBitwarden(Array(text.utf8)) }?.name == code)
        #expect(keychain.items.isEmpty)
    }
}
