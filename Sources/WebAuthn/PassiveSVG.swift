/// Decides whether an SVG document is a passive picture: only drawing elements and attributes from an allow-list,
/// nothing that runs script, loads another resource or embeds another document.
///
/// The document is tokenised as XML (RFC-free summary of XML 1.0 §2–3 as far as SVG icons use it):
///
/// ```
/// document  = [ "<?xml" … "?>" ] misc* element misc*        ; misc: whitespace or comments
/// element   = "<" name attribute* ( "/>" | ">" content "</" name ">" )
/// attribute = name "=" ( '"' value '"' | "'" value "'" )
/// content   = ( text | element | comment )*                 ; text and values: character data with references
/// reference = "&lt;" | "&gt;" | "&amp;" | "&quot;" | "&apos;" | "&#" digits ";" | "&#x" hexdigits ";"
/// ```
///
/// Refused: a DOCTYPE with an internal subset (entities can hide anything; one that only names an external DTD, as
/// editors write, is inert and allowed before the root), CDATA sections, processing instructions other than the XML
/// declaration, unknown named references, unbalanced or mismatched tags, a root other than `svg`, any element or
/// attribute not on the lists below (so every `on…` handler, `<script>`, `<foreignObject>`, `<image>`, `<a>` and
/// animation elements), `href` values that are not a fragment (`#id`), and, after references are decoded, any value
/// or style text that mentions `javascript:` (ignoring case, whitespace and control characters), `@import`,
/// `expression(` or a `url(` that does not point into the document. Namespaces are checked (``Namespaces``):
/// elements of other vocabularies that editors leave behind (RDF, Dublin Core, Inkscape) are inert and allowed; a
/// prefix bound to HTML, MathML or XSLT, or XLink under another prefix, is refused.
enum PassiveSVG {
    static let maxDepth = 64

    static let elements: Set<String> = [
        "svg", "g", "defs", "symbol", "use", "title", "desc", "metadata", "style",
        "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan",
        "linearGradient", "radialGradient", "stop", "clipPath", "mask", "pattern",
        "filter", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feFlood", "feFuncA", "feFuncB",
        "feFuncG", "feFuncR", "feGaussianBlur", "feMerge", "feMergeNode", "feMorphology", "feOffset",
    ]

    static let attributes: Set<String> = [
        "id", "class", "style", "version", "xmlns", "xml:space", "viewBox", "preserveAspectRatio", "width", "height",
        "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "fr", "d", "points", "pathLength",
        "transform", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity", "stroke-linecap",
        "stroke-linejoin", "stroke-miterlimit", "stroke-dasharray", "stroke-dashoffset", "opacity", "clip-path",
        "clip-rule", "clipPathUnits", "mask", "maskUnits", "maskContentUnits", "filter", "filterUnits",
        "primitiveUnits",
        "color", "color-interpolation-filters", "display", "visibility", "overflow", "enable-background",
        "offset", "stop-color", "stop-opacity", "gradientUnits", "gradientTransform", "spreadMethod",
        "patternUnits", "patternContentUnits", "patternTransform", "href", "xlink:href",
        "in", "in2", "result", "mode", "type", "values", "tableValues", "slope", "intercept", "amplitude", "exponent",
        "dx", "dy", "stdDeviation", "operator", "k1", "k2", "k3", "k4", "radius", "flood-color", "flood-opacity",
        "font-family", "font-size", "font-weight", "font-style", "text-anchor", "dominant-baseline", "letter-spacing",
        "mix-blend-mode", "isolation", "shape-rendering", "image-rendering", "vector-effect", "paint-order",
        "data-name",
    ]

    static func isPassive(_ text: String) -> Bool {
        var scanner = Scanner(Array(text.utf8))
        return scanner.document()
    }

    private struct Scanner {
        let bytes: [UInt8]
        var i = 0
        var stack: [String] = []
        var sawRoot = false
        var namespaces = Namespaces()

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func document() -> Bool {
            if starts("<?xml") {
                guard let end = find("?>", from: i) else { return false }
                i = end + 2
            }
            while i < bytes.count {
                if isSpace(bytes[i]) {
                    i += 1
                } else if starts("<!--") {
                    guard comment() else { return false }
                } else if starts("<!DOCTYPE"), !sawRoot {
                    // A document type declaration naming an external DTD (as editors write) is inert; one with an
                    // internal subset (`[`) can declare entities, and is refused.
                    guard let end = find(">", from: i), !bytes[i..<end].contains(UInt8(ascii: "[")) else {
                        return false
                    }
                    i = end + 1
                } else if starts("<") && !starts("</") && !starts("<!") && !starts("<?") {
                    guard !sawRoot, element(isRoot: true) else { return false }
                } else {
                    return false
                }
            }
            return sawRoot
        }

        mutating func comment() -> Bool {
            guard let end = find("-->", from: i + 4) else { return false }
            i = end + 3
            return true
        }

        /// One element, its content and its end tag (or an empty-element tag).
        mutating func element(isRoot: Bool) -> Bool {
            i += 1  // "<"
            guard let name = name(), stack.count < PassiveSVG.maxDepth else { return false }
            // Attributes first: they may declare the namespace of the element's own prefix.
            var attributes: [(String, [UInt8])] = []
            var empty = false
            while true {
                let hadSpace = skipSpace()
                guard i < bytes.count else { return false }
                if starts("/>") {
                    i += 2
                    empty = true
                    break
                }
                if bytes[i] == UInt8(ascii: ">") {
                    i += 1
                    break
                }
                guard hadSpace, let attribute = self.name(), skipSpaceThen("="), skipSpaceThenQuote(),
                    let value = quotedValue()
                else {
                    return false
                }
                attributes.append((attribute, value))
            }
            for (attribute, value) in attributes where attribute == "xmlns" || attribute.hasPrefix("xmlns:") {
                guard namespaces.declare(attribute, String(decoding: value, as: UTF8.self)) else { return false }
            }
            guard let kind = namespaces.kind(of: name) else { return false }
            switch kind {
            case .svg(let local):
                guard PassiveSVG.elements.contains(local), !isRoot || local == "svg" else { return false }
            case .inert:
                guard !isRoot else { return false }
            }
            for (attribute, value) in attributes {
                guard
                    PassiveSVG.allows(
                        attribute: attribute, value: value, onSVGElement: kind != .inert, namespaces: namespaces)
                else {
                    return false
                }
            }
            if isRoot { sawRoot = true }
            if empty { return true }
            stack.append(name)
            // Content.
            var text: [UInt8] = []
            while i < bytes.count {
                if starts("</") {
                    i += 2
                    guard let closing = self.name(), closing == name else { return false }
                    _ = skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else { return false }
                    i += 1
                    stack.removeLast()
                    guard let decoded = PassiveSVG.decodeReferences(text) else { return false }
                    return kind == .svg("style")
                        ? PassiveSVG.isPassiveStyle(String(decoding: decoded, as: UTF8.self)) : true
                } else if starts("<!--") {
                    guard comment() else { return false }
                } else if starts("<!") || starts("<?") {
                    return false  // CDATA, DOCTYPE inside content, processing instructions
                } else if bytes[i] == UInt8(ascii: "<") {
                    guard element(isRoot: false) else { return false }
                } else {
                    text.append(bytes[i])
                    i += 1
                }
            }
            return false  // no end tag
        }

        /// A qualified XML name (Namespaces in XML §4): `local` or `prefix:local`, each part ASCII letters, digits,
        /// `-`, `_` and `.`, starting with a letter or `_`.
        mutating func name() -> String? {
            let start = i
            var partStart = i
            var colons = 0
            while i < bytes.count {
                let b = bytes[i]
                let letter = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
                let other = (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
                if b == UInt8(ascii: ":") {
                    guard i > partStart, colons == 0 else { return nil }
                    colons += 1
                    i += 1
                    partStart = i
                    continue
                }
                guard letter || (other && i > partStart) else { break }
                i += 1
            }
            guard i > partStart, i - start <= 64 else { return nil }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }

        mutating func quotedValue() -> [UInt8]? {
            let quote = bytes[i]
            i += 1
            let start = i
            while i < bytes.count, bytes[i] != quote {
                if bytes[i] == UInt8(ascii: "<") { return nil }
                i += 1
            }
            guard i < bytes.count else { return nil }
            let raw = Array(bytes[start..<i])
            i += 1
            return PassiveSVG.decodeReferences(raw)
        }

        @discardableResult
        mutating func skipSpace() -> Bool {
            let start = i
            while i < bytes.count, isSpace(bytes[i]) { i += 1 }
            return i > start
        }

        mutating func skipSpaceThen(_ character: Character) -> Bool {
            skipSpace()
            guard i < bytes.count, bytes[i] == character.asciiValue else { return false }
            i += 1
            return true
        }

        mutating func skipSpaceThenQuote() -> Bool {
            skipSpace()
            return i < bytes.count && (bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'"))
        }

        func starts(_ literal: String) -> Bool {
            let l = Array(literal.utf8)
            return i + l.count <= bytes.count && Array(bytes[i..<(i + l.count)]) == l
        }

        func find(_ literal: String, from start: Int) -> Int? {
            let l = Array(literal.utf8)
            var j = start
            while j + l.count <= bytes.count {
                if bytes[j] == l[0], Array(bytes[j..<(j + l.count)]) == l { return j }
                j += 1
            }
            return nil
        }

        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
    }

    /// Whether `attribute` may carry `value` (already decoded) on an element of the SVG namespace (`onSVGElement`) or
    /// of an inert vocabulary (editor metadata: RDF, Dublin Core, Inkscape), whose attributes mean nothing to a
    /// renderer. Every value must be passive text, and any attribute named `href`, whatever its prefix, a fragment.
    static func allows(attribute: String, value: [UInt8], onSVGElement: Bool, namespaces: Namespaces) -> Bool {
        let text = String(decoding: value, as: UTF8.self)
        guard isPassiveStyle(text) else { return false }
        let parts = attribute.split(separator: ":", maxSplits: 1).map(String.init)
        let local = parts.last ?? attribute
        if local == "href" { return text.hasPrefix("#") }
        if attribute == "xmlns" || parts.first == "xmlns" { return true }  // declarations, checked by `Namespaces`
        guard onSVGElement else { return true }
        if parts.count == 1 { return attributes.contains(attribute) || attribute.hasPrefix("data-") }
        switch parts[0] {
        case "xml": return ["space", "lang"].contains(local)
        case "xlink": return ["title", "type", "role", "arcrole", "show", "actuate"].contains(local)
        default: return namespaces.isInert(prefix: parts[0])
        }
    }

    /// The namespace prefixes a document declares. The SVG namespace is the default (and may be given a prefix such
    /// as `svg:`); XLink is bound to `xlink` only; HTML, MathML, XSLT, XInclude and XML Events may not be bound at all
    /// (they would turn an element into script or a frame); any other namespace is an inert vocabulary.
    struct Namespaces: Sendable {
        static let svg = "http://www.w3.org/2000/svg"
        static let xlink = "http://www.w3.org/1999/xlink"
        static let forbidden: Set<String> = [
            "http://www.w3.org/1999/xhtml", "http://www.w3.org/1998/Math/MathML",
            "http://www.w3.org/1999/XSL/Transform",
            "http://www.w3.org/2001/XInclude", "http://www.w3.org/2001/xml-events", "http://www.w3.org/2000/xmlns/",
        ]
        private var bindings: [String: String] = [:]

        enum Kind: Equatable {
            case svg(String)
            case inert
        }

        /// Records `xmlns` or `xmlns:prefix`; false for a binding this checker refuses. Declarations count for the
        /// whole document (a prefix keeps one namespace), which is stricter than XML's scoping.
        mutating func declare(_ attribute: String, _ uri: String) -> Bool {
            guard !Self.forbidden.contains(uri) else { return false }
            if attribute == "xmlns" { return uri == Self.svg }
            let prefix = String(attribute.dropFirst("xmlns:".count))
            guard !prefix.isEmpty, prefix != "xml", prefix != "xmlns" else { return false }
            if uri == Self.xlink || prefix == "xlink" {
                guard uri == Self.xlink, prefix == "xlink" else { return false }
            }
            if let existing = bindings[prefix], existing != uri { return false }
            bindings[prefix] = uri
            return true
        }

        /// What an element name means: an SVG element (by local name), an inert element, or nil (an undeclared prefix).
        func kind(of name: String) -> Kind? {
            let parts = name.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return .svg(name) }
            guard let uri = bindings[parts[0]] else { return nil }
            if uri == Self.svg { return .svg(parts[1]) }
            return uri == Self.xlink ? nil : .inert
        }

        func isInert(prefix: String) -> Bool {
            guard let uri = bindings[prefix] else { return false }
            return uri != Self.svg && uri != Self.xlink
        }
    }

    /// Text (an attribute value or a `<style>` sheet) that neither runs script nor loads anything: no
    /// `javascript:`, `@import` or `expression(`, and every `url(` points at `#` in the same document.
    static func isPassiveStyle(_ text: String) -> Bool {
        // Compare without case, whitespace or control characters, so `java\tscript:` and `JavaScript:` match too.
        let squeezed = String(
            String.UnicodeScalarView(
                text.lowercased().unicodeScalars.filter {
                    !$0.properties.isWhitespace && $0.properties.generalCategory != .control
                }
            )
        )
        for marker in ["javascript:", "vbscript:", "@import", "expression(", "behavior:", "-moz-binding"]
        where squeezed.contains(marker) {
            return false
        }
        var rest = Substring(squeezed)
        while let range = rest.range(of: "url(") {
            var target = rest[range.upperBound...]
            if let quote = target.first, quote == "\"" || quote == "'" { target = target.dropFirst() }
            guard target.hasPrefix("#") else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }

    /// Character data with its references replaced; nil for an unknown or malformed reference.
    static func decodeReferences(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.contains(UInt8(ascii: "&")) else { return raw }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            guard raw[i] == UInt8(ascii: "&") else {
                out.append(raw[i])
                i += 1
                continue
            }
            guard let end = raw[i...].firstIndex(of: UInt8(ascii: ";")), end - i <= 10 else { return nil }
            let entity = String(decoding: raw[(i + 1)..<end], as: UTF8.self)
            let scalar: Unicode.Scalar?
            switch entity {
            case "lt": scalar = "<"
            case "gt": scalar = ">"
            case "amp": scalar = "&"
            case "quot": scalar = "\""
            case "apos": scalar = "'"
            default:
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                } else {
                    scalar = nil
                }
            }
            guard let scalar, scalar.value != 0 else { return nil }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
            i = end + 1
        }
        return out
    }
}
