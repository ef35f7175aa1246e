import Foundation
import Testing

@testable import WebAuthn

/// `AuthenticatorProviders`: the AAGUID → name and icons table, in the shape of the community AAGUID list
/// (github.com/passkeydeveloper/passkey-authenticator-aaguids, `aaguid.json.schema`). The documents here are made
/// up for the tests; the real list is checked in `SesameServerTests` (ProviderIconTests), which ships it.
@Suite struct AuthenticatorProvidersTests {
    static let svg =
        ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="10" fill="#123456"/></svg>"##
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
        guard let aaguid = AAGUID(uuidString: text) else {
            throw WebAuthnError(.invalidOptions, detail: "test AAGUID \(text)")
        }
        return aaguid
    }

    static let first = "fbfc3007-154e-4ecc-8c0b-6e020557d7bd"
    static let second = "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"

    @Test func readsNamesAndBothIconKinds() throws {
        let providers = try AuthenticatorProviders(
            json: Self.document([
                Self.first: [
                    "name": "  Keychain  ", "icon_light": Self.svgURI(Self.svg),
                    "icon_dark": Self.dataURI("image/png", Self.png),
                ],
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
        let providers = try AuthenticatorProviders(
            json: Self.document([
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
        (
            "url-encoded, not base64",
            "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E"
        ),
        ("remote URL", "https://example.com/icon.svg"),
        ("upper-case media type", dataURI("IMAGE/SVG+XML", Array(svg.utf8))),
        ("empty", "data:image/png;base64,"),
        ("png without its signature", dataURI("image/png", Array(svg.utf8))),
        ("svg that is not SVG", svgURI("<html><body>hello</body></html>")),
        ("svg that is not UTF-8", dataURI("image/svg+xml", [0x3C, 0x73, 0x76, 0x67, 0xFF, 0xFE, 0x3E])),
        ("svg with script", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#)),
        ("svg with SCRIPT", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><SCRIPT>alert(1)</SCRIPT></svg>"#)),
        ("svg with onload", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>"#)),
        (
            "svg with spaced onclick",
            svgURI("<svg xmlns=\"http://www.w3.org/2000/svg\">\n<rect\tonclick = \"x()\"/></svg>")
        ),
        (
            "svg with javascript: link",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><a href="JavaScript:alert(1)"><rect/></a></svg>"#)
        ),
        (
            "svg with foreignObject",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><iframe/></foreignObject></svg>"#)
        ),
        // The security review's two bypasses of the first, pattern-based check:
        ("handler right after the tag name", svgURI(#"<svg/onload=alert(1)>"#)),
        ("handler after a slash, quoted", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"/onload="alert(1)"/>"#)),
        (
            "entity-encoded javascript: link",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><a href="javascript&#58;alert(1)"><rect/></a></svg>"#)
        ),
        (
            "hex entity in xlink:href",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><use xlink:href="java&#x73;cript&#x3a;x"/></svg>"#)
        ),
        // The same class, beyond what the review tried:
        (
            "use of a remote document",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><use href="https://example.com/a.svg#x"/></svg>"#)
        ),
        (
            "image element",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><image href="https://example.com/t.png"/></svg>"#)
        ),
        (
            "animation rewriting href",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><set attributeName="href" to="javascript:x"/></svg>"#)
        ),
        (
            "style sheet import",
            svgURI(
                #"<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(https://example.com/x.css);</style></svg>"#
            )
        ),
        (
            "remote paint server",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(https://example.com/p.svg#g)"/></svg>"#)
        ),
        (
            "style attribute with a remote url",
            svgURI(
                #"<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:url( 'https://example.com/p' )"/></svg>"#)
        ),
        (
            "javascript split by a tab entity",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><a href="java&#9;script:x"><rect/></a></svg>"#)
        ),
        (
            "doctype with an entity",
            svgURI("<!DOCTYPE svg [<!ENTITY x \"javascript:\">]><svg xmlns=\"http://www.w3.org/2000/svg\"/>")
        ),
        ("CDATA section", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><style><![CDATA[*{}]]></style></svg>"#)),
        (
            "processing instruction",
            svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><?xml-stylesheet href="x.css"?></svg>"#)
        ),
        ("unknown named entity", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><text>&nbsp;</text></svg>"#)),
        ("unclosed element", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><g>"#)),
        ("mismatched end tag", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><g></svg></g>"#)),
        ("two roots", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"/><svg/>"#)),
        ("root is not svg", svgURI(#"<g xmlns="http://www.w3.org/2000/svg"><svg/></g>"#)),
        ("unquoted attribute", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg" width=10/>"#)),
        // Namespaces: script reached through a prefix.
        (
            "HTML script under a prefix",
            svgURI(
                #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:h="http://www.w3.org/1999/xhtml"><h:script>x()</h:script></svg>"#
            )
        ),
        (
            "SVG script under another prefix in metadata",
            svgURI(
                #"<svg xmlns="http://www.w3.org/2000/svg"><metadata><s:script xmlns:s="http://www.w3.org/2000/svg">x()</s:script></metadata></svg>"#
            )
        ),
        (
            "XLink under another prefix",
            svgURI(
                #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:l="http://www.w3.org/1999/xlink"><use l:href="https://example.com/a.svg#x"/></svg>"#
            )
        ),
        ("default namespace is HTML", svgURI(#"<svg xmlns="http://www.w3.org/1999/xhtml"/>"#)),
        ("undeclared prefix", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><q:thing/></svg>"#)),
        // Found by FuzzProviderIcon: a name that is only a colon crashed the namespace split.
        ("attribute named by a colon", svgURI(#"<svg :="ht0">)8ta="#)),
        ("attribute with an empty prefix", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg" :width="1"/>"#)),
        ("element with an empty local name", svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><x: /></svg>"#)),
    ])
    func refusedIconsAreDropped(_ why: String, _ uri: String) throws {
        let providers = try AuthenticatorProviders(
            json: Self.document([Self.first: ["name": "Keychain", "icon_light": uri, "icon_dark": uri]]))
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
        #expect(
            ProviderIcon(
                dataURI: Self.svgURI(#"<svg xmlns="http://www.w3.org/2000/svg"><text>done = one</text></svg>"#)) != nil)
        #expect(
            ProviderIcon(
                dataURI: Self.svgURI(#"<svg xmlns="http://www.w3.org/2000/svg" data-icon="x"><g opacity="0.5"/></svg>"#)
            ) != nil)
        // What real provider icons use: a declaration, comments, gradients and clip paths referenced within the
        // document, filters, a style sheet without imports, editor metadata and character references.
        let drawing = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- drawn by hand -->
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 24 24">
              <metadata><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:cc="http://creativecommons.org/ns#"><cc:Work rdf:about=""/></rdf:RDF></metadata>
              <sodipodi:namedview xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" pagecolor="#ffffff" showgrid="false"/>
              <style>.a{fill:url(#g)}</style>
              <defs>
                <linearGradient id="g" gradientUnits="userSpaceOnUse"><stop offset="0" stop-color="#fff"/></linearGradient>
                <clipPath id="c"><rect width="24" height="24" rx="4"/></clipPath>
                <filter id="f"><feGaussianBlur stdDeviation="1"/></filter>
              </defs>
              <g clip-path="url(#c)" filter="url('#f')"><path class="a" d="M0 0h24v24H0z"/><use xlink:href="#c"/></g>
              <text>A &amp; B &#x2713;</text>
            </svg>
            """
        #expect(ProviderIcon(dataURI: Self.svgURI(drawing)) != nil)
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
        let providers = try AuthenticatorProviders(
            json: Self.document([key: ["name": name], Self.second: ["name": "Manager"]]))
        #expect(providers.count == 1)
        #expect(providers[try Self.id(Self.second)]?.name == "Manager")
    }

    @Test func entryWithoutANameIsLeftOut() throws {
        let providers = try AuthenticatorProviders(
            json: Array(#"{"\#(Self.first)": {"icon_light": "\#(Self.svgURI(Self.svg))"}}"#.utf8))
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
