import Foundation

/// The browser extension's `_locales/<tag>/messages.json` (the WebExtensions i18n format that Chromium and Firefox
/// read), made from the catalog's `extension.*` keys, so translators work in one place and nobody edits the
/// extension's files by hand (a test holds the committed files to what this makes).
///
/// A key becomes a message name by dropping `extension.` and writing `.` and `-` as `_` (`extension.popup.lock` →
/// `popup_lock`), since message names allow only `[A-Za-z0-9_]`. A `{name}` placeholder becomes `$name$` with a
/// `placeholders` entry whose content is `$1`, `$2`, … by the placeholders' names in alphabetical order: the
/// extension's scripts (`t()` in `relay.js` and `popup.js`) pass the values in that order. A literal `$` is written
/// `$$`. The extension has no plural messages.
public enum ExtensionLocales {
    public static let prefix = "extension."

    /// The message name of a catalog key.
    public static func messageName(_ key: String) -> String {
        String(key.dropFirst(prefix.count)).replacingOccurrences(of: ".", with: "_").replacingOccurrences(
            of: "-", with: "_")
    }

    /// Each shipped language's `messages.json` by tag (English included, the pseudo-language left out).
    public static func files(_ catalog: Catalog) throws(LanguageError) -> [String: Data] {
        let keys = catalog.keys.filter { $0.hasPrefix(prefix) }
        var names: [String: String] = [:]
        for key in keys {
            let name = messageName(key)
            if let other = names[name] {
                throw LanguageError(.duplicateKey, reason: "\(key) and \(other) make the same message name \(name)")
            }
            if catalog.sources[key]?.plural != nil {
                throw LanguageError(.malformedFile, reason: "\(key): the extension's messages have no plurals")
            }
            names[name] = key
        }
        var files: [String: Data] = [:]
        for tag in catalog.tags where tag != Catalog.pseudo {
            var messages: [String: Any] = [:]
            for key in keys {
                guard let source = catalog.sources[key], let text = catalog.forms(key, in: tag)?.first else { continue }
                let ordered = Catalog.placeholders(in: source.singular).sorted()
                var message: [String: Any] = [
                    "message": chromeText(text), "description": source.comment,
                ]
                if !ordered.isEmpty {
                    var placeholders: [String: Any] = [:]
                    for (index, name) in ordered.enumerated() {
                        placeholders[name.lowercased()] = ["content": "$\(index + 1)"]
                    }
                    message["placeholders"] = placeholders
                }
                messages[messageName(key)] = message
            }
            do {
                var data = try JSONSerialization.data(
                    withJSONObject: messages, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                data.append(0x0A)
                files[tag] = data
            } catch {
                throw LanguageError(.malformedFile, reason: "messages.json for \(tag) cannot be written")
            }
        }
        return files
    }

    /// `{name}` → `$name$`, a literal `$` → `$$`.
    static func chromeText(_ text: String) -> String {
        var output = ""
        var inPlaceholder = false
        for character in text {
            switch character {
            case "{":
                inPlaceholder = true
                output += "$"
            case "}" where inPlaceholder:
                inPlaceholder = false
                output += "$"
            case "$": output += "$$"
            default: output.append(inPlaceholder ? Character(character.lowercased()) : character)
            }
        }
        return output
    }
}
