import Foundation
import OneTimeCode
import Testing
import WebAuthn

@testable @_spi(Fuzzing) import Keychain

/// The native host's requests for the extension's toolbar window (NativeHost+Window.swift): the unlock session,
/// the list and search, an item's page and a generator's code (the window itself is driven in Chromium in
/// Tests/Interop/test_browser_keychain.py).
@Suite struct NativeHostWindowTests {
    let origin = "https://login.example.com"
    static let codeURI = "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example"

    /// A host as `sesame keychain native-host` builds it: the session kept in the directory, the vault opened with
    /// it (on the system's clock, which the session is written with).
    func host(_ directory: VaultDirectory) -> NativeHost {
        NativeHost(suffixes: suffixes, session: .directory(directory, policy: fastPolicy)) {
            () throws(KeychainError) -> Keychain in
            try open(directory, passphrase: nil, clock: SystemKeychainClock())
        }
    }

    func ask(_ host: NativeHost, _ members: [String: Any]) -> [String: Any] {
        let bytes = host.reply(to: Array(try! JSONSerialization.data(withJSONObject: members)))
        return try! JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
    }

    func result(_ reply: [String: Any]) -> [String: Any]? { reply["result"] as? [String: Any] }

    func error(_ reply: [String: Any]) -> (name: String, code: String)? {
        guard reply["ok"] as? Bool == false, let error = reply["error"] as? [String: String] else { return nil }
        return (error["name"] ?? "", error["code"] ?? "")
    }

    /// A vault with a password and a code generator for example.com, a password for example.org with a note, and a
    /// passkey for example.com.
    func filledVault(_ dir: TemporaryDirectory) throws -> (password: String, code: String, passkey: String) {
        let (keychain, _) = try makeVault(dir.vault)
        let password = try keychain.add(samplePassword("example.com", user: "alice", password: "hunter2-hunter2"))
        let code = try keychain.add(.codeGenerator(try CodeGenerator(parsing: Self.codeURI, sites: ["example.com"])))
        _ = try keychain.add(
            samplePassword("example.org", user: "bob", password: "correct-pony-staple"), notes: "Shared with the team")
        let rp = try relyingParty()
        let registration = try keychain.createPasskey(
            optionsJSON: json(creationOptions(rp, name: "alice.passkey")), origin: origin, suffixes: suffixes)
        try keychain.save()
        return (password.id.text, code.id.text, registration.item.id.text)
    }

    @Test func unlockWithThePassphraseThenLock() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        let host = host(dir.vault)
        #expect(result(ask(host, ["id": 1, "kind": "status", "origin": ""]))?["unlocked"] as? Bool == false)
        #expect(error(ask(host, ["id": 2, "kind": "items", "origin": origin]))?.code == "locked")

        let wrong = ask(host, ["id": 3, "kind": "unlock", "origin": "", "passphrase": "not the passphrase at all"])
        #expect(error(wrong)?.code == "wrongPassphrase")
        #expect(error(wrong)?.name == "NotAllowedError")
        #expect(result(ask(host, ["id": 4, "kind": "status", "origin": ""]))?["unlocked"] as? Bool == false)

        let unlocked = result(ask(host, ["id": 5, "kind": "unlock", "origin": "", "passphrase": passphrase]))
        #expect(unlocked?["unlocked"] as? Bool == true)
        #expect(unlocked?["userVerified"] as? Bool == true)
        #expect(result(ask(host, ["id": 6, "kind": "status", "origin": ""]))?["unlocked"] as? Bool == true)
        #expect((result(ask(host, ["id": 7, "kind": "items", "origin": origin]))?["items"] as? [Any])?.count == 4)

        #expect(result(ask(host, ["id": 8, "kind": "lock", "origin": ""]))?["unlocked"] as? Bool == false)
        #expect(error(ask(host, ["id": 9, "kind": "items", "origin": origin]))?.code == "locked")
        // The passphrase is never in a request's description.
        let request = try NativeHostRequest(
            json: Array(#"{"id": 1, "kind": "unlock", "origin": "", "passphrase": "my secret words"}"#.utf8))
        #expect(!"\(request)".contains("secret") && !String(reflecting: request).contains("secret"))
    }

    /// The idle lock: a session the window starts (`native-host --idle`) ends once it has gone unused for the idle
    /// time; status then says locked and the list is refused, while each use moves the end forward.
    @Test func aSessionTheWindowStartsLocksAfterTheIdleTime() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        let clock = ManualClock()
        let host = NativeHost(
            suffixes: suffixes, session: .directory(dir.vault, idle: 60, policy: fastPolicy, clock: clock)
        ) { () throws(KeychainError) -> Keychain in try open(dir.vault, passphrase: nil, clock: clock) }
        let unlocked = result(ask(host, ["id": 1, "kind": "unlock", "origin": "", "passphrase": passphrase]))
        #expect(unlocked?["expires"] as? Int == Int(ItemTime.milliseconds(clock.now.addingTimeInterval(60))))
        clock.advance(50)
        #expect((result(ask(host, ["id": 2, "kind": "items", "origin": origin]))?["items"] as? [Any])?.count == 4)
        clock.advance(50)  // 100 s after unlocking, 50 s after the last use
        let status = result(ask(host, ["id": 3, "kind": "status", "origin": ""]))
        #expect(status?["unlocked"] as? Bool == true)
        #expect(status?["expires"] as? Int == Int(ItemTime.milliseconds(clock.now.addingTimeInterval(10))))
        clock.advance(11)  // a status request is not a use
        #expect(result(ask(host, ["id": 4, "kind": "status", "origin": ""]))?["unlocked"] as? Bool == false)
        #expect(error(ask(host, ["id": 5, "kind": "items", "origin": origin]))?.code == "locked")
        #expect(!FileManager.default.fileExists(atPath: dir.vault.sessionFile))
    }

    /// The window's word generator: the host draws from the EFF long word list and says the strength; no vault or
    /// session is needed, and a count outside 3 to 20 is refused.
    @Test func theWindowsWordGeneratorIsTheLibrarys() throws {
        let dir = TemporaryDirectory()
        let host = host(dir.vault)
        let answer = result(ask(host, ["id": 1, "kind": "generatePassword", "origin": "", "words": 5]))
        let password = answer?["password"] as? String ?? ""
        let list = Set(try PasswordGenerator.wordList())
        #expect(PasswordGeneratorTests.isWords(password, count: 5, separator: "-", list: list))
        #expect(answer?["bits"] as? Double == 5 * log2(7776.0))
        #expect(answer?["listSize"] as? Int == 7776)
        #expect(answer?["list"] as? String == "the EFF long word list (CC BY 3.0)")
        #expect(
            error(ask(host, ["id": 2, "kind": "generatePassword", "origin": "", "words": 2]))?.code
                == "invalidGeneratorSettings")
        #expect(
            error(ask(host, ["id": 3, "kind": "generatePassword", "origin": ""]))?.code == "malformedNativeMessage")
    }

    @Test func theSitesItemsComeFirstAndSearchFindsNamesSitesUsersAndNotes() throws {
        let dir = TemporaryDirectory()
        let ids = try filledVault(dir)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        let host = host(dir.vault)
        let listed = result(ask(host, ["id": 1, "kind": "items", "origin": origin]))
        #expect(listed?["site"] as? String == "login.example.com")
        let items = listed?["items"] as? [[String: Any]] ?? []
        #expect(items.prefix(3).allSatisfy { $0["forSite"] as? Bool == true })
        #expect(Set(items.prefix(3).compactMap { $0["itemId"] as? String }) == [ids.password, ids.code, ids.passkey])
        #expect(items.last?["forSite"] as? Bool == false)
        #expect(listed?["more"] as? Bool == false)
        // No secret in a list.
        let text = String(decoding: try JSONSerialization.data(withJSONObject: listed ?? [:]), as: UTF8.self)
        #expect(!text.contains("hunter2") && !text.contains("correct-pony") && !text.contains("GEZDGNBV"))

        func search(_ query: String, origin: String = "") -> [String] {
            let answer = result(ask(host, ["id": 2, "kind": "items", "origin": origin, "query": query]))
            return (answer?["items"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }
        }
        #expect(search("BOB") == ["bob"])  // user name, any case
        #expect(search("example.org") == ["bob"])  // site
        #expect(search("team") == ["bob"])  // notes
        #expect(search("Alice.Passkey") == ["alice.passkey"])  // a passkey's user name
        #expect(search("nothing like this").isEmpty)
        #expect(search("hunter2").isEmpty)  // passwords are not searched
        // Without a site, nothing is marked as the site's.
        let plain = result(ask(host, ["id": 3, "kind": "items", "origin": ""]))
        #expect(plain?["site"] == nil)
        #expect((plain?["items"] as? [[String: Any]])?.allSatisfy { $0["forSite"] as? Bool == false } == true)
        // A query over the limit is refused.
        let long = ask(host, ["id": 4, "kind": "items", "origin": "", "query": String(repeating: "a", count: 257)])
        #expect(error(long)?.code == "malformedNativeMessage")
    }

    @Test func anItemsPageAndItsCode() throws {
        let dir = TemporaryDirectory()
        let ids = try filledVault(dir)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        let host = host(dir.vault)
        let password =
            result(ask(host, ["id": 1, "kind": "item", "origin": "", "itemId": ids.password]))?["item"]
            as? [String: Any]
        #expect(password?["password"] as? String == "hunter2-hunter2")
        #expect(password?["username"] as? String == "alice")
        let passkeys = password?["passkeys"] as? [[String: Any]]
        #expect(passkeys?.map { $0["userName"] as? String } == ["alice.passkey"])
        #expect(passkeys?.first?["created"] as? Int != nil)

        let passkey =
            result(ask(host, ["id": 2, "kind": "item", "origin": "", "itemId": ids.passkey]))?["item"]
            as? [String: Any]
        #expect(passkey?["kind"] as? String == "passkey")
        #expect(passkey?["displayName"] as? String == "Alice.Passkey")
        #expect(passkey?["password"] == nil)

        let generator =
            result(ask(host, ["id": 3, "kind": "item", "origin": "", "itemId": ids.code]))?["item"]
            as? [String: Any]
        #expect(generator?["codeType"] as? String == "totp")
        #expect(generator?["period"] as? Int == 30)
        let code = result(ask(host, ["id": 4, "kind": "itemCode", "origin": "", "itemId": ids.code]))
        let text = code?["code"] as? String
        #expect(text?.count == 6 && text?.allSatisfy(\.isNumber) == true)
        #expect((1...30).contains(code?["secondsLeft"] as? Int ?? 0))
        #expect(code?["period"] as? Int == 30)
        #expect(
            error(ask(host, ["id": 5, "kind": "itemCode", "origin": "", "itemId": ids.password]))?.code
                == "notACodeGenerator")
        #expect(error(ask(host, ["id": 6, "kind": "item", "origin": ""]))?.code == "malformedNativeMessage")
        #expect(
            error(ask(host, ["id": 7, "kind": "item", "origin": "", "itemId": ItemID.random().text]))?.code
                == "itemNotFound")
    }

    @Test func editsGoThroughTheLibraryAndDeletionsCanBeUndone() throws {
        let dir = TemporaryDirectory()
        let ids = try filledVault(dir)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        let host = host(dir.vault)
        let edited =
            result(
                ask(
                    host,
                    [
                        "id": 1, "kind": "updateItem", "origin": "", "itemId": ids.password, "username": "alice2",
                        "password": "a-new-password-77", "notes": "changed in the window",
                    ]))?["item"] as? [String: Any]
        #expect(edited?["username"] as? String == "alice2")
        #expect(edited?["password"] as? String == "a-new-password-77")
        #expect(edited?["notes"] as? String == "changed in the window")
        do {
            let keychain = try open(dir.vault, passphrase: nil, clock: SystemKeychainClock())
            guard case .password(let p) = keychain.item(id: ItemID(text: ids.password)!)?.content else {
                Issue.record("not a password")
                return
            }
            #expect(p.username == "alice2" && p.password == "a-new-password-77")
            #expect(keychain.vaultStatus?.pendingChanges ?? 0 > 0)
        }
        // "" clears notes; absent members stay; the item rules refuse what they refuse for the CLI.
        let cleared =
            result(ask(host, ["id": 2, "kind": "updateItem", "origin": "", "itemId": ids.password, "notes": ""]))?[
                "item"] as? [String: Any]
        #expect(cleared?["notes"] == nil && cleared?["username"] as? String == "alice2")
        let refused = ask(
            host, ["id": 3, "kind": "updateItem", "origin": "", "itemId": ids.password, "username": "bad\u{202E}name"])
        #expect(error(refused)?.code == "invalidItem")
        #expect(
            error(ask(host, ["id": 4, "kind": "updateItem", "origin": "", "itemId": ids.password, "password": ""]))?
                .code == "invalidItem")
        // A passkey is renamed.
        let renamed =
            result(
                ask(host, ["id": 5, "kind": "updateItem", "origin": "", "itemId": ids.passkey, "displayName": "Work"]))?[
                "item"] as? [String: Any]
        #expect(renamed?["displayName"] as? String == "Work")

        // Delete, then undo: the item is back under its own ID with its content.
        let deleted = result(ask(host, ["id": 6, "kind": "deleteItem", "origin": "", "itemId": ids.passkey]))
        #expect(deleted?["deleted"] as? String == ids.passkey)
        #expect(
            error(ask(host, ["id": 7, "kind": "item", "origin": "", "itemId": ids.passkey]))?.code == "itemNotFound")
        let undone = result(ask(host, ["id": 8, "kind": "undoDelete", "origin": "", "itemId": ids.passkey]))
        #expect((undone?["item"] as? [String: Any])?["itemId"] as? String == ids.passkey)
        let back =
            result(ask(host, ["id": 9, "kind": "item", "origin": "", "itemId": ids.passkey]))?["item"]
            as? [String: Any]
        #expect(back?["displayName"] as? String == "Work")
        // Once only; and another host process has nothing to undo.
        #expect(
            error(ask(host, ["id": 10, "kind": "undoDelete", "origin": "", "itemId": ids.passkey]))?.code
                == "itemNotFound")
        _ = ask(host, ["id": 11, "kind": "deleteItem", "origin": "", "itemId": ids.code])
        #expect(
            error(ask(self.host(dir.vault), ["id": 12, "kind": "undoDelete", "origin": "", "itemId": ids.code]))?.code
                == "itemNotFound")
    }

    @Test func exportNeedsVerificationAndImportAddsWhatIsNew() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        let clock = ManualClock(Date())
        try unlockBriefly(dir.vault, clock: clock)
        let host = host(dir.vault)
        let exported = result(ask(host, ["id": 1, "kind": "exportCXF", "origin": ""]))
        let counts = exported?["exported"] as? [String: Int]
        #expect(counts == ["passkey": 1, "password": 2, "code": 1])
        let document = exported?["document"] as? [String: Any]
        #expect((document?["accounts"] as? [Any])?.count == 1)
        let text = String(decoding: try JSONSerialization.data(withJSONObject: document ?? [:]), as: UTF8.self)
        #expect(text.contains("hunter2-hunter2") && text.contains("hmacCredentials"))

        // Into another vault: everything is added; a second time, everything is already there.
        let other = TemporaryDirectory()
        _ = try makeVault(other.vault)
        _ = try Keychain.unlock(other.vault, passphrase: passphrase, policy: fastPolicy)
        let target = self.host(other.vault)
        let imported = result(ask(target, ["id": 2, "kind": "importCXF", "origin": "", "document": document ?? [:]]))
        #expect(imported?["imported"] as? [String: Int] == ["passkey": 1, "password": 2, "code": 1])
        #expect((imported?["failures"] as? [Any])?.isEmpty == true)
        let again = result(ask(target, ["id": 3, "kind": "importCXF", "origin": "", "document": document ?? [:]]))
        #expect(again?["duplicates"] as? Int == 4)
        #expect(
            error(ask(target, ["id": 4, "kind": "importCXF", "origin": "", "document": ["not": "cxf"]]))?.code
                == "invalidCXF")
        #expect(error(ask(target, ["id": 5, "kind": "importCXF", "origin": ""]))?.code == "malformedNativeMessage")
    }

    /// The window's Bitwarden and KeePassXC imports are the CLI's library calls: the same counts, and a file that
    /// does not read refused whole, the vault file unchanged.
    @Test func theWindowImportsBitwardenAndKeePassXCExports() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        let host = host(dir.vault)
        let bitwarden = String(decoding: try BitwardenImportTests.vector(), as: UTF8.self)
        let imported = result(ask(host, ["id": 1, "kind": "importBitwarden", "origin": "", "export": bitwarden]))
        #expect(imported?["imported"] as? [String: Int] == ["passkey": 2, "password": 2, "code": 2])
        #expect((imported?["failures"] as? [Any])?.count == 2)
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.vault.vaultFile))
        let encrypted = #"{"encrypted": true, "passwordProtected": true, "data": "AAAA"}"#
        #expect(
            error(ask(host, ["id": 2, "kind": "importBitwarden", "origin": "", "export": encrypted]))?.code
                == "encryptedExport")
        #expect(
            error(ask(host, ["id": 3, "kind": "importKeePassXC", "origin": "", "export": "\"a,\"b\"\r\n"]))?.code
                == "invalidExport")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.vault.vaultFile)) == before)
        #expect(error(ask(host, ["id": 4, "kind": "importKeePassXC", "origin": ""]))?.code == "malformedNativeMessage")
    }

    @Test func exportIsRefusedOutsideTheVerificationWindow() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        let past = Date().addingTimeInterval(-120)
        _ = try Keychain.unlock(
            dir.vault, passphrase: passphrase, idle: 900, verifyWindow: 60, policy: fastPolicy, clock: ManualClock(past)
        )
        let refused = ask(host(dir.vault), ["id": 1, "kind": "exportCXF", "origin": ""])
        #expect(error(refused)?.code == "userVerificationRequired")
        #expect(error(refused)?.name == "NotAllowedError")
    }

    @Test func aNewPasswordIsAddedForItsSite() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        let host = host(dir.vault)
        let added =
            result(
                ask(
                    host,
                    [
                        "id": 1, "kind": "addPassword", "origin": "", "site": "https://Shop.Example.net/signup",
                        "username": "carol", "password": "generated-pw-123", "notes": "made in the window",
                    ]))?["item"] as? [String: Any]
        #expect(added?["sites"] as? [String] == ["shop.example.net"])
        #expect(added?["password"] as? String == "generated-pw-123")
        #expect(added?["notes"] as? String == "made in the window")
        let listed = result(ask(host, ["id": 2, "kind": "items", "origin": "https://shop.example.net"]))
        #expect((listed?["items"] as? [[String: Any]])?.first?["username"] as? String == "carol")
        #expect(
            error(
                ask(
                    host,
                    [
                        "id": 3, "kind": "addPassword", "origin": "", "site": "not a site", "username": "c",
                        "password": "p",
                    ]))?.code == "invalidItem")
        #expect(
            error(ask(host, ["id": 4, "kind": "addPassword", "origin": "", "site": "example.com", "username": "c"]))?
                .code == "malformedNativeMessage")
    }

    @Test func aCodeGeneratorIsAddedFromItsLink() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        let host = host(dir.vault)
        let uri =
            "otpauth://totp/shop.example.net:carol?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=shop.example.net"
        let added =
            result(ask(host, ["id": 1, "kind": "addCode", "origin": "", "uri": uri]))?["item"]
            as? [String: Any]
        #expect(added?["codeType"] as? String == "totp")
        #expect(added?["sites"] as? [String] == ["shop.example.net"])  // the issuer, a domain
        let other =
            result(
                ask(
                    host,
                    ["id": 2, "kind": "addCode", "origin": "", "uri": Self.codeURI, "site": "https://a.example.org/x"]))?[
                "item"] as? [String: Any]
        #expect((other?["sites"] as? [String])?.first == "a.example.org")  // then the issuer's name, for search
        #expect(
            error(ask(host, ["id": 3, "kind": "addCode", "origin": "", "uri": "otpauth://nope"]))?.code == "invalidItem"
        )
        #expect(error(ask(host, ["id": 4, "kind": "addCode", "origin": ""]))?.code == "malformedNativeMessage")
        let request = try NativeHostRequest(
            json: Array(#"{"id": 5, "kind": "addCode", "origin": "", "uri": "\#(uri)"}"#.utf8))
        #expect(!"\(request)".contains("GEZDGNBV"))
    }

    /// `addCodeQR` is `sesame keychain add-code --qr` for the window: a QR PNG made by the project's own encoder is
    /// read by ``QRReader`` (zbarimg) and added as the link would be; an image without a code, bytes that are not a
    /// PNG or JPEG, and a code that is not an otpauth link are the CLI's errors, and add nothing.
    @Test(.enabled(if: QRReaderTests.zbarimgInstalled, "zbarimg (Debian zbar-tools) is not installed"))
    func aCodeGeneratorIsAddedFromAQRImage() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        let before = try Self.codeCount(dir.vault)
        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)
        let host = host(dir.vault)
        let uri = "otpauth://totp/qr.example.net:dana?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=qr.example.net"
        let png = try QRCode(encoding: uri).png()
        let added =
            result(ask(host, ["id": 1, "kind": "addCodeQR", "origin": "", "image": Data(png).base64EncodedString()]))?[
                "item"] as? [String: Any]
        #expect(added?["codeType"] as? String == "totp")
        #expect(added?["sites"] as? [String] == ["qr.example.net"])  // the issuer, a domain, as from the link
        let withSite =
            result(
                ask(
                    host,
                    [
                        "id": 2, "kind": "addCodeQR", "origin": "", "image": Data(png).base64EncodedString(),
                        "site": "https://b.example.org/x",
                    ]))?["item"] as? [String: Any]
        #expect((withSite?["sites"] as? [String])?.first == "b.example.org")
        // The same generator as the CLI's link gives: the same code at the same time.
        do {  // the vault is closed again before the host opens it
            let keychain = try open(dir.vault)
            let generators = keychain.find("dana", kind: .code)
            #expect(generators.count == 2)
            let time = Date(timeIntervalSince1970: 1_800_000_000)
            let expected = try CodeGenerator(parsing: uri, sites: [])
            if case .totp(let totp) = expected.key.generator, let first = generators.first {
                #expect(try keychain.code(for: first.id, at: time).code == totp.code(at: time))
            }
        }

        _ = try Keychain.unlock(dir.vault, passphrase: passphrase, policy: fastPolicy)  // the check above locked it
        let blank = try QRCode(encoding: "x").png(scale: 1, quietZone: 0).prefix(8) + [UInt8](repeating: 0, count: 8)
        let notOTPAuth = try QRCode(encoding: "https://example.com/").png()
        let refusals: [([UInt8], String)] = [
            (Array(blank), "qrUnreadable"),  // a PNG signature, no image
            (Array("otpauth://totp/a?secret=GEZDGNBV".utf8), "qrUnreadable"),  // not a PNG or JPEG
            (notOTPAuth, "invalidItem"),  // a QR code, not an otpauth link
        ]
        for (index, (image, code)) in refusals.enumerated() {
            #expect(
                error(
                    ask(
                        host,
                        [
                            "id": 10 + index, "kind": "addCodeQR", "origin": "",
                            "image": Data(image).base64EncodedString(),
                        ]
                    ))?.code == code)
        }
        #expect(try Self.codeCount(dir.vault) == before + 2)
    }

    /// How many generators the vault holds; the vault is closed again on return.
    static func codeCount(_ vault: VaultDirectory) throws -> Int {
        let keychain = try open(vault)
        return keychain.find("", kind: .code).count
    }

    /// The image is bounded before it is decoded, and must be base64; its bytes never reach the description.
    @Test func aQRImageRequestIsStrict() throws {
        let big = Data(repeating: 0x89, count: QRReader.maximumImageBytes + 1).base64EncodedString()
        let refused: [String] = [
            #"{"id": 1, "kind": "addCodeQR", "origin": ""}"#,
            #"{"id": 1, "kind": "addCodeQR", "origin": "", "image": ""}"#,
            #"{"id": 1, "kind": "addCodeQR", "origin": "", "image": "not base64!"}"#,
            #"{"id": 1, "kind": "addCodeQR", "origin": "", "image": 7}"#,
            #"{"id": 1, "kind": "addCodeQR", "origin": "", "image": "\#(big)"}"#,
        ]
        for json in refused {
            #expect(throws: KeychainError.self) { try NativeHostRequest(json: Array(json.utf8)) }
        }
        let image = Data(repeating: 0x89, count: QRReader.maximumImageBytes).base64EncodedString()
        let request = try NativeHostRequest(
            json: Array(
                #"{"id": 2, "kind": "addCodeQR", "origin": "", "image": "\#(image)", "site": "a.example"}"#.utf8))
        #expect(request.image?.count == QRReader.maximumImageBytes)
        #expect(request.site == "a.example")
        #expect(!"\(request)".contains("iYmJ"))
        #expect(throws: KeychainError.self) { try QRReader.read(image: Array(request.image ?? []) + [0]) }
    }

    @Test func undoIsKeptForItsTimeOnly() throws {
        let kept = RecentlyDeleted()
        let item = try KeychainItem(content: samplePassword(), created: Date(timeIntervalSince1970: 0))
        let now = Date()
        kept.keep(item, now: now)
        #expect(kept.take(item.id, now: now.addingTimeInterval(Double(RecentlyDeleted.undoSeconds) + 1)) == nil)
        kept.keep(item, now: now)
        #expect(kept.take(item.id, now: now.addingTimeInterval(1)) == item)
    }

    @Test func withoutSessionControlTheSessionRequestsAreRefused() throws {
        let dir = TemporaryDirectory()
        _ = try filledVault(dir)
        let host = NativeHost(suffixes: suffixes) { () throws(KeychainError) -> Keychain in try open(dir.vault) }
        #expect(
            error(ask(host, ["id": 1, "kind": "unlock", "origin": "", "passphrase": passphrase]))?.code == "locked")
        #expect(error(ask(host, ["id": 2, "kind": "unlock", "origin": ""]))?.code == "malformedNativeMessage")
    }
}

extension NativeHostWindowTests {
    /// The fuzz seeds for the window's requests parse, so FuzzNativeMessage starts from requests that reach the
    /// host's answers, not only its refusals.
    @Test func windowSeedsParse() throws {
        let seeds = KeychainFuzzCorpusTests.inputs("FuzzNativeMessage")
        let kinds = Set(seeds.compactMap { try? NativeHostRequest(json: $0).kind })
        #expect(
            kinds.isSuperset(of: [
                .status, .unlock, .lock, .items, .item, .itemCode, .updateItem, .deleteItem, .undoDelete, .exportCXF,
                .importCXF, .syncStatus, .syncNow, .approveDevice, .addPassword, .removeDevice, .addCode,
                .addCodeQR, .get,
            ]))
        for seed in seeds { KeychainFuzzing.nativeMessage(seed) }
    }
}

enum QRReaderTests {
    static let zbarimgInstalled = (try? QRReader.decoder()) != nil
}
