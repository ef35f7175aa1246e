import ArgumentParser
import Foundation
import SesameLanguage

struct CatalogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Work with the message catalog (docs/translating.md).",
        subcommands: [ExtensionLocalesCommand.self]
    )

    struct ExtensionLocalesCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extension-locales",
            abstract:
                "Write the browser extension's _locales/<language>/messages.json from the catalog's extension keys.",
            discussion: """
                The catalog is the source: run this after changing an extension.* entry and commit what it writes \
                (a test compares the committed files with what the catalog makes).
                """)

        @Option(help: "The extension's _locales folder.") var out: String = "Extensions/browser/_locales"

        func run() throws {
            let catalog = try Catalog.bundled()
            let files = try ExtensionLocales.files(catalog)
            let root = URL(fileURLWithPath: out, isDirectory: true)
            for (tag, data) in files.sorted(by: { $0.key < $1.key }) {
                let folder = root.appendingPathComponent(tag.replacingOccurrences(of: "-", with: "_"))
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try data.write(to: folder.appendingPathComponent("messages.json"), options: .atomic)
                print("wrote \(folder.lastPathComponent)/messages.json")
            }
        }
    }
}
