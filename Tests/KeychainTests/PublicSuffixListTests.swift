import Foundation
import Testing

@testable import Keychain

@Suite struct PublicSuffixListTests {
    static let sample = """
        // comment
        com
        uk
        co.uk
        *.ck
        !www.ck
        github.io  trailing text is ignored
        公司.cn
        cn

        // ===BEGIN PRIVATE DOMAINS===
        blogspot.com
        """

    @Test func lookupFollowsTheAlgorithm() throws {
        let list = try PublicSuffixList(bytes: Array(Self.sample.utf8))
        #expect(list.publicSuffix(of: "example.com") == "com")
        #expect(list.publicSuffix(of: "a.b.example.co.uk") == "co.uk")
        #expect(list.publicSuffix(of: "foo.bar.ck") == "bar.ck")  // wildcard
        #expect(list.publicSuffix(of: "www.ck") == "ck")  // exception
        #expect(list.publicSuffix(of: "x.www.ck") == "ck")
        #expect(list.publicSuffix(of: "example.unlisted") == "unlisted")  // the implicit "*" rule
        #expect(list.publicSuffix(of: "shop.xn--55qx5d.cn") == "xn--55qx5d.cn")  // Unicode rule in Punycode
        #expect(list.publicSuffix(of: "me.blogspot.com") == "blogspot.com")
        #expect(list.isPublicSuffix("github.io"))
        #expect(!list.isPublicSuffix("user.github.io"))
        #expect(list.registrableDomain(of: "a.b.example.co.uk") == "example.co.uk")
        #expect(list.registrableDomain(of: "co.uk") == nil)
        #expect(list.registrableDomain(of: "localhost") == nil)
    }

    @Test(arguments: [
        "*.*.com\n", "a..b\n", "!*.ck\n", "!com\n", "ex_ample\n", "a*.com\n",
        String(repeating: "a", count: 64) + ".com\n", "// only comments\n",
    ])
    func malformedListsAreRefusedWhole(_ text: String) {
        #expect(errorCode { _ = try PublicSuffixList(bytes: Array(text.utf8)) } == .invalidPublicSuffixList)
    }

    @Test func nonUTF8IsRefused() {
        #expect(
            errorCode { _ = try PublicSuffixList(bytes: [0x63, 0x6f, 0x6d, 0xff, 0x0a]) } == .invalidPublicSuffixList)
    }

    @Test func missingFileIsUnavailable() {
        #expect(
            errorCode { _ = try PublicSuffixList.load(path: "/nonexistent/list.dat") } == .publicSuffixListUnavailable)
    }

    @Test(.enabled(if: systemListPresent, "Debian's publicsuffix package is not installed (scripts/test installs it)"))
    func debianListParses() throws {
        let list = try PublicSuffixList.load()
        #expect(list.count > 5000)
        #expect(list.isPublicSuffix("co.uk"))
        #expect(list.isPublicSuffix("github.io"))
        #expect(list.publicSuffix(of: "www.example.com") == "com")
        #expect(list.registrableDomain(of: "login.example.co.uk") == "example.co.uk")
    }

    /// RFC 3492 §7.1 sample strings, and labels whose ASCII forms browsers use.
    @Test(arguments: [
        ("bücher", "xn--bcher-kva"), ("münchen", "xn--mnchen-3ya"), ("公司", "xn--55qx5d"), ("example", "example"),
        (
            "\u{644}\u{64A}\u{647}\u{645}\u{627}\u{628}\u{62A}\u{643}\u{644}\u{645}\u{648}\u{634}\u{639}\u{631}\u{628}\u{64A}\u{61F}",
            "xn--egbpdaj6bu4bxfgehfvwxn"
        ),
    ])
    func punycode(_ unicode: String, _ ascii: String) {
        #expect(Punycode.asciiLabel(unicode) == ascii)
    }
}

@Suite struct WebOriginTests {
    static let list = try! PublicSuffixList(bytes: Array(PublicSuffixListTests.sample.utf8))

    @Test(arguments: [
        ("https://example.com", "https://example.com"), ("https://Login.Example.com:443", "https://login.example.com"),
        ("https://example.com:8443/", "https://example.com:8443"), ("http://localhost:8080", "http://localhost:8080"),
        ("http://app.localhost", "http://app.localhost"),
    ])
    func originsParse(_ text: String, _ serialised: String) throws {
        #expect(try WebOrigin(text).description == serialised)
    }

    @Test(arguments: [
        "example.com", "ftp://example.com", "http://example.com", "https://example.com/path",
        "https://user@example.com",
        "https://example.com?q", "https://127.0.0.1", "https://[::1]", "https://exa mple.com", "https://example.com:0",
        "https://example.com:99999", "https://bücher.example", "https://", "https://example.com:08080",
    ])
    func originsRefused(_ text: String) {
        #expect(errorCode { _ = try WebOrigin(text) } == .invalidOrigin)
    }

    @Test(
        arguments: [
            ("https://login.example.com", nil, "login.example.com"),
            ("https://login.example.com", "example.com", "example.com"),
            ("https://login.example.com", "LOGIN.example.com", "login.example.com"),
            ("https://a.b.example.co.uk", "example.co.uk", "example.co.uk"),
            ("https://user.github.io", "user.github.io", "user.github.io"),
            ("http://localhost:8080", "localhost", "localhost"),
        ] as [(String, String?, String)])
    func rpIdsAccepted(_ origin: String, _ rpId: String?, _ expected: String) throws {
        #expect(try WebOrigin(origin).relyingPartyId(rpId, suffixes: Self.list) == expected)
    }

    @Test(arguments: [
        ("https://login.example.com", "com"),  // a public suffix
        ("https://a.b.example.co.uk", "co.uk"),  // a multi-label public suffix
        ("https://user.github.io", "github.io"),  // a private-section public suffix
        ("https://login.example.com", "other.com"),  // not a suffix of the host
        ("https://login.example.com", "ogin.example.com"),  // a string suffix, not a label suffix
        ("https://example.com", "login.example.com"),  // more specific than the host
        ("https://github.io", "github.io"),  // the host is itself a public suffix
        ("https://login.example.com", "exa mple.com"),
        ("http://app.localhost", "localhost"),
    ])
    func rpIdsRefused(_ origin: String, _ rpId: String) throws {
        let parsed = try WebOrigin(origin)
        #expect(errorCode { _ = try parsed.relyingPartyId(rpId, suffixes: Self.list) } == .rpIdNotAllowed)
    }
}
