import Foundation
import Testing

@testable import SesameCore
@testable import SesamePasswords

@Suite struct ConfigurationTests {
    @Test func defaultsMatchTheIssue() throws {
        let c = try ServerConfiguration.resolve(flags: [:], environment: [:], configFile: nil)
        #expect(c.host == "127.0.0.1")
        #expect(c.port == 8080)
        #expect(c.rpID == "localhost")
        #expect(c.origin == "http://localhost:8080")
        #expect(try DatabaseLocation(parsing: c.database) == .sqlite(path: "sesame.sqlite"))
        #expect(c.smsSender == "console")
        #expect(c.challengeTimeout == 300)
        #expect(c.reauthenticationWindow == 600)
        #expect(!c.isSecureOrigin)
    }

    /// The re-authentication window comes from the file, the environment or a flag, within 30 s ... 1 day.
    @Test func reauthenticationWindowIsASetting() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sesame-config-\(UUID().uuidString).json")
        try Data(#"{"reauthenticationWindow": 120}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(
            try ServerConfiguration.resolve(flags: [:], environment: [:], configFile: file.path).reauthenticationWindow
                == 120)
        #expect(
            try ServerConfiguration.resolve(
                flags: [:], environment: ["SESAME_REAUTHENTICATION_WINDOW": "300"], configFile: file.path
            ).reauthenticationWindow == 300)
        #expect(
            try ServerConfiguration.resolve(
                flags: ["reauthenticationWindow": "45"], environment: ["SESAME_REAUTHENTICATION_WINDOW": "300"],
                configFile: nil
            ).reauthenticationWindow == 45)
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(flags: ["reauthenticationWindow": "10"], environment: [:], configFile: nil)
        }
    }

    @Test func precedenceIsDefaultThenFileThenEnvironmentThenFlag() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sesame-config-\(UUID().uuidString).json")
        try Data(
            #"{"port": 9000, "host": "0.0.0.0", "rpName": "File", "relatedOrigins": ["https://a.example"], "androidApps": [{"package_name": "com.example", "sha256_cert_fingerprints": ["AA:BB"]}]}"#
                .utf8
        ).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let c = try ServerConfiguration.resolve(
            flags: ["port": "9002"],
            environment: ["SESAME_PORT": "9001", "SESAME_RP_NAME": "Env", "SESAME_CONFIG": file.path],
            configFile: nil
        )
        #expect(c.port == 9002)  // flag beats environment and file
        #expect(c.rpName == "Env")  // environment beats file
        #expect(c.host == "0.0.0.0")  // file beats default
        #expect(c.relatedOrigins == ["https://a.example"])
        #expect(c.androidApps == [.init(packageName: "com.example", sha256CertFingerprints: ["AA:BB"])])
    }

    @Test(arguments: [
        ["port": "70000"],
        ["origin": "localhost:8080"],
        ["origin": "https://example.com", "rpID": "other.com"],
        ["database": "mysql://x@y/z"],
        ["nativeAppOrigins": "ftp://x"],
        ["smsSender": "carrier-pigeon"],
        ["trustForwardedFor": "maybe"],
        ["androidApps": "com.example"],
    ])
    func invalidValuesAreRefusedWithTheirName(_ flags: [String: String]) {
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(flags: flags, environment: [:], configFile: nil)
        }
    }

    @Test func unknownConfigFileKeysAreRefused() {
        var c = ServerConfiguration()
        #expect(throws: ConfigurationError.self) { try c.apply(json: Data(#"{"prot": 1}"#.utf8)) }
    }

    @Test func httpsOriginMakesCookiesSecure() throws {
        let c = try ServerConfiguration.resolve(
            flags: [
                "origin": "https://login.example.com", "rpID": "example.com",
                "smsSender": "https://sms.example.com/hook",
            ], environment: [:], configFile: nil)
        #expect(c.isSecureOrigin)
        let cookies = Cookies(c)
        #expect(cookies.sessionName == "__Host-sesame_session")
        #expect(cookies.name(.ceremony) == "__Secure-sesame_ceremony")
        for kind in [Cookies.Kind.session, .ceremony, .pending] {
            #expect(cookies.set(kind, "v").contains("; Secure"))
            #expect(cookies.set(kind, "v").contains("; HttpOnly"))
            #expect(cookies.clear(kind).contains("Max-Age=0"))
        }
    }

    @Test func postgresPasswordIsRedacted() throws {
        let location = try DatabaseLocation(parsing: "postgres://user:hunter2@db.example:5432/sesame")
        #expect(!location.redacted.contains("hunter2"))
        #expect(location.redacted.contains("db.example"))
    }

    /// docs/configuration.md carries the same table the code defines.
    @Test func documentedTableMatchesTheCode() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        #expect(text.contains(ServerConfiguration.markdownTable))
    }
}

@Suite struct PasswordHasherTests {
    @Test(arguments: [("1234567", PasswordHasher.Problem.tooShort), (String(repeating: "a", count: 257), .tooLong)])
    func lengthRules(_ password: String, _ problem: PasswordHasher.Problem) {
        #expect(PasswordHasher.check(password) == problem)
    }

    @Test(arguments: ["12345678", "correct horse battery staple", "pässwörd🔑🔑", String(repeating: "x", count: 256)])
    func acceptedPasswordsHaveNoCompositionRules(_ password: String) {
        #expect(PasswordHasher.check(password) == nil)
    }

    @Test func hashVerifiesAndRejects() throws {
        let hasher = PasswordHasher(logN: 10)
        let record = try hasher.hash("correct horse")
        #expect(record.salt.count == 16 && record.hash.count == 32)
        #expect(try hasher.verify("correct horse", against: record))
        #expect(try !hasher.verify("correct horsE", against: record))
        #expect(!hasher.needsUpgrade(record))
        #expect(PasswordHasher(logN: 11).needsUpgrade(record))
        // Two hashes of one password differ (random salt).
        #expect(try hasher.hash("correct horse").hash != record.hash)
    }

    @Test func normalisationMakesEquivalentFormsEqual() throws {
        let hasher = PasswordHasher(logN: 10)
        let composed = try hasher.hash("caf\u{00E9}-password")
        #expect(try hasher.verify("cafe\u{0301}-password", against: composed))
    }

    /// Test vector from RFC 7914 §12 (P="password", S="NaCl", N=1024, r=8, p=16, dkLen=64): the hasher's
    /// derivation is scrypt as the RFC defines it.
    @Test func scryptMatchesRFC7914Vector() throws {
        let record = PasswordRecord(
            hash: Array(
                hex:
                    "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
            ),
            salt: Array("NaCl".utf8), logN: 10, r: 8, p: 16
        )
        let derived = try PasswordHasher.derive("password", salt: record.salt, logN: 10, r: 8, p: 16, length: 64)
        #expect(derived == record.hash)
    }
}

@Suite struct UsernameTests {
    @Test func caseFoldedKey() {
        #expect(Usernames.key("Alice") == Usernames.key("ALICE"))
        #expect(Usernames.key("ａｌｉｃｅ") == Usernames.key("alice"))
    }

    @Test(arguments: ["", "   ", "a\u{0000}b", "tab\there", String(repeating: "x", count: 65), "a b"])
    func refused(_ name: String) {
        #expect(Usernames.validate(name) == nil)
    }

    @Test(arguments: ["alice", "bob.smith@example.com", "Zoë", "名前"])
    func accepted(_ name: String) {
        #expect(Usernames.validate(name) == name)
    }
}

extension Array where Element == UInt8 {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self = bytes
    }
}
