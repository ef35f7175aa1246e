import Foundation
import Testing

@testable import WebAuthn

/// `JSONReader` and the assertion fast path: what they read equals what Foundation reads from the same bytes, and
/// what they are unsure of they refuse (the caller then decodes with `JSONDecoder`).
struct FastJSONTests {
    static var assertions: [CorpusEntry] { CorpusEntry.all.filter { $0.corpus.ceremony == "authentication" } }

    @Test func everyRealAssertionReadsAsJSONDecoderReadsIt() throws {
        #expect(Self.assertions.count > 10)
        var fast = 0
        for entry in Self.assertions {
            let bytes = Array(entry.responseJSON)
            let value = try #require(JSONReader.read(bytes), "\(entry)")
            let decoded = try? JSONDecoder().decode(AuthenticationResponseJSON.self, from: entry.responseJSON)
            if let read = AuthenticationResponseJSON(fastPath: value) {
                #expect(read == decoded, "\(entry)")
                fast += 1
            }
            // Wrapped as a sign-in body, with the members in another order and whitespace between them.
            let body =
                Data(#"{ "other": [1, {"a": null}] , "credential" : "#.utf8) + entry.responseJSON + Data("}".utf8)
            let inner = try #require(JSONReader.read(Array(body))?["credential"])
            #expect(AuthenticationResponseJSON(fastPath: inner) == AuthenticationResponseJSON(fastPath: value))
        }
        // Browsers' assertions carry no extension outputs: most of the corpus takes the fast path.
        #expect(fast * 2 > Self.assertions.count)
    }

    /// The client data each real response carries reads the same through the fast path as through JSONDecoder.
    @Test func everyRealClientDataReadsAsJSONDecoderReadsIt() throws {
        struct Wire: Decodable, Equatable {
            let type: String
            let challenge: String
            let origin: String
            let crossOrigin: Bool?
            let topOrigin: String?
        }
        #expect(CorpusEntry.all.count > 50)
        for entry in CorpusEntry.all {
            guard let object = try JSONSerialization.jsonObject(with: entry.responseJSON) as? [String: Any],
                let response = object["response"] as? [String: Any],
                let text = response["clientDataJSON"] as? String, let bytes = try? Base64URL.decode(text)
            else { continue }
            let decoded = try? JSONDecoder().decode(Wire.self, from: Data(bytes))
            let parsed = try? CollectedClientData(bytes: bytes)
            #expect((decoded == nil) == (parsed == nil), "\(entry)")
            if let parsed {
                #expect(
                    decoded
                        == Wire(
                            type: parsed.type, challenge: parsed.challenge, origin: parsed.origin,
                            crossOrigin: parsed.crossOrigin, topOrigin: parsed.topOrigin), "\(entry)")
            }
        }
        // Members of another type than the specification's go to JSONDecoder, which refuses them as before.
        for text in [
            #"{"type":"webauthn.get","challenge":"AA","origin":"https://a.example","crossOrigin":"false"}"#,
            #"{"type":"webauthn.get","challenge":1,"origin":"https://a.example"}"#,
            #"{"type":"webauthn.get","challenge":"AA"}"#,
        ] {
            #expect(throws: WebAuthnError.self) { try CollectedClientData(bytes: Array(text.utf8)) }
        }
        let read = try CollectedClientData(
            bytes: Array(
                #"{"type":"webauthn.get","challenge":"AA","origin":"https:\/\/a.example","crossOrigin":null}"#.utf8))
        #expect(read.origin == "https://a.example" && read.crossOrigin == nil && read.topOrigin == nil)
    }

    @Test func extensionOutputsAndWrongTypesGoToJSONDecoder() throws {
        let base =
            #""id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA"}"#
        let taken = try #require(JSONReader.read(Array("{\(base),\"clientExtensionResults\":{}}".utf8)))
        let read = try #require(AuthenticationResponseJSON(fastPath: taken))
        #expect(read.rawId.bytes == [1] && read.response.userHandle == nil && read.authenticatorAttachment == nil)
        for other in [
            #"{\#(base),"clientExtensionResults":{"appid":true}}"#,  // outputs: JSONDecoder reads them
            #"{"id":1,"rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA"}}"#,
            #"{"id":"AQ","rawId":"A=","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA"}}"#,
            #"{"id":"AQ","rawId":"AQ","response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA"}}"#,
            #"{\#(base.replacingOccurrences(of: #""signature":"AA""#, with: #""signature":null"#))}"#,
            #"{\#(base),"authenticatorAttachment":7}"#,
        ] {
            let value = try #require(JSONReader.read(Array(other.utf8)), "\(other)")
            #expect(AuthenticationResponseJSON(fastPath: value) == nil, "\(other)")
        }
    }

    @Test(arguments: [
        #"{"a":"\u00e9\ud83d\ude00\n\t\"\\\/"}"#, "  [1, -0, 0.5, -1.25e+10, 3E-2, true, false, null, {}, []]\r\n",
        #""\u0000""#, "\"é😀\"", "123", String(repeating: "[", count: 32) + String(repeating: "]", count: 32),
    ])
    func acceptsWhatFoundationAccepts(_ text: String) throws {
        let value = try #require(JSONReader.read(Array(text.utf8)))
        let foundation = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        if case .object(let members) = value, let object = foundation as? [String: Any] {
            #expect(members.map(\.key).sorted() == object.keys.sorted())
            #expect(members.first?.value == .string("é😀\n\t\"\\/"))
        }
    }

    @Test(arguments: [
        "", " ", "{", "{}x", "{} {}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "'a'", "01", "-", "1.", ".5", "+1",
        "1e", "1e+", "1e400", "[1,-1e99999]", "0x10", "NaN", "Infinity", "tru", "nul", "\"abc", "\"a\\x\"",
        "\"a\\u12\"", "\"\\ud800\"",
        "\"\\udc00\\ud800\"", "\"\\ud800\\u0041\"", "\"a\u{01}b\"", "\"tab\there\"", "{\"a\":1,\"a\":2}",
        String(repeating: "[", count: 33) + String(repeating: "]", count: 33), "\u{FEFF}{}", "[1] ]",
    ])
    func refusesWhatItIsUnsureOf(_ text: String) {
        #expect(JSONReader.read(Array(text.utf8)) == nil)
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
            [0x22, 0xE2, 0x82, 0x22], [0x5B, 0xC3, 0xA9, 0x5D],
        ] as [[UInt8]])
    func refusesBytesThatAreNotUTF8(_ bytes: [UInt8]) {
        #expect(JSONReader.read(bytes) == nil)
    }

    /// Options written by the fast path are the bytes `JSONEncoder` writes with the server's settings.
    @Test func requestOptionsAreTheBytesJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var generator = SystemRandomNumberGenerator()
        let transports: [AuthenticatorTransport] = [.usb, .nfc, .ble, .hybrid, .internal, "smart-card", "héllo/ü"]
        var written = 0
        for round in 0..<300 {
            let allow: [PublicKeyCredentialDescriptorJSON]? =
                round % 5 == 0
                ? nil
                : (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                    PublicKeyCredentialDescriptorJSON(
                        id: (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0...255) },
                        transports: Bool.random() ? nil : Array(transports.shuffled().prefix(Int.random(in: 0...3))))
                }
            let options = PublicKeyCredentialRequestOptionsJSON(
                challenge: (0..<Int.random(in: 16...64, using: &generator)).map { _ in UInt8.random(in: 0...255) },
                timeout: round % 7 == 0 ? nil : UInt32.random(in: 0...UInt32.max),
                rpId: round % 11 == 0 ? nil : ["localhost", "example.com", "exämple.org", "a/b"][round % 4],
                allowCredentials: allow,
                userVerification: round % 3 == 0 ? nil : [.required, .preferred, .discouraged][round % 3],
                hints: round % 4 == 0
                    ? nil : Array([PublicKeyCredentialHint.securityKey, .clientDevice, .hybrid].prefix(round % 4)))
            let expected = Array(try encoder.encode(options))
            let fast = try #require(options.fastPathJSON())
            #expect(
                fast == expected,
                "\(String(decoding: fast, as: UTF8.self)) != \(String(decoding: expected, as: UTF8.self))")
            written += 1
        }
        #expect(written == 300)
    }

    @Test func optionsWithExtensionsOrEscapesGoToJSONEncoder() {
        var options = PublicKeyCredentialRequestOptionsJSON(challenge: [1, 2, 3], rpId: "example.com")
        #expect(options.fastPathJSON() != nil)
        options.extensions = AuthenticationExtensionsClientInputsJSON()
        #expect(options.fastPathJSON() == nil)
        for rpId in ["quo\"te", "back\\slash", "new\nline", "nul\u{0}"] {
            #expect(PublicKeyCredentialRequestOptionsJSON(challenge: [1], rpId: rpId).fastPathJSON() == nil)
        }
    }

    @Test func refusesInputLongerThanItsLimit() {
        let long =
            Array("\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: JSONReader.maximumLength) + Array("\"".utf8)
        #expect(JSONReader.read(long) == nil)
    }
}
