import Foundation
import Testing

@testable import WebAuthn

/// Options built by `RelyingParty` use the Level 3 JSON member names and carry what verification needs.
@Suite struct OptionsBuilderTests {
    @Test func creationOptionsEncodeLevel3Names() throws {
        let rp = RelyingParty(
            configuration: try RelyingPartyConfiguration(
                id: "example.org", name: "Example", origins: ["https://example.org"]))
        let options = rp.makeCreationOptions(
            user: PublicKeyCredentialUserEntityJSON(id: [1, 2, 3, 4], name: "ada", displayName: "Ada"),
            excludeCredentials: [PublicKeyCredentialDescriptorJSON(id: [9, 9], transports: [.usb, .nfc])],
            residentKey: .required, hints: [.securityKey],
            extensions: AuthenticationExtensionsClientInputsJSON(
                credProps: true, prf: .init(eval: .init(first: [0xaa])), largeBlob: .init(support: .preferred)))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(options)) as? [String: Any]
        let object = try #require(json)
        #expect((object["rp"] as? [String: Any])?["id"] as? String == "example.org")
        #expect((object["user"] as? [String: Any])?["id"] as? String == "AQIDBA")
        #expect((object["challenge"] as? String).map { (try? Base64URL.decode($0))?.count } == 32)
        let params = try #require(object["pubKeyCredParams"] as? [[String: Any]])
        #expect(params.map { $0["alg"] as? Int } == [-8, -7, -257])
        #expect(params.allSatisfy { $0["type"] as? String == "public-key" })
        let selection = try #require(object["authenticatorSelection"] as? [String: Any])
        #expect(selection["residentKey"] as? String == "required")
        #expect(selection["requireResidentKey"] as? Bool == true)
        #expect(selection["userVerification"] as? String == "preferred")
        #expect(object["hints"] as? [String] == ["security-key"])
        #expect(object["attestation"] as? String == "none")
        #expect(object["timeout"] as? Int == 300_000)
        let exclude = try #require(object["excludeCredentials"] as? [[String: Any]])
        #expect(exclude.first?["id"] as? String == "CQk")
        #expect(exclude.first?["transports"] as? [String] == ["usb", "nfc"])
        let ext = try #require(object["extensions"] as? [String: Any])
        #expect(ext["credProps"] as? Bool == true)
        #expect(((ext["prf"] as? [String: Any])?["eval"] as? [String: Any])?["first"] as? String == "qg")
        #expect((ext["largeBlob"] as? [String: Any])?["support"] as? String == "preferred")
        // Two option sets never share a challenge.
        let again = rp.makeCreationOptions(user: options.user)
        #expect(again.challenge != options.challenge)
        // And the expectation built from the options carries what verification needs.
        let e = RegistrationExpectation(options: options)
        #expect(e.challenge == options.challenge.bytes)
        #expect(e.allowedAlgorithms == [.edDSA, .es256, .rs256])
    }

    @Test func requestOptionsRoundTrip() throws {
        let rp = RelyingParty(
            configuration: try RelyingPartyConfiguration(
                id: "example.org", name: "Example", origins: ["https://example.org"]))
        let options = rp.makeRequestOptions(
            allowCredentials: [PublicKeyCredentialDescriptorJSON(id: [7], transports: [.internal])],
            userVerification: .required, extensions: .init(appid: "https://example.org/appid.json"))
        let decoded = try JSONDecoder().decode(
            PublicKeyCredentialRequestOptionsJSON.self, from: JSONEncoder().encode(options))
        #expect(decoded == options)
        #expect(decoded.rpId == "example.org")
        let e = AuthenticationExpectation(
            options: decoded,
            credential: CredentialRecord(
                id: [7], publicKey: [], signCount: 0, backupEligible: false, backupState: false, uvInitialized: false),
            userHandle: [1])
        #expect(e.allowCredentials == [[7]])
        #expect(e.userVerification == .required)
        #expect(e.appid == "https://example.org/appid.json")
    }

    @Test(arguments: [
        ("example.org", "https://example.org", true),
        ("example.org", "https://login.example.org:8443", true),
        ("example.org", "https://EXAMPLE.org", true),
        ("localhost", "http://localhost:8080", true),
        ("example.org", "https://example.com", false),
        ("example.org", "https://badexample.org", false),
        ("login.example.org", "https://example.org", false),
    ])
    func originsMustBeUnderTheRPID(rpId: String, origin: String, ok: Bool) {
        let result = Result { () throws(WebAuthnError) in
            try RelyingPartyConfiguration(id: rpId, name: "x", origins: [origin])
        }
        if ok {
            #expect((try? result.get()) != nil)
        } else {
            expectError(.invalidConfiguration) { _ = try result.get() }
        }
    }

    @Test func androidOriginsAreNotTiedToTheRPID() throws {
        _ = try RelyingPartyConfiguration(
            id: "example.org", name: "x",
            origins: ["https://example.org", "android:apk-key-hash:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
    }
}
