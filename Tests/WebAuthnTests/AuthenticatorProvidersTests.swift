import Foundation
import Testing

@testable import WebAuthn

/// `AuthenticatorProviders`: the AAGUID → name and icons table, in the shape of the community AAGUID list
/// (github.com/passkeydeveloper/passkey-authenticator-aaguids, `aaguid.json.schema`). The documents here are made
/// up for the tests; the real list is checked in `SesameServerTests` (ProviderIconTests), which ships it.
@Suite struct AuthenticatorProvidersTests {
    static let svg = ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="10" fill="#123456"/></svg>"##
    /// The 8-byte PNG signature followed by an IHDR chunk header: enough for the signature check.
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]

    static func dataURI(_ type: String, _ bytes: [UInt8]) -> String {
        "data:\(type);base64,\(Data(bytes).base64EncodedString())"
    }

    static func svgURI(_ text: String) -> String { dataURI("image/svg+xml", Array(text.utf8)) }

    static func document(_ entries: [String: [String: String]]) throws -> [UInt8] {
        [UInt8](try JSONSerialization.data(withJSONObject: entries))
    }

    static func id(_ text: String) throws -> AAGUID {
        guard let aaguid = AAGUID(uuidString: text) else { throw WebAuthnError(.invalidOptions, detail: "test AAGUID \(text)") }
        return aaguid
    }

    static let first = "fbfc3007-154e-4ecc-8c0b-6e020557d7bd"
    static let second = "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"

    @Test func readsNamesAndBothIconKinds() throws {
        let providers = try AuthenticatorProviders(json: Self.document([
            Self.first: ["name": "  Keychain  ", "icon_light": Self.svgURI(Self.svg), "icon_dark": Self.dataURI("image/png", Self.png)],
            Self.second: ["name": "Manager"],
        ]))
        #expect(providers.count == 2)
        let keychain = try #require(providers[try Self.id(Self.first)])
        #expect(keychain.name == "Keychain")
        #expect(keychain.lightIcon?.mediaType == .svg)
        #expect(keychain.lightIcon?.bytes == Array(Self.svg.utf8))
        #expect(keychain.darkIcon?.mediaType == .png)
        #expect(keychain.darkIcon?.bytes == Self.png)
        // Upper-case AAGUIDs in a document are the same AAGUID.
        let manager = try #require(providers[try Self.id(Self.second.uppercased())])
        #expect(manager.name == "Manager" && manager.lightIcon == nil && manager.darkIcon == nil)
    }

    @Test func unknownAndZeroAAGUIDsHaveNoProvider() throws {
        let providers = try AuthenticatorProviders(json: Self.document([
            "00000000-0000-0000-0000-000000000000": ["name": "Nobody"],
            Self.first: ["name": "Keychain"],
        ]))
        #expect(providers[.zero] == nil)
        #expect(providers[try Self.id(Self.second)] == nil)
    }

    /// Each of these icons is dropped (the provider keeps its name).
    @Test(arguments: [
        ("jpeg", dataURI("image/jpeg", [0xFF, 0xD8, 0xFF, 0xE0])),
        ("gif", dataURI("image/gif", Array("GIF89a".utf8))),
        ("not base64", "data:image/svg+xml;base64,%3Csvg%3E"),
        ("url-encoded, not base64", "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E"),
        ("remote URL", "https://example.com/icon.svg"),
        ("upper-case media type", dataURI("IMAGE/SVG+XML", Array(svg.utf8))),
        ("empty", "data:image/png;base64,"),
        ("png without its signature", dataURI("image/png", Array(svg.utf8))),
        ("svg that is not SVG", svgURI("<html><body>hello</body></html>")),
        ("svg that is not UTF-8", dataURI("image/svg+xml", [0x3C, 0x73, 0x76, 0x67, 0xFF, 0xFE, 0x3E])),
        ("svg with script", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#)),
        ("svg with SCRIPT", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><SCRIPT>alert(1)</SCRIPT></svg>"#)),
        ("svg with onload", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>"#)),
        ("svg with spaced onclick", svgURI("<svg xmlns=\"http://www.w3.org/2000/svg\">\n<rect\tonclick = \"x()\"/></svg>")),
        ("svg with javascript: link", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><a href="JavaScript:alert(1)"><rect/></a></svg>"#)),
        ("svg with foreignObject", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><iframe/></foreignObject></svg>"#)),
    ])
    func refusedIconsAreDropped(_ why: String, _ uri: String) throws {
        let providers = try AuthenticatorProviders(json: Self.document([Self.first: ["name": "Keychain", "icon_light": uri, "icon_dark": uri]]))
        let provider = try #require(providers[try Self.id(Self.first)], "\(why)")
        #expect(provider.name == "Keychain")
        #expect(provider.lightIcon == nil, "\(why)")
        #expect(provider.darkIcon == nil, "\(why)")
        #expect(ProviderIcon(dataURI: uri) == nil, "\(why)")
    }

    @Test func sizeCapIsInclusiveAndCheckedBeforeDecoding() throws {
        let body = Self.png + [UInt8](repeating: 0, count: 1000 - Self.png.count)
        #expect(ProviderIcon(dataURI: Self.dataURI("image/png", body), maxBytes: 1000)?.bytes.count == 1000)
        #expect(ProviderIcon(dataURI: Self.dataURI("image/png", body + [0]), maxBytes: 1000) == nil)
        #expect(ProviderIcon(dataURI: Self.dataURI("image/png", body), maxBytes: 999) == nil)
        // A huge data URI is refused by its length alone.
        let huge = "data:image/png;base64," + String(repeating: "A", count: 10_000_000)
        #expect(ProviderIcon(dataURI: huge) == nil)
    }

    @Test func passiveSVGIsKept() {
        // Text with "on" in words, and attributes that merely start with "o", are not event handlers.
        #expect(ProviderIcon(dataURI: Self.svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><text>done = one</text></svg>"#)) != nil)
        #expect(ProviderIcon(dataURI: Self.svgURI(#"<svg xmlns="http://www.w3.org/2000/svg" data-icon="x"><g opacity="0.5"/></svg>"#)) != nil)
    }

    @Test(arguments: [
        ("not-an-aaguid", "Named"),
        ("fbfc3007-154e-4ecc-8c0b-6e020557d7b", "Short"),
        ("fbfc3007154e4ecc8c0b6e020557d7bdxxxx", "No dashes"),
        ("fbfc3007-154e-4ecc-8c0b-6e020557d7bd", ""),
        ("fbfc3007-154e-4ecc-8c0b-6e020557d7bd", "   "),
        ("fbfc3007-154e-4ecc-8c0b-6e020557d7bd", "Bell\u{7}"),
        ("fbfc3007-154e-4ecc-8c0b-6e020557d7bd", String(repeating: "n", count: 101)),
    ])
    func badEntriesAreLeftOut(_ key: String, _ name: String) throws {
        let providers = try AuthenticatorProviders(json: Self.document([key: ["name": name], Self.second: ["name": "Manager"]]))
        #expect(providers.count == 1)
        #expect(providers[try Self.id(Self.second)]?.name == "Manager")
    }

    @Test func entryWithoutANameIsLeftOut() throws {
        let providers = try AuthenticatorProviders(json: Array(#"{"\#(Self.first)": {"icon_light": "\#(Self.svgURI(Self.svg))"}}"#.utf8))
        #expect(providers.count == 0)
    }

    @Test(arguments: ["[]", "\"text\"", #"{"x": 1}"#, #"{"x": {"name": 5}}"#, "not json", "", #"{"x": {"name": "a"}"#])
    func documentsOfTheWrongShapeThrow(_ text: String) {
        #expect(throws: WebAuthnError(.invalidProviderList)) { try AuthenticatorProviders(json: Array(text.utf8)) }
    }

    @Test func anEmptyListIsValid() throws {
        // The list's README says a retired list becomes an empty object.
        #expect(try AuthenticatorProviders(json: Array("{}".utf8)).count == 0)
    }
}
