extension Catalog {
    /// What a page's scripts need, as the JSON a page carries in `<script type="application/json"
    /// id="sesame-messages">`: the language, its direction, its plural rule as a tree, the languages a person can
    /// choose (tag and own name), and the forms of every key
    /// that starts with one of `prefixes` (`/static/i18n.js` reads it). `<`, `>` and `&` are escaped so the text
    /// cannot close the element.
    public func scriptMessages(_ tag: String, prefixes: [String]) -> String {
        let language = languages[tag] ?? languages[Self.english]!
        var out = "{\"lang\":\(Self.jsonString(tag)),\"dir\":\"\(language.direction.rawValue)\""
        let plural = (tag == Self.english || tag == Self.pseudo) ? Self.englishPlural : language.plural
        out += ",\"plural\":\(plural.json),\"languages\":["
        out += shipped.map { "{\"tag\":\(Self.jsonString($0.tag)),\"name\":\(Self.jsonString($0.name))}" }.joined(
            separator: ",")
        out += "],\"messages\":{"
        var first = true
        for key in keys where prefixes.contains(where: { key.hasPrefix($0) }) {
            guard let forms = forms(key, in: tag) else { continue }
            // A plural key English stands in for is read with English's rule: mark it.
            let own = translates(key, in: tag) || tag == Self.pseudo || tag == Self.english
            if !first { out += "," }
            first = false
            out += Self.jsonString(key) + ":"
            if sources[key]?.plural == nil {
                out += Self.jsonString(forms[0])
            } else {
                out += "{\"forms\":[" + forms.map(Self.jsonString).joined(separator: ",") + "]"
                out += own ? "}" : ",\"english\":true}"
            }
        }
        return out + "}}"
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
