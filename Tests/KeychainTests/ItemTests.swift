import CBOR
import Foundation
import OneTimeCode
import Testing

@testable import Keychain

@Suite struct ItemTests {
    static let created = Date(timeIntervalSince1970: 1_800_000_000.123)

    static func items() throws -> [KeychainItem] {
        let key = CredentialKey.generate(.es256)
        return [
            try KeychainItem(content: samplePassword(), notes: "line one\nline two", created: created),
            try KeychainItem(
                content: .password(
                    Password(sites: ["a.example", "b.example"], username: "", password: "pw-\u{1F511}")),
                created: created),
            try KeychainItem(content: sampleCode(), created: created),
            try KeychainItem(
                content: sampleCode(
                    "otpauth://hotp/bank.example:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=7&digits=8"),
                created: created),
            try KeychainItem(
                content: .passkey(
                    Passkey(
                        rpId: "example.com", credentialId: Array(repeating: 9, count: 48), userHandle: [1, 2, 3],
                        userName: "alice@example.com", displayName: "Alice", algorithm: .es256,
                        privateKey: key.rawPrivateKey,
                        lastUsed: created)),
                created: created),
            try KeychainItem(
                content: .passkey(
                    Passkey(
                        rpId: "example.com", credentialId: [4], userHandle: [5], userName: "", displayName: "",
                        algorithm: .edDSA, privateKey: CredentialKey.generate(.edDSA).rawPrivateKey, hidden: true)),
                created: created),
        ]
    }

    /// A shown passkey has no "hidden" member and a hidden one `true`; `false` is refused, since it would not
    /// re-encode to the bytes it came from.
    @Test func hiddenIsWrittenOnlyWhenTrue() throws {
        let items = try Self.items().filter { $0.kind == .passkey }
        let members = items.map { item -> [CBOR] in
            guard case .map(let entries) = ItemCoding.cbor(item) else { return [] }
            return entries.filter { $0.key == .textString("hidden") }.map(\.value)
        }
        #expect(members == [[], [.boolean(true)]])
        guard case .map(var entries) = ItemCoding.cbor(items[1]) else { return }
        entries.removeAll { $0.key == .textString("hidden") }
        entries.append(CBORMapEntry("hidden", .boolean(false)))
        #expect(errorCode { _ = try ItemCoding.decode(CBOREncoder.encode(.map(entries))) } == .malformedRecord)
    }

    @Test func itemsRoundTripThroughTheirPlaintext() throws {
        for item in try Self.items() {
            let decoded = try ItemCoding.decode(ItemCoding.encode(item))
            #expect(decoded == item)
        }
    }

    @Test func timesAreKeptInMilliseconds() throws {
        let item = try KeychainItem(content: samplePassword(), created: Self.created)
        #expect(item.created.timeIntervalSince1970 == 1_800_000_000.123)
    }

    @Test func decodingRefusesUnknownMembersAndWrongTypes() throws {
        let item = try KeychainItem(content: samplePassword(), created: Self.created)
        guard case .map(var entries) = ItemCoding.cbor(item) else { Issue.record("not a map"); return }
        var extra = entries
        extra.append(CBORMapEntry("legacy", .boolean(true)))
        #expect(errorCode { _ = try ItemCoding.decode(CBOREncoder.encode(.map(extra))) } == .malformedRecord)
        entries.removeAll { $0.key == .textString("password") }
        entries.append(CBORMapEntry("password", .byteString([1])))
        #expect(errorCode { _ = try ItemCoding.decode(CBOREncoder.encode(.map(entries))) } == .malformedRecord)
        #expect(errorCode { _ = try ItemCoding.decode([0xff]) } == .malformedRecord)
    }

    /// Every whole millisecond from year 1 to 9999 survives `Date` and back (the fuzzer found that times beyond
    /// that range did not, so a session or item re-encoded to other bytes).
    @Test func millisecondsSurviveDates() {
        var edges: [Int64] = [ItemTime.range.lowerBound, ItemTime.range.upperBound, 0, 1, -1, 1_800_000_000_123, 999]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let span = UInt64(ItemTime.range.upperBound - ItemTime.range.lowerBound)
            edges.append(ItemTime.range.lowerBound + Int64((state >> 1) % span))
        }
        for ms in edges {
            #expect(ItemTime.date(checkedMilliseconds: ms).map(ItemTime.milliseconds) == ms, "\(ms)")
        }
        #expect(ItemTime.date(checkedMilliseconds: ItemTime.range.upperBound + 1) == nil)
        #expect(ItemTime.date(checkedMilliseconds: Int64.min) == nil)
    }

    @Test(arguments: [CBOR.unsigned(UInt64(Int64.max)), .unsigned(253_402_300_800_000), .negative(62_135_596_800_000)])
    func timesOutsideYearsOneTo9999AreRefused(_ time: CBOR) throws {
        let item = try KeychainItem(content: samplePassword(), created: Self.created)
        guard case .map(var entries) = ItemCoding.cbor(item) else { Issue.record("not a map"); return }
        entries.removeAll { $0.key == .textString("created") }
        func encoded(_ created: CBOR) -> [UInt8] {
            let members = entries + [CBORMapEntry("created", created)]
            return CBOREncoder.encode(
                .map(
                    members.sorted { CBOREncoder.encode($0.key).lexicographicallyPrecedes(CBOREncoder.encode($1.key)) })
            )
        }
        #expect(try ItemCoding.decode(encoded(.unsigned(1_800_000_000_123))).created == Self.created)
        #expect(errorCode { _ = try ItemCoding.decode(encoded(time)) } == .malformedRecord)
    }

    @Test func validationRefusesBadFields() {
        #expect(
            errorCode { _ = try KeychainItem(content: samplePassword("not a site!"), created: Self.created) }
                == .invalidItem)
        #expect(
            errorCode { _ = try KeychainItem(content: samplePassword(user: "a\u{202E}b"), created: Self.created) }
                == .invalidItem)
        #expect(
            errorCode {
                _ = try KeychainItem(
                    content: samplePassword(password: String(repeating: "x", count: 5000)), created: Self.created)
            } == .invalidItem)
        #expect(
            errorCode {
                _ = try KeychainItem(
                    content: .passkey(
                        Passkey(
                            rpId: "Example.COM", credentialId: [1], userHandle: [1], userName: "", displayName: "",
                            algorithm: .es256, privateKey: Array(repeating: 1, count: 32))), created: Self.created)
            } == .invalidItem)
        #expect(
            errorCode {
                _ = try KeychainItem(
                    content: .passkey(
                        Passkey(
                            rpId: "example.com", credentialId: [1], userHandle: [1], userName: "", displayName: "",
                            algorithm: .es256, privateKey: Array(repeating: 0xff, count: 32))), created: Self.created)
            } == .invalidItem)
    }

    @Test(arguments: [
        ("example.com", "example.com"), ("https://Example.COM/login?x=1", "example.com"),
        ("user@mail.example.org:8443", "mail.example.org"), ("example.com.", "example.com"),
    ])
    func siteNamesNormalise(_ input: String, _ expected: String) {
        #expect(SiteName.normalise(input) == expected)
    }

    @Test(arguments: ["", "exa mple.com", "-bad.com", "https://", "ex_ample.com"])
    func siteNamesRefused(_ input: String) {
        #expect(SiteName.normalise(input) == nil)
    }

    @Test func descriptionsRedactSecrets() throws {
        for item in try Self.items() {
            let text = "\(item.content) \(String(describing: item))"
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("GEZDGNBV"))
            if case .passkey(let p) = item.content {
                #expect(!String(describing: p).contains(p.privateKey.map { String($0) }.joined()))
                #expect(String(describing: p).contains("redacted"))
            }
        }
    }
}

/// How `sesame keychain show|delete|code|share QUERY` picks items.
@Suite struct FindTests {
    @Test func queriesMatchIdsSitesAndNames() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let work = try keychain.add(samplePassword("mail.example.com", user: "alice"))
        let home = try keychain.add(samplePassword("example.org", user: "Bob"))
        let code = try keychain.add(sampleCode())

        #expect(try keychain.item(matching: work.id.text).id == work.id)
        #expect(try keychain.item(matching: String(home.id.text.prefix(4)).uppercased()).id == home.id)
        #expect(try keychain.item(matching: "MAIL.example").id == work.id)
        #expect(try keychain.item(matching: "bob").id == home.id)
        #expect(try keychain.item(matching: "alice", kind: .code).id == code.id)
        #expect(Set(keychain.find("", kind: .password).map(\.id)) == [work.id, home.id])
        #expect(keychain.find("example").count == 3)  // two sites and the issuer
        #expect(errorCode { _ = try keychain.item(matching: "alice") } == .ambiguousItem)
        #expect(errorCode { _ = try keychain.item(matching: "nowhere.example") } == .itemNotFound)
        // Fewer than 4 characters never select by ID, so a short query cannot pick an item by chance.
        let short = String(work.id.text.prefix(3))
        #expect(keychain.find(short).allSatisfy { $0.sites.joined().contains(short) || $0.searchText.contains(short) })
    }
}
