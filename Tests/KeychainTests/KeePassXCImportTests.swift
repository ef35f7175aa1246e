import Foundation
import Testing

@testable import Keychain

/// KeePassXC's CSV export (`KeePassXCImport`), on `Vectors/keepassxc/export.csv`, written for these tests in the
/// shape KeePassXC writes (its header, quoted fields, CRLF line ends): a login with its URL, notes and an
/// otpauth:// code; one whose title is its site, with a quote, a comma and a line break in its fields and a bare
/// Base32 code; a password without a site and a bad code (both reported).
@Suite struct KeePassXCImportTests {
    static func vector() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        return Array(try Data(contentsOf: url.appendingPathComponent("keepassxc/export.csv")))
    }

    @Test func rowsImportAsPasswordsAndCodes() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let report = try keychain.importKeePassXC(try Self.vector())
        #expect(report.imported == [.password: 2, .code: 2])
        #expect(report.failures.count == 2)
        #expect(report.failures.contains { $0.hasPrefix("row 4: a password without a site") })
        #expect(report.failures.contains { $0.hasPrefix("row 5 (TOTP):") })
        let passwords = keychain.items.compactMap { item -> (Password, KeychainItem)? in
            if case .password(let p) = item.content { return (p, item) }
            return nil
        }
        let shop = try #require(passwords.first { $0.0.sites == ["shop.example.com"] })
        #expect(shop.0.username == "ada@example.com" && shop.0.password == "tulip-quarry-19")
        #expect(shop.1.notes == "the shared account")
        #expect(shop.1.created == Date(timeIntervalSince1970: 1_740_823_200))
        let mail = try #require(passwords.first { $0.0.sites == ["mail.example.org"] })
        #expect(mail.0.password == "say \"hello\", then go")
        #expect(mail.1.notes == "two lines:\nfirst, second")
        let again = try keychain.importKeePassXC(try Self.vector())
        #expect(again.importedCount == 0 && again.duplicates == 4)
    }

    @Test func recordsFollowRFC4180() throws {
        #expect(
            try KeePassXCImport.records(Array("a,b\r\n\"c\"\"d\",\"e,\nf\"\n".utf8)) == [
                ["a", "b"], ["c\"d", "e,\nf"],
            ])
        #expect(try KeePassXCImport.records(Array("\u{FEFF}x,\"\"".utf8)) == [["x", ""]])
        #expect(try KeePassXCImport.records([]) == [])
    }

    @Test(arguments: [
        "", "Title,Username,Password\r\n", "Title,Username,Password,URL\r\na,b,c\r\n",
        "Title,Username,Password,URL\r\n\"a,b,c,d\r\n", "Title,Username,Password,URL\r\n\"a\"x,b,c,d\r\n",
        "Title,Username,Password,URL\r\na\"b,c,d,e\r\n",
    ])
    func aBadFileAddsNothing(_ text: String) throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        #expect(errorCode { _ = try keychain.importKeePassXC(Array(text.utf8)) } == .invalidExport)
        #expect(errorCode { _ = try keychain.importKeePassXC([0x22, 0xFF, 0x22, 0x0A]) } == .invalidExport)
        #expect(keychain.items.isEmpty)
    }
}
