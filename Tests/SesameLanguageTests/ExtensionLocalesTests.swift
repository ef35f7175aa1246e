import Foundation
import Testing

@testable import SesameLanguage

/// The browser extension's `_locales` are made from the catalog (`sesame catalog extension-locales`), never edited
/// by hand: the committed files must be exactly what the catalog makes, and every key the extension's scripts name
/// must be in the catalog.
@Suite struct ExtensionLocalesTests {
    static let extensionFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Extensions/browser")

    @Test func theCommittedLocalesAreWhatTheCatalogMakes() throws {
        let files = try ExtensionLocales.files(try Catalog.bundled())
        #expect(Set(files.keys) == ["en", "ko", "ja", "de", "es", "ar"])
        let folder = Self.extensionFolder.appendingPathComponent("_locales")
        let committed = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }
        #expect(Set(committed) == Set(files.keys), "run: sesame catalog extension-locales")
        for (tag, data) in files {
            let path = folder.appendingPathComponent(tag).appendingPathComponent("messages.json")
            let onDisk = try? Data(contentsOf: path)
            #expect(
                onDisk == data, "\(tag)/messages.json differs from the catalog: run sesame catalog extension-locales")
        }
    }

    @Test func messagesUseChromesNamesAndNumberedPlaceholders() throws {
        let catalog = try Catalog.bundled()
        let data = try #require(try ExtensionLocales.files(catalog)["ko"])
        let korean = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        let title = try #require(korean["relay_create_detail"])
        #expect(title["message"] as? String == "Sesame 키체인이 “$user$”의 패스키를 보관하고 회원님의 기기에 동기화합니다.")
        #expect((title["placeholders"] as? [String: [String: String]]) == ["user": ["content": "$1"]])
        for name in korean.keys {
            #expect(name.range(of: "^[A-Za-z0-9_]+$", options: .regularExpression) != nil, "\(name)")
        }
        #expect(ExtensionLocales.chromeText("{Site} costs $5") == "$site$ costs $$5")
    }

    @Test func everyKeyTheExtensionNamesIsInTheCatalog() throws {
        let catalog = try Catalog.bundled()
        var named: Set<String> = []
        for file in ["relay.js", "popup.js", "popup.html", "manifest.json"] {
            guard
                let text = try? String(
                    contentsOf: Self.extensionFolder.appendingPathComponent(file), encoding: .utf8)
            else { continue }
            for pattern in [
                #"t\("(extension\.[a-z0-9.-]+)""#, #"data-i18n[a-z-]*="(extension\.[a-z0-9.-]+)""#,
                #"__MSG_([a-z0-9_]+)__"#,
            ] {
                let regex = try NSRegularExpression(pattern: pattern)
                for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    guard let range = Range(match.range(at: 1), in: text) else { continue }
                    named.insert(String(text[range]))
                }
            }
        }
        let messages = Set(
            catalog.keys.filter { $0.hasPrefix(ExtensionLocales.prefix) }.map(ExtensionLocales.messageName))
        #expect(!named.isEmpty)
        for name in named {
            let message = name.hasPrefix("extension.") ? ExtensionLocales.messageName(name) : name
            #expect(messages.contains(message), "\(name) is not in the catalog")
        }
    }
}
