import Foundation
import SesameBytes
import Testing

@testable import WebAuthn

@Suite struct JSONTypesTests {
    static let good = """
        {"id":"AQID","rawId":"AQID","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA",\
        "signature":"AAAA","userHandle":"dXNlcg"},"clientExtensionResults":{}}
        """

    @Test func decodesAuthenticationResponse() throws {
        let r = try AuthenticationResponseJSON.decode(Array(Self.good.utf8))
        #expect(r.rawId.bytes == [1, 2, 3])
        #expect(r.response.userHandle?.bytes == Array("user".utf8))
    }

    @Test(arguments: [
        ("\"rawId\":\"AQID\"", "\"rawId\":\"AQI=\""),  // padded (and a different value)
        ("\"signature\":\"AAAA\"", "\"signature\":\"AA+/\""),  // standard alphabet
        ("\"userHandle\":\"dXNlcg\"", "\"userHandle\":\"dXNlcg==\""),  // padded
        ("\"clientDataJSON\":\"e30\"", "\"clientDataJSON\":\"e3 0\""),  // whitespace
        ("\"clientDataJSON\":\"e30\"", "\"clientDataJSON\":\"e31\""),  // non-zero trailing bits
    ])
    func refusesNonStrictBase64URL(replace: (String, String)) throws {
        let json = Self.good.replacingOccurrences(of: replace.0, with: replace.1)
        let e = expectError(.invalidBase64URL) { _ = try AuthenticationResponseJSON.decode(Array(json.utf8)) }
        #expect(e?.detail.contains("not unpadded base64url") == true)
    }

    /// RFC 4648 §10 test vectors (base64, the same for base64url on these inputs), unpadded.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func encodesRFC4648Vectors(vector: (String, String)) throws {
        #expect(Base64URL.encode(Array(vector.0.utf8)) == vector.1)
        #expect(try Base64URL.decode(vector.1) == Array(vector.0.utf8))
    }

    /// Every length up to 70 and every byte value: the same text as Foundation's base64 with the URL alphabet and
    /// no padding, and it decodes back.
    @Test func encodeMatchesFoundationAndRoundTrips() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes =
                length == 64
                ? Array(0...63).map { UInt8($0 * 4) }
                : (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let reference = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                    of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference)
            #expect(try Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64URL.encode(Array(0...255).map(UInt8.init)).count == 342)
    }

    @Test func refusesIdNotEqualToRawId() {
        let json = Self.good.replacingOccurrences(of: "\"id\":\"AQID\"", with: "\"id\":\"AQIE\"")
        expectError(.credentialIdMismatch) { _ = try AuthenticationResponseJSON.decode(Array(json.utf8)) }
        let padded = Self.good.replacingOccurrences(of: "\"id\":\"AQID\"", with: "\"id\":\"AQID=\"")
        expectError(.invalidBase64URL) { _ = try AuthenticationResponseJSON.decode(Array(padded.utf8)) }
    }

    @Test func refusesWrongType() {
        let json = Self.good.replacingOccurrences(of: "public-key", with: "public-key ")
        expectError(.invalidCredentialType) { _ = try AuthenticationResponseJSON.decode(Array(json.utf8)) }
    }

    @Test func missingMemberNamesIt() {
        let json = Self.good.replacingOccurrences(of: "\"signature\":\"AAAA\",", with: "")
        let e = expectError(.invalidJSON) { _ = try AuthenticationResponseJSON.decode(Array(json.utf8)) }
        #expect(e?.detail.contains("signature") == true)
    }

    @Test func notJSON() {
        expectError(.invalidJSON) { _ = try RegistrationResponseJSON.decode(Array("[1,2".utf8)) }
        expectError(.invalidJSON) { _ = try RegistrationResponseJSON.decode([0xff, 0xfe]) }
    }

    @Test func unknownEnumerationValuesSurvive() throws {
        let d = try JSONDecoder().decode([AuthenticatorTransport].self, from: Data("[\"usb\",\"quantum\"]".utf8))
        #expect(d == [.usb, "quantum"])
    }
}

@Suite struct OriginTests {
    @Test(arguments: [
        ("https://example.org", "https://example.org", true),
        ("https://example.org", "https://EXAMPLE.org", true),
        ("https://example.org", "https://example.org:443", true),
        ("https://example.org:8443", "https://example.org:8443", true),
        ("http://localhost:8080", "http://localhost:8080", true),
        ("https://example.org", "http://example.org", false),
        ("https://example.org", "https://example.org:444", false),
        ("https://example.org", "https://www.example.org", false),
        ("https://example.org", "https://example.org/", false),
        ("https://example.org", "https://example.org/path", false),
        ("https://example.org", "https://user@example.org", false),
        ("https://example.org", "example.org", false),
        ("https://example.org", "", false),
        ("https://[::1]:8443", "https://[::1]:8443", true),
        (
            "android:apk-key-hash:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "android:apk-key-hash:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", true
        ),
        (
            "android:apk-key-hash:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "android:apk-key-hash:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE", false
        ),
        (
            "android:apk-key-hash:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "android:apk-key-hash:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false
        ),
    ])
    func matching(allowed: String, candidate: String, expected: Bool) throws {
        #expect(try AllowedOrigins([allowed]).contains(candidate) == expected)
    }

    @Test(arguments: ["https://example.org/", "example.org", "https://", "android:apk-key-hash:short", "ftp://a b"])
    func badConfigurationRefused(origin: String) {
        expectError(.invalidConfiguration) { _ = try AllowedOrigins([origin]) }
    }

    @Test func challengeComparisonIsExactBytes() throws {
        let c = try CollectedClientData(
            bytes: Array(#"{"type":"webauthn.get","challenge":"AQID","origin":"https://a.example"}"#.utf8))
        #expect(c.challengeMatches([1, 2, 3]))
        #expect(!c.challengeMatches([1, 2, 3, 0]))
        #expect(!c.challengeMatches([1, 2]))
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
    }

    @Test func clientDataIgnoresUnknownMembersAndTokenBinding() throws {
        let c = try CollectedClientData(
            bytes: Array(
                #"{"type":"webauthn.get","challenge":"AQID","origin":"https://a.example","tokenBinding":{"status":"not-supported"},"other":1}"#
                    .utf8))
        #expect(c.origin == "https://a.example")
        expectError(.invalidJSON) {
            _ = try CollectedClientData(bytes: Array(#"{"type":"webauthn.get","challenge":"AQID"}"#.utf8))
        }
        expectError(.invalidJSON) {
            _ = try CollectedClientData(bytes: Array(#"{"type":1,"challenge":"AQID","origin":"x"}"#.utf8))
        }
    }
}
