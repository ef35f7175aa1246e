import Foundation
import Testing

/// NOTICE lists every data file the repository carries under Sources/ and Tests/ (everything but Swift and
/// Python source), with its source and a license this project may redistribute.
@Suite struct NoticeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Licenses NOTICE may name: permissive ones (CC-BY-3.0 asks only for the credit NOTICE gives), this
    /// project's own, and facts (which need none).
    static let allowedLicenses: Set<String> = [
        "Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC", "W3C-20150513", "CC0-1.0", "CC-BY-3.0", "facts",
    ]

    struct Entry {
        let title: String
        var globs: [String] = []
        var license: String?
    }

    static func entries() throws -> [Entry] {
        let text = try String(contentsOf: root.appendingPathComponent("NOTICE"), encoding: .utf8)
        var entries: [Entry] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                entries.append(Entry(title: String(line.dropFirst(3))))
            } else if line.hasPrefix("files: "), !entries.isEmpty {
                entries[entries.count - 1].globs.append(
                    String(line.dropFirst("files: ".count)).trimmingCharacters(in: .whitespaces))
            } else if line.hasPrefix("license: "), !entries.isEmpty {
                entries[entries.count - 1].license = String(line.dropFirst("license: ".count)).trimmingCharacters(
                    in: .whitespaces)
            }
        }
        return entries.filter { !$0.globs.isEmpty }
    }

    /// Every file under Sources/ and Tests/ that is not Swift or Python source (build folders and Python caches
    /// excepted), as a path from the repository root.
    static func dataFiles() -> [String] {
        var files: [String] = []
        for top in ["Sources", "Tests"] {
            let base = root.appendingPathComponent(top)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey])
            else { continue }
            for case let url as URL in walker {
                let path = String(url.path.dropFirst(root.path.count + 1))
                if path.contains("/__pycache__/") || path.contains("/.build") || url.lastPathComponent == ".DS_Store" {
                    continue
                }
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
                if ["swift", "py"].contains(url.pathExtension) { continue }
                files.append(path)
            }
        }
        return files.sorted()
    }

    /// `*` matches within one path segment, `**` any number of segments.
    static func matches(_ glob: String, _ path: String) -> Bool {
        func match(_ g: Substring, _ p: Substring) -> Bool {
            if g.isEmpty { return p.isEmpty }
            if g.hasPrefix("**") {
                let rest = g.dropFirst(2).drop(while: { $0 == "/" })
                var candidate = p
                while true {
                    if match(rest, candidate) { return true }
                    guard !candidate.isEmpty else { return false }
                    candidate = candidate.dropFirst()
                }
            }
            if g.first == "*" {
                var candidate = p
                while true {
                    if match(g.dropFirst(), candidate) { return true }
                    guard let first = candidate.first, first != "/" else { return false }
                    candidate = candidate.dropFirst()
                }
            }
            guard let gc = g.first, let pc = p.first, gc == pc else { return false }
            return match(g.dropFirst(), p.dropFirst())
        }
        return match(Substring(glob), Substring(path))
    }

    @Test func globsMatchLikeTheyShould() {
        #expect(Self.matches("Tests/a/*.json", "Tests/a/x.json"))
        #expect(!Self.matches("Tests/a/*.json", "Tests/a/b/x.json"))
        #expect(Self.matches("Tests/a/**", "Tests/a/b/c/x.json"))
        #expect(Self.matches("Tests/a/yubico-*.json", "Tests/a/yubico-key-reg.json"))
        #expect(!Self.matches("Tests/a/yubico-*.json", "Tests/a/go-key-reg.json"))
    }

    @Test func everyDataFileIsListed() throws {
        let entries = try Self.entries()
        #expect(entries.count >= 5)
        let unlisted = Self.dataFiles().filter { path in
            !entries.contains { $0.globs.contains { Self.matches($0, path) } }
        }
        #expect(unlisted.isEmpty, "not in NOTICE: \(unlisted)")
    }

    @Test func everyEntryMatchesAFileAndHasAPermissiveLicense() throws {
        let files = Self.dataFiles()
        for entry in try Self.entries() {
            for glob in entry.globs {
                #expect(files.contains { Self.matches(glob, $0) }, "\(entry.title): \(glob) matches no file")
            }
            #expect(
                entry.license.map(Self.allowedLicenses.contains) == true,
                "\(entry.title): license \(entry.license ?? "none")")
        }
    }

    @Test func theLicenseIsApache2() throws {
        let license = try String(contentsOf: Self.root.appendingPathComponent("LICENSE"), encoding: .utf8)
        #expect(license.contains("Apache License"))
        #expect(license.contains("Version 2.0, January 2004"))
        #expect(license.contains("END OF TERMS AND CONDITIONS"))
    }
}
