import Foundation

/// One target's part of the API document served at `/openapi.yaml` (OpenAPI 3.1): the paths of the routes that
/// target registers and the components only it (or it and the targets that import it) use, kept in the target's
/// `Resources/openapi.yaml`. Each part is a value (`APIFragment.passkeys`, beside `Vocabulary.passkeys`); the
/// composition root assembles them with the core's base (`APIFragment.core`: `info`, `servers`, the security schemes,
/// the error schema and what several features share) into the one document (`APIDocument.assembled`).
///
/// The package has no YAML reader, so a fragment keeps a fixed layout that the assembly reads line by line and
/// checks, refusing a fragment that breaks it:
/// - top-level keys at column 0, each once: `components:` and `paths:`, and in the base only `openapi:`, `info:`
///   and `servers:` before them, copied as they are;
/// - under `components:`, a section at 2 spaces (`securitySchemes:`, `parameters:`, `headers:`, `schemas:`,
///   `responses:`) and its entries at 4 (`Name:`, nothing after the colon);
/// - under `paths:`, a path at 2 spaces (`/api/…:`, nothing after the colon);
/// - every other line is the body of the entry above it, indented deeper than that entry, or blank; no tabs.
///
/// A list the vocabulary holds (error codes, audit kinds, factors, session methods) is not written out in any part:
/// the part writes `enum: []  # from the vocabulary: <name>` and the assembly fills it from the lists it is given
/// (`APIDocument.VocabularyLists`), so a feature that declares a new word changes no other part.
package struct APIFragment: Sendable {
    /// The target that owns the fragment, named in the assembly's errors.
    package let owner: String
    /// The fragment's text; nil when the target's bundle has none (an error at assembly).
    package let text: String?

    package init(owner: String, text: String?) {
        self.owner = owner
        self.text = text
    }

    /// The fragment in a target's bundle: `Resources/openapi.yaml`.
    package init(owner: String, bundle: Bundle) {
        let url = bundle.url(forResource: "openapi", withExtension: "yaml", subdirectory: "Resources")
        self.init(owner: owner, text: url.flatMap { try? String(contentsOf: $0, encoding: .utf8) })
    }
}

extension APIFragment {
    /// The core's base: what every part shares (`info`, `servers`, the security schemes, the error schema and codes,
    /// the session's shapes, the common responses).
    package static let core = APIFragment(owner: "SesameCore", bundle: .module)
}

/// Why the parts do not make one document: a fragment missing or out of its layout, or a path or component that two
/// parts declare, or a reference to a component no part declares. The message names the part and the line.
package typealias APIDocumentError = ServerError<APIDocumentErrorCode>

/// The codes of `APIDocumentError`.
package struct APIDocumentErrorCode: ServerErrorCode {
    package let name: String
    private init(_ name: String) { self.name = name }
    package var description: String { name }

    /// A target's bundle has no `Resources/openapi.yaml`.
    package static let missing = APIDocumentErrorCode("missing")
    /// A line breaks the fragments' layout (see `APIFragment`).
    package static let layout = APIDocumentErrorCode("layout")
    /// A path, or a component of a section, is declared by two parts.
    package static let declaredTwice = APIDocumentErrorCode("declaredTwice")
    /// A `$ref` names a component that no part declares.
    package static let unknownReference = APIDocumentErrorCode("unknownReference")
    /// An `enum: []  # from the vocabulary: <name>` line names a list the assembly was not given.
    package static let unknownList = APIDocumentErrorCode("unknownList")
}

/// The assembly of the API document from its parts.
package enum APIDocument {
    /// The sections of `components`, in the order the document lists them.
    package static let sections = ["securitySchemes", "parameters", "headers", "schemas", "responses"]
    /// The top-level keys only the base may have, before `components`.
    static let baseKeys = ["openapi", "info", "servers"]

    /// One entry: a path or a component, its first line and its body.
    struct Entry {
        let key: String
        var lines: [String]
    }

    /// A fragment read by its layout.
    struct Reading {
        var preamble: [String] = []
        var components: [String: [Entry]] = [:]
        var paths: [Entry] = []
    }

    /// The document: the base's preamble, then `components` (each section's entries, the base's first, then each
    /// part's in order), then `paths` (the same order). Refuses a part that breaks the layout, a path or component
    /// declared twice (naming both parts) and a reference to a component that none declares.
    package static func assembled(base: APIFragment, parts: [APIFragment], lists: VocabularyLists = [:])
        throws(APIDocumentError) -> String
    {
        var readings: [(owner: String, reading: Reading)] = []
        for fragment in [base] + parts {
            readings.append((fragment.owner, try read(fragment, isBase: fragment.owner == base.owner)))
        }
        guard !readings[0].reading.preamble.isEmpty else {
            throw layoutError(base.owner, line: 1, "the base starts with `openapi:`, `info:` and `servers:`")
        }
        var declared: [String: String] = [:]
        func declare(_ name: String, by owner: String) throws(APIDocumentError) {
            if let first = declared[name] {
                throw APIDocumentError(
                    code: .declaredTwice, message: "\(name) is declared by both \(first) and \(owner)")
            }
            declared[name] = owner
        }
        var lines = readings[0].reading.preamble
        lines.append("components:")
        for section in sections {
            let entries = readings.flatMap { owner, reading in
                (reading.components[section] ?? []).map { (owner, $0) }
            }
            guard !entries.isEmpty else { continue }
            lines.append("  \(section):")
            for (owner, entry) in entries {
                try declare("#/components/\(section)/\(entry.key)", by: owner)
                lines += entry.lines
            }
        }
        lines.append("paths:")
        for (owner, reading) in readings {
            for entry in reading.paths {
                try declare("path \(entry.key)", by: owner)
                lines += entry.lines
            }
        }
        for (owner, reading) in readings {
            let body = reading.components.values.flatMap { $0.flatMap(\.lines) } + reading.paths.flatMap(\.lines)
            for line in body {
                guard let reference = self.reference(in: line), declared[reference] == nil else { continue }
                throw APIDocumentError(
                    code: .unknownReference, message: "\(owner) refers to \(reference), which no part declares")
            }
        }
        for index in lines.indices {
            guard let name = listName(in: lines[index]) else { continue }
            guard let values = lists[name] else {
                throw APIDocumentError(
                    code: .unknownList, message: "an enum is to be filled from the vocabulary's \(name), which it lacks"
                )
            }
            let indent = String(lines[index].prefix { $0 == " " })
            lines[index] = indent + "enum: [" + values.joined(separator: ", ") + "]"
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The vocabulary's lists a part may name in `enum: []  # from the vocabulary: <name>`, by name; the composition
    /// root gives them from `Vocabulary.server`.
    package typealias VocabularyLists = [String: [String]]

    static let listMarker = "enum: []  # from the vocabulary: "

    /// The list an `enum: []  # from the vocabulary: <name>` line names.
    static func listName(in line: String) -> String? {
        let trimmed = line.drop { $0 == " " }
        guard trimmed.hasPrefix(listMarker) else { return nil }
        return String(trimmed.dropFirst(listMarker.count))
    }

    /// The component a `$ref: '#/components/…'` line names.
    static func reference(in line: String) -> String? {
        guard let start = line.range(of: "$ref: '#/components/") else { return nil }
        let target = line[line.index(start.upperBound, offsetBy: -"#/components/".count)...]
        guard let end = target.firstIndex(of: "'") else { return nil }
        return String(target[..<end])
    }

    /// A fragment read by its layout, or the first line that breaks it.
    static func read(_ fragment: APIFragment, isBase: Bool) throws(APIDocumentError) -> Reading {
        let owner = fragment.owner
        guard let text = fragment.text else {
            throw APIDocumentError(code: .missing, message: "\(owner) has no Resources/openapi.yaml")
        }
        enum Place { case start, preamble, components(section: String?), paths }
        var place = Place.start
        var reading = Reading()
        var seenKeys: Set<String> = []
        var lines = text.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        for (index, line) in lines.enumerated() {
            let number = index + 1
            guard !line.contains("\t"), !line.contains("\r") else {
                throw layoutError(owner, line: number, "a tab or a carriage return")
            }
            let indent = line.prefix { $0 == " " }.count
            if indent == line.count {  // blank: part of what is open
                switch place {
                case .start: break
                case .preamble: reading.preamble.append(line)
                case .components(let section?):
                    if var entries = reading.components[section], !entries.isEmpty {
                        entries[entries.count - 1].lines.append(line)
                        reading.components[section] = entries
                    }
                case .components(nil): break
                case .paths: if !reading.paths.isEmpty { reading.paths[reading.paths.count - 1].lines.append(line) }
                }
                continue
            }
            if indent == 0 {
                guard let colon = line.firstIndex(of: ":") else {
                    throw layoutError(owner, line: number, "a top-level line that is no key")
                }
                let key = String(line[..<colon])
                guard seenKeys.insert(key).inserted else {
                    throw layoutError(owner, line: number, "`\(key):` a second time")
                }
                if line == "components:" || line == "paths:" {
                    place = key == "paths" ? .paths : .components(section: nil)
                } else if isBase, baseKeys.contains(key), !seenKeys.contains("components"), !seenKeys.contains("paths")
                {
                    place = .preamble
                    reading.preamble.append(line)
                } else {
                    throw layoutError(
                        owner, line: number,
                        isBase
                            ? "a top-level key other than openapi, info, servers, components and paths"
                            : "a top-level key other than components and paths")
                }
                continue
            }
            switch place {
            case .start:
                throw layoutError(owner, line: number, "an indented line before any top-level key")
            case .preamble:
                reading.preamble.append(line)
            case .components(let section):
                if indent == 2 {
                    let name = String(line.dropFirst(2))
                    guard name.hasSuffix(":"), sections.contains(String(name.dropLast())) else {
                        throw layoutError(owner, line: number, "a section of components other than \(sections)")
                    }
                    place = .components(section: String(name.dropLast()))
                } else if indent == 4 {
                    guard let section else {
                        throw layoutError(owner, line: number, "a component outside a section")
                    }
                    let key = try entryKey(line, indent: 4, owner: owner, number: number, path: false)
                    reading.components[section, default: []].append(Entry(key: key, lines: [line]))
                } else if indent > 4, let section, var entries = reading.components[section], !entries.isEmpty {
                    entries[entries.count - 1].lines.append(line)
                    reading.components[section] = entries
                } else {
                    throw layoutError(owner, line: number, "indented \(indent) spaces under components")
                }
            case .paths:
                if indent == 2 {
                    let key = try entryKey(line, indent: 2, owner: owner, number: number, path: true)
                    reading.paths.append(Entry(key: key, lines: [line]))
                } else if indent > 2, !reading.paths.isEmpty {
                    reading.paths[reading.paths.count - 1].lines.append(line)
                } else {
                    throw layoutError(owner, line: number, "indented \(indent) spaces under paths")
                }
            }
        }
        return reading
    }

    /// The key of an entry's first line: a path (`/…`) or a component's name, then a colon and nothing else.
    static func entryKey(
        _ line: String, indent: Int, owner: String, number: Int, path: Bool
    ) throws(APIDocumentError) -> String {
        let key = line.dropFirst(indent).dropLast()
        let allowed = path ? "/{}.-_" : ".-_"
        guard line.hasSuffix(":"), !key.isEmpty, path == key.hasPrefix("/"),
            key.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || allowed.contains($0) })
        else {
            throw layoutError(
                owner, line: number,
                path ? "a path entry that is not `/path:` alone" : "a component entry that is not `Name:` alone")
        }
        return String(key)
    }

    static func layoutError(_ owner: String, line: Int, _ what: String) -> APIDocumentError {
        APIDocumentError(code: .layout, message: "\(owner)'s openapi.yaml, line \(line): \(what)")
    }
}
