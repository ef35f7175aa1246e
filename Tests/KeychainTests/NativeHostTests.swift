import Crypto
import Foundation
import Testing
import WebAuthn

@testable import Keychain

/// The browser extension's native host: framing, requests, and the checks that keep one site's passkeys from
/// another (the extension and Chromium are driven end to end in Tests/Interop/test_browser_keychain.py).
@Suite struct NativeHostTests {
    let origin = "https://login.example.com"
    static let codeURI = "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example"

    func host(_ directory: VaultDirectory) -> NativeHost {
        NativeHost(suffixes: suffixes) { () throws(KeychainError) -> Keychain in try open(directory) }
    }

    /// A request as the service worker sends it.
    func request(_ members: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: members))
    }

    func object(_ value: some Encodable) -> Any { try! JSONSerialization.jsonObject(with: Data(json(value))) }

    func reply(_ bytes: [UInt8]) -> [String: Any] {
        try! JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
    }

    func error(_ reply: [String: Any]) -> (name: String, code: String)? {
        guard reply["ok"] as? Bool == false, let error = reply["error"] as? [String: String] else { return nil }
        return (error["name"] ?? "", error["code"] ?? "")
    }

    @Test func framesRoundTripAndRefuseWhatTheyCannotRead() throws {
        let one = try NativeMessageFrame.encode(Array("{\"id\":1}".utf8))
        #expect(one.count == 12)
        #expect(try NativeMessageFrame.split(one + one) == [Array("{\"id\":1}".utf8), Array("{\"id\":1}".utf8)])
        #expect(errorCode { _ = try NativeMessageFrame.split(Array(one.dropLast())) } == .malformedNativeMessage)
        #expect(errorCode { _ = try NativeMessageFrame.split([1, 0]) } == .malformedNativeMessage)
        var tooLong = UInt32(NativeMessageFrame.maximumLength + 1)
        let header = withUnsafeBytes(of: &tooLong) { Array($0) }
        #expect(errorCode { _ = try NativeMessageFrame.length(header: header) } == .nativeMessageTooLarge)
        #expect(
            errorCode {
                _ = try NativeMessageFrame.encode(Array(repeating: 0x20, count: NativeMessageFrame.maximumLength + 1))
            }
                == .nativeMessageTooLarge)
        var exact = UInt32(NativeMessageFrame.maximumLength)
        #expect(try NativeMessageFrame.length(header: withUnsafeBytes(of: &exact) { Array($0) }) == 1 << 20)
    }

    @Test func registersAndSignsInWithTheRelyingPartysOwnChecks() async throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = host(dir.vault)
        let rp = try relyingParty()
        let options = creationOptions(rp)

        let prepared = reply(
            host.reply(
                to: request([
                    "id": 1, "kind": "prepare", "ceremony": "create", "origin": origin, "options": object(options),
                ])))
        #expect(prepared["id"] as? Int == 1)
        #expect((prepared["result"] as? [String: Any])?["rpId"] as? String == "example.com")
        #expect((prepared["result"] as? [String: Any])?["userName"] as? String == "alice")
        #expect(try open(dir.vault).items.isEmpty, "prepare makes nothing")

        let created = reply(
            host.reply(to: request(["id": 2, "kind": "create", "origin": origin, "options": object(options)])))
        let credential = (created["result"] as! [String: Any])["credential"]!
        let response = try RegistrationResponseJSON.decode(
            Array(try JSONSerialization.data(withJSONObject: credential)))
        let registered = try await rp.verifyRegistration(
            response: response, expected: RegistrationExpectation(options: options), now: Date())
        #expect(try open(dir.vault).items.count == 1, "the passkey was saved")

        let requestOptions = rp.makeRequestOptions()
        let listed = reply(
            host.reply(
                to: request([
                    "id": 3, "kind": "prepare", "ceremony": "get", "origin": origin, "options": object(requestOptions),
                ])))
        let accounts = (listed["result"] as! [String: Any])["accounts"] as! [[String: String]]
        #expect(accounts.count == 1)
        #expect(accounts[0]["userName"] == "alice")
        #expect(accounts[0]["credentialId"] == Base64URL.encode(registered.credential.id))

        let signedIn = reply(
            host.reply(
                to: request([
                    "id": 4, "kind": "get", "origin": origin, "options": object(requestOptions),
                    "credentialId": accounts[0]["credentialId"]!,
                ])))
        let assertion = (signedIn["result"] as! [String: Any])["credential"]!
        let authentication = try AuthenticationResponseJSON.decode(
            Array(try JSONSerialization.data(withJSONObject: assertion)))
        _ = try rp.verifyAuthentication(
            response: authentication,
            expected: AuthenticationExpectation(
                options: requestOptions, credential: registered.credential, userHandle: options.user.id.bytes),
            now: Date())
    }

    @Test(arguments: [
        ("com", "rpIdNotAllowed"),  // a public suffix
        ("example.org", "rpIdNotAllowed"),  // another site
        ("ogin.example.com", "rpIdNotAllowed"),  // a string suffix that is not a domain suffix
        ("sub.login.example.com", "rpIdNotAllowed"),  // below the origin's host
    ])
    func refusesAnRPIDThatIsNotARegistrableSuffixOfTheOrigin(rpId: String, code: String) throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = host(dir.vault)
        // The options of a relying party at rpId, sent from a page at login.example.com.
        let rp = try relyingParty(id: rpId, origin: "https://\(rpId)")
        for kind in ["prepare", "create"] {
            let answer = reply(
                host.reply(
                    to: request([
                        "id": 7, "kind": kind, "ceremony": "create", "origin": origin,
                        "options": object(creationOptions(rp)),
                    ])))
            #expect(error(answer)?.name == "SecurityError")
            #expect(error(answer)?.code == code)
            #expect(answer["id"] as? Int == 7)
        }
        #expect(try open(dir.vault).items.isEmpty)
    }

    @Test func oneOriginNeverReachesAnothersPasskey() throws {
        let dir = TemporaryDirectory()
        // The keychain is closed (its directory lock released) before the host opens it.
        let passkey: Passkey = try {
            let (keychain, _) = try makeVault(dir.vault)
            let made = try keychain.createPasskey(
                optionsJSON: json(creationOptions(try relyingParty())), origin: origin, suffixes: suffixes)
            try keychain.save()
            guard case .passkey(let passkey) = made.item.content else { throw KeychainError(.invalidItem) }
            return passkey
        }()
        let id = Base64URL.encode(passkey.credentialId)
        let host = host(dir.vault)
        let other = "https://evil.example.org"
        // Asking for it by its ID, with the RP ID left to the origin: the other site's RP ID is used, no passkey.
        let requestOptions: [String: Any] = [
            "challenge": Base64URL.encode(Array(repeating: 1, count: 32)),
            "allowCredentials": [["type": "public-key", "id": id]],
        ]
        let listed = reply(
            host.reply(
                to: request(["id": 1, "kind": "prepare", "ceremony": "get", "origin": other, "options": requestOptions])
            ))
        #expect(((listed["result"] as? [String: Any])?["accounts"] as? [Any])?.isEmpty == true)
        let asked = reply(
            host.reply(
                to: request(["id": 2, "kind": "get", "origin": other, "options": requestOptions, "credentialId": id])))
        #expect(error(asked)?.name == "NotAllowedError")
        #expect(error(asked)?.code == "noCredential")
        // Naming the first site's RP ID is a SecurityError before any passkey is looked at.
        var named = requestOptions
        named["rpId"] = "example.com"
        let claimed = reply(
            host.reply(to: request(["id": 3, "kind": "get", "origin": other, "options": named, "credentialId": id])))
        #expect(error(claimed)?.name == "SecurityError")
        // The passkey was not used.
        guard case .passkey(let after) = try open(dir.vault).items[0].content else { return }
        #expect(after.lastUsed == nil)
    }

    @Test func malformedRequestsGetTypedRepliesWithTheirId() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = host(dir.vault)
        let cases: [([UInt8], Int?)] = [
            (Array("not json".utf8), nil),
            (Array("[]".utf8), nil),
            (request(["id": 5, "kind": "get", "origin": origin]), 5),  // no options
            (request(["id": 6, "kind": "launch", "origin": origin, "options": [:]]), 6),
            (request(["id": 7, "kind": "prepare", "origin": origin, "options": [:]]), 7),  // no ceremony
            (request(["id": -1, "kind": "get", "origin": origin, "options": [:]]), nil),
            (request(["id": 8, "kind": "get", "origin": origin, "options": [:], "credentialId": "!!"]), 8),
            (request(["id": 9, "kind": "signal", "origin": origin]), 9),
        ]
        for (bytes, id) in cases {
            let answer = reply(host.reply(to: bytes))
            #expect(answer["id"] as? Int == id)
            #expect(error(answer)?.code == "malformedNativeMessage")
        }
        // Well-formed messages with bad options or origins get the browser's errors.
        let badOptions = reply(
            host.reply(to: request(["id": 10, "kind": "get", "origin": origin, "options": ["challenge": 5]])))
        #expect(error(badOptions)?.name == "TypeError")
        let badOrigin = reply(
            host.reply(to: request(["id": 11, "kind": "get", "origin": "http://example.com", "options": [:]])))
        #expect(error(badOrigin)?.name == "SecurityError")
    }

    /// A page's options nested hundreds deep are refused before they are decoded (decoding them took seconds per
    /// request: FuzzNativeMessage's slow unit, in its corpus); the depth WebAuthn options need is read as usual.
    @Test func deeplyNestedRequestsAreRefusedBeforeDecoding() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = host(dir.vault)
        func nested(_ depth: Int) -> Any { depth == 0 ? 1 : ["a": nested(depth - 1)] }
        let deep = reply(host.reply(to: request(["id": 12, "kind": "get", "origin": origin, "options": nested(400)])))
        #expect(deep["id"] as? Int == 12)
        #expect(error(deep)?.code == "malformedNativeMessage")
        // The request, its options and 30 levels inside them: 32, the limit. Read, then refused for the challenge
        // like any other bad options.
        let within = reply(
            host.reply(
                to: request(["id": 13, "kind": "get", "origin": origin, "options": ["challenge": 5, "x": nested(30)]])))
        #expect(error(within)?.name == "TypeError")

        let limit = BrowserJSON.maximumDepth
        let atTheLimit = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(BrowserJSON.nestsWithinLimit(Array(atTheLimit.utf8)))
        #expect(!BrowserJSON.nestsWithinLimit(Array((String(repeating: "[", count: limit + 1) + "]").utf8)))
        // Brackets inside strings, escaped quotes among them, are text.
        let text = "\"" + String(repeating: "{[", count: 40) + "\\\"" + String(repeating: "[", count: 40) + "\""
        #expect(BrowserJSON.nestsWithinLimit(Array("{\"a\":\(text)}".utf8)))
    }

    @Test func aLockedVaultIsNotAllowedAndNamesWhy() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = NativeHost(suffixes: suffixes) { () throws(KeychainError) -> Keychain in
            try open(dir.vault, passphrase: nil)
        }
        let answer = reply(
            host.reply(
                to: request([
                    "id": 1, "kind": "prepare", "ceremony": "get", "origin": origin, "options": ["challenge": "AAAA"],
                ])))
        #expect(error(answer)?.name == "NotAllowedError")
        #expect(error(answer)?.code == "locked")
    }

    @Test func signalsAreCheckedAgainstTheOrigin() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = host(dir.vault)
        let good: [String: Any] = ["rpId": "example.com", "userId": "AQ", "name": "a", "displayName": "A"]
        let ok = reply(
            host.reply(
                to: request([
                    "id": 1, "kind": "signal", "origin": origin, "signal": "signalCurrentUserDetails", "payload": good,
                ])))
        #expect(ok["ok"] as? Bool == true)
        var foreign = good
        foreign["rpId"] = "example.org"
        let refused = reply(
            host.reply(
                to: request([
                    "id": 2, "kind": "signal", "origin": origin, "signal": "signalCurrentUserDetails",
                    "payload": foreign,
                ])))
        #expect(error(refused)?.name == "SecurityError")
        let badId = reply(
            host.reply(
                to: request([
                    "id": 3, "kind": "signal", "origin": origin, "signal": "signalUnknownCredential",
                    "payload": ["rpId": "example.com", "credentialId": "not base64url!"],
                ])))
        #expect(error(badId)?.name == "TypeError")
    }

    @Test func signalsRenameAndNameUnknownPasskeysWhichRemoveTakesAway() throws {
        let dir = TemporaryDirectory()
        let handle: [UInt8] = Array(repeating: 7, count: 16)
        let id: String = try {
            let (keychain, _) = try makeVault(dir.vault)
            let made = try keychain.createPasskey(
                optionsJSON: json(creationOptions(try relyingParty(), userHandle: handle)), origin: origin,
                suffixes: suffixes)
            try keychain.save()
            guard case .passkey(let p) = made.item.content else { throw KeychainError(.invalidItem) }
            return Base64URL.encode(p.credentialId)
        }()
        let host = host(dir.vault)
        func signal(_ name: String, _ payload: [String: Any], from: String? = nil) -> [String: Any] {
            reply(
                host.reply(
                    to: request([
                        "id": 1, "kind": "signal", "origin": from ?? origin, "signal": name, "payload": payload,
                    ])))
        }
        let renamed = signal(
            "signalCurrentUserDetails",
            ["rpId": "example.com", "userId": Base64URL.encode(handle), "name": "alice.b", "displayName": "Alice B"])
        #expect((renamed["result"] as? [String: Any])?["updated"] as? Int == 1)
        guard case .passkey(let after) = try open(dir.vault).items[0].content else { return }
        #expect(after.userName == "alice.b" && after.displayName == "Alice B")

        // Another user's handle changes nothing.
        let other = signal(
            "signalCurrentUserDetails",
            ["rpId": "example.com", "userId": Base64URL.encode([1]), "name": "x", "displayName": "X"])
        #expect((other["result"] as? [String: Any])?["updated"] as? Int == 0)

        // Unknown: named to the extension only for the site that holds it.
        let unknown = signal("signalUnknownCredential", ["rpId": "example.com", "credentialId": id])
        let named = (unknown["result"] as? [String: Any])?["unknown"] as? [[String: String]]
        #expect(named?.first?["credentialId"] == id)
        let elsewhere = signal(
            "signalUnknownCredential", ["rpId": "example.org", "credentialId": id], from: "https://example.org")
        #expect(((elsewhere["result"] as? [String: Any])?["unknown"] as? [Any])?.isEmpty == true)

        // Remove: checked against the origin like everything else.
        let foreign = reply(
            host.reply(
                to: request([
                    "id": 2, "kind": "remove", "origin": "https://example.org", "rpId": "example.com",
                    "credentialId": id,
                ])))
        #expect(error(foreign)?.name == "SecurityError")
        let wrongSite = reply(
            host.reply(
                to: request([
                    "id": 3, "kind": "remove", "origin": "https://example.org", "rpId": "example.org",
                    "credentialId": id,
                ])))
        #expect(error(wrongSite)?.code == "noCredential")
        #expect(try open(dir.vault).items.count == 1)
        let removed = reply(
            host.reply(
                to: request(["id": 4, "kind": "remove", "origin": origin, "rpId": "example.com", "credentialId": id])))
        #expect(removed["ok"] as? Bool == true)
        #expect(try open(dir.vault).items.isEmpty)
    }

    /// §5.1.10.2: the user's passkeys the accepted list leaves out are hidden (kept, never offered, not usable
    /// even when named), the ones it names are shown again, and nobody else's change.
    @Test func allAcceptedCredentialsHidesTheOthersAndShowsThemAgain() throws {
        let dir = TemporaryDirectory()
        let handle: [UInt8] = Array(repeating: 7, count: 16)
        let rp = try relyingParty()
        let (kept, left): (String, String) = try {
            let (keychain, _) = try makeVault(dir.vault)
            let made = try keychain.createPasskey(
                optionsJSON: json(creationOptions(rp, userHandle: handle)), origin: origin, suffixes: suffixes)
            // A second passkey of the same user (as an import or another device's sync brings), and another user's.
            for (user, name) in [(handle, "alice"), ([9, 9], "bob")] {
                _ = try keychain.add(
                    .passkey(
                        Passkey(
                            rpId: "example.com", credentialId: SecureRandom.bytes(16), userHandle: user,
                            userName: name, displayName: name, algorithm: .es256,
                            privateKey: CredentialKey.generate(.es256).rawPrivateKey)))
            }
            try keychain.save()
            guard case .passkey(let p) = made.item.content else { throw KeychainError(.invalidItem) }
            let second = keychain.items.compactMap { item -> String? in
                guard case .passkey(let q) = item.content, q.userHandle == handle, q.credentialId != p.credentialId
                else { return nil }
                return Base64URL.encode(q.credentialId)
            }
            return (Base64URL.encode(p.credentialId), second[0])
        }()
        let host = host(dir.vault)
        func accept(_ ids: [String]) -> Int? {
            let answer = reply(
                host.reply(
                    to: request([
                        "id": 1, "kind": "signal", "origin": origin, "signal": "signalAllAcceptedCredentials",
                        "payload": [
                            "rpId": "example.com", "userId": Base64URL.encode(handle), "allAcceptedCredentialIds": ids,
                        ],
                    ])))
            return (answer["result"] as? [String: Any])?["updated"] as? Int
        }
        func offered() -> [String] {
            let listed = reply(
                host.reply(
                    to: request([
                        "id": 2, "kind": "prepare", "ceremony": "get", "origin": origin,
                        "options": object(rp.makeRequestOptions()),
                    ])))
            let accounts = (listed["result"] as? [String: Any])?["accounts"] as? [[String: String]] ?? []
            return accounts.compactMap { $0["userName"] == "alice" ? $0["credentialId"] : nil }.sorted()
        }
        #expect(offered() == [kept, left].sorted())

        #expect(accept([kept]) == 1)
        #expect(offered() == [kept])
        #expect(try open(dir.vault).items.count == 3, "hidden, not deleted")
        // Named in allowCredentials, a hidden passkey is still not used.
        let named = reply(
            host.reply(
                to: request([
                    "id": 3, "kind": "get", "origin": origin, "credentialId": left,
                    "options": object(
                        rp.makeRequestOptions(
                            allowCredentials: [PublicKeyCredentialDescriptorJSON(id: try Base64URL.decode(left))])),
                ])))
        #expect(error(named)?.code == "noCredential")
        #expect(accept([kept]) == 0, "nothing left to change")
        // Bob's passkey was never touched, and is still offered.
        let hiddenNow = try open(dir.vault).items.filter {
            if case .passkey(let p) = $0.content { return p.hidden }
            return false
        }
        #expect(hiddenNow.count == 1)

        #expect(accept([kept, left]) == 1)
        #expect(offered() == [kept, left].sorted())
    }

    @Test func codesAreOfferedOnlyToTheirSiteAndFilledOnlyThere() throws {
        let dir = TemporaryDirectory()
        let itemId: String = try {
            let (keychain, _) = try makeVault(dir.vault)
            let item = try keychain.add(
                .codeGenerator(try CodeGenerator(parsing: Self.codeURI, sites: ["example.com"])))
            _ = try keychain.add(.codeGenerator(try CodeGenerator(parsing: Self.codeURI, sites: ["example.org"])))
            try keychain.save()
            return item.id.text
        }()
        let host = host(dir.vault)
        let listed = reply(host.reply(to: request(["id": 1, "kind": "codes", "origin": origin])))
        let generators = (listed["result"] as? [String: Any])?["generators"] as? [[String: String]]
        #expect(generators?.map { $0["itemId"] } == [itemId])
        let code = reply(host.reply(to: request(["id": 2, "kind": "code", "origin": origin, "itemId": itemId])))
        let text = (code["result"] as? [String: Any])?["code"] as? String
        #expect(text?.count == 6 && text?.allSatisfy(\.isNumber) == true)
        // Another site cannot have it filled, even naming its ID.
        let elsewhere = reply(
            host.reply(to: request(["id": 3, "kind": "code", "origin": "https://example.net", "itemId": itemId])))
        #expect(error(elsewhere)?.code == "itemNotFound")
        let none = reply(host.reply(to: request(["id": 4, "kind": "codes", "origin": "https://example.net"])))
        #expect(((none["result"] as? [String: Any])?["generators"] as? [Any])?.isEmpty == true)
    }

    @Test func passwordsAreOfferedAndGivenOnlyToTheirSite() throws {
        let dir = TemporaryDirectory()
        let itemId: String = try {
            let (keychain, _) = try makeVault(dir.vault)
            let item = try keychain.add(samplePassword("example.com", user: "alice", password: "hunter2-hunter2"))
            _ = try keychain.add(samplePassword("example.org", user: "mallory"))
            try keychain.save()
            return item.id.text
        }()
        let host = host(dir.vault)
        let listed = reply(host.reply(to: request(["id": 1, "kind": "passwords", "origin": origin])))
        let saved = (listed["result"] as? [String: Any])?["passwords"] as? [[String: String]]
        #expect(saved == [["itemId": itemId, "username": "alice"]], "user names only, and only this site's")
        let given = reply(host.reply(to: request(["id": 2, "kind": "password", "origin": origin, "itemId": itemId])))
        #expect((given["result"] as? [String: String])?["password"] == "hunter2-hunter2")
        let elsewhere = reply(
            host.reply(to: request(["id": 3, "kind": "password", "origin": "https://example.net", "itemId": itemId])))
        #expect(error(elsewhere)?.code == "itemNotFound")
    }

    @Test func aSavedPasswordIsAddedOnceThenUpdated() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(dir.vault)
        let host = host(dir.vault)
        for (id, secret) in [(1, "first-password"), (2, "second-password")] {
            let saved = reply(
                host.reply(
                    to: request([
                        "id": id, "kind": "savePassword", "origin": origin, "username": "alice", "password": secret,
                    ])))
            #expect(saved["ok"] as? Bool == true)
        }
        let items = try open(dir.vault).items
        #expect(items.count == 1)
        guard case .password(let p) = items.first?.content else { Issue.record("not a password"); return }
        #expect(p.sites == ["login.example.com"] && p.username == "alice" && p.password == "second-password")
        let empty = reply(
            host.reply(
                to: request(["id": 3, "kind": "savePassword", "origin": origin, "username": "a", "password": ""])))
        #expect(error(empty)?.code == "malformedNativeMessage")
    }

    /// The extension ID the host manifest allows is the one Chromium derives from the key in manifest.json.
    @Test func extensionIdMatchesTheManifestKey() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("Extensions/browser/manifest.json"))
        let manifest = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let key = try #require(Data(base64Encoded: manifest["key"] as! String))
        let digest = Array(SHA256.hash(data: key)).prefix(16)
        let id = String(
            digest.flatMap { [$0 >> 4, $0 & 0x0f] }.map { Character(UnicodeScalar(UInt8(ascii: "a") + $0)) })
        #expect(id == BrowserExtension.chromiumId)
        let gecko = (manifest["browser_specific_settings"] as? [String: [String: String]])?["gecko"]?["id"]
        #expect(gecko == BrowserExtension.firefoxId)
    }

    @Test func hostManifestsGoWhereEachBrowserLooks() throws {
        let env = ["HOME": "/home/ada", "XDG_CONFIG_HOME": "/home/ada/.config"]
        #expect(
            try BrowserExtension.manifestDirectory(for: .chromium, userDataDir: "/tmp/profile", environment: env)
                == "/tmp/profile/NativeMessagingHosts")
        #expect(
            try BrowserExtension.manifestDirectory(for: .chromium, userDataDir: nil, environment: env)
                == "/home/ada/.config/chromium/NativeMessagingHosts")
        #expect(
            try BrowserExtension.manifestDirectory(for: .chrome, userDataDir: nil, environment: ["HOME": "/h"])
                == "/h/.config/google-chrome/NativeMessagingHosts")
        #expect(
            try BrowserExtension.manifestDirectory(for: .firefox, userDataDir: nil, environment: env)
                == "/home/ada/.mozilla/native-messaging-hosts")
        #expect(
            errorCode { _ = try BrowserExtension.manifestDirectory(for: .firefox, userDataDir: "/p", environment: env) }
                == .invalidDirectory)
        let chromium =
            try JSONSerialization.jsonObject(
                with: Data(BrowserExtension.hostManifest(for: .chromium, launcher: "/x/host"))) as! [String: Any]
        #expect(chromium["allowed_origins"] as? [String] == ["chrome-extension://\(BrowserExtension.chromiumId)/"])
        #expect(chromium["name"] as? String == BrowserExtension.hostName)
        let firefox =
            try JSONSerialization.jsonObject(
                with: Data(BrowserExtension.hostManifest(for: .firefox, launcher: "/x/host"))) as! [String: Any]
        #expect(firefox["allowed_extensions"] as? [String] == [BrowserExtension.firefoxId])
        let launcher = String(
            decoding: BrowserExtension.launcher(executable: "/opt/it's/sesame", arguments: []), as: UTF8.self)
        #expect(launcher.contains("exec '/opt/it'\\''s/sesame' 'keychain' 'native-host' \"$@\""))
    }
}
