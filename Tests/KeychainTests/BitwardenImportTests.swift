import Foundation
import Testing

@testable import Keychain

/// Bitwarden's unencrypted JSON export (`BitwardenImport`), on `Vectors/bitwarden/export.json`, written for these
/// tests in the shape of Bitwarden's export: two logins that import (one with its URIs and an otpauth:// code, one
/// whose name is its site, with a bare Base32 code), a login without a site and one with a bad code (reported), a
/// secure note and a card (counted), and a login with two passkeys (P-256 keys made for the test with Python's
/// `cryptography`), one whose credential ID is a GUID and one "b64." and base64url, as Bitwarden writes them.
@Suite struct BitwardenImportTests {
    static func vector() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        return Array(try Data(contentsOf: url.appendingPathComponent("bitwarden/export.json")))
    }

    @Test func loginsCodesAndNotesImportAndTheRestIsCounted() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let report = try keychain.importBitwarden(try Self.vector())
        #expect(report.imported == [.password: 2, .code: 2, .passkey: 2])
        #expect(report.skippedTypes == ["secure note (Bitwarden)": 1, "card (Bitwarden)": 1])
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
        // The passkeys: byte-exact IDs (the GUID's 16 bytes in the order written; the base64url bytes after
        // "b64."), the user handles, names and creation dates; no PRF secrets (Bitwarden exports none).
        let passkeys = keychain.items.compactMap { item -> (Passkey, KeychainItem)? in
            if case .passkey(let p) = item.content { return (p, item) }
            return nil
        }
        let lin = try #require(passkeys.first { $0.0.userName == "lin" })
        #expect(
            lin.0.credentialId == [
                0x08, 0xd7, 0x0b, 0x74, 0xe9, 0xf5, 0x45, 0x22, 0xa4, 0x25, 0xe5, 0xdc, 0xd4, 0x01, 0x07, 0xe7,
            ])
        #expect(lin.0.rpId == "second.localhost" && lin.0.displayName == "Lin" && lin.0.algorithm == .es256)
        #expect(lin.0.userHandle == Array("lin-user-handle".utf8) && lin.0.hmacSecret == nil)
        #expect(lin.1.created == Date(timeIntervalSince1970: 1_746_515_289))
        let max = try #require(passkeys.first { $0.0.userName == "max" })
        #expect(max.0.credentialId == Array(0xa0..<0xb4) + [0x00, 0xff])
        #expect(max.0.userHandle == Array("max-user-handle".utf8))
        // Again: everything is already here.
        let again = try keychain.importBitwarden(try Self.vector())
        #expect(again.importedCount == 0 && again.duplicates == 6)
    }

    /// A Bitwarden passkey (`fido2Credentials` member) with one member changed, in an export whose first login
    /// would import: the whole export is refused with the code, and nothing is added.
    static func exportWithPasskey(_ change: (inout [String: Any]) -> Void) throws -> [UInt8] {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(try vector())) as? [String: Any])
        var items = try #require(root["items"] as? [[String: Any]])
        var login = try #require(items[6]["login"] as? [String: Any])
        var credentials = try #require(login["fido2Credentials"] as? [[String: Any]])
        change(&credentials[0])
        login["fido2Credentials"] = credentials
        items[6]["login"] = login
        var changed = root
        changed["items"] = items
        return Array(try JSONSerialization.data(withJSONObject: changed))
    }

    /// RFC 8410 §10.3's Ed25519 private key in PKCS #8 (48 bytes), base64url.
    static let ed25519PKCS8 = "MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp-K06_nwoy_HU--CZqDOsqx7T"
    /// A P-384 private key in PKCS #8, made for this test with Python's `cryptography`.
    static let p384PKCS8 =
        "MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDDIHFXr_vUwaC1dYE3c7rawqFLrKt3UemneOr56G85BHNNZQt3wI7YEtdVzIq4ifJ"
        + "uhZANiAARPgQnnGoSmPc_CoY7Z3RfOdwYRA61NfWkZ8NuQc5dSCC81LMAkTnH7pHZHpXlbqC7UYRkPyqaXzX9UT4Ifqtny12sNwPRF3kxhYr28"
        + "ZBTzeiJ-NrpBhAqaj2j90Btbgwk"

    @Test(arguments: [
        ("keyCurve", "P-384", "unsupportedPasskeyKey"),
        ("keyAlgorithm", "EdDSA", "unsupportedPasskeyKey"),
        ("keyType", "secret", "unsupportedPasskeyKey"),
        ("keyValue", ed25519PKCS8, "unsupportedPasskeyKey"),
        ("keyValue", p384PKCS8, "unsupportedPasskeyKey"),
        ("keyValue", "not base64url!", "malformedPasskeyKey"),
        ("keyValue", "AAECAwQFBgcICQ", "malformedPasskeyKey"),
        ("credentialId", "08d70b74-e9f5-4522-a425-e5dcd40107", "invalidExport"),
        ("credentialId", "08d70b74-e9f5-4522-a425-e5dcd40107zz", "invalidExport"),
        ("credentialId", "b64.", "invalidExport"),
        ("credentialId", "b64.a+b/", "invalidExport"),
        ("rpId", "", "invalidExport"),
        ("rpId", "not a domain", "invalidExport"),
        ("userHandle", "", "invalidExport"),
    ])
    func aPasskeyThatDoesNotReadRefusesTheExport(_ member: String, _ value: String, _ code: String) throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let export = try Self.exportWithPasskey { $0[member] = value }
        let error = errorCode { _ = try keychain.importBitwarden(export) }
        #expect(error?.name == code)
        #expect(keychain.items.isEmpty)
    }

    @Test func aPasskeyThatIsNotAnObjectOrHasANumberRefusesTheExport() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        for export in [
            try Self.exportWithPasskey { $0["counter"] = 3 },
            try Self.exportWithPasskey { $0.removeValue(forKey: "keyValue") },
            try Self.exportWithPasskey { $0.removeValue(forKey: "credentialId") },
            Array(#"{"items": [{"type": 1, "login": {"fido2Credentials": ["b64.AAAA"]}}]}"#.utf8),
            Array(#"{"items": [{"type": 1, "login": {"fido2Credentials": {}}}]}"#.utf8),
        ] {
            #expect(errorCode { _ = try keychain.importBitwarden(export) } == .invalidExport)
            #expect(keychain.items.isEmpty)
        }
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
