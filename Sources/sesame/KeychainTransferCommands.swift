import ArgumentParser
import Foundation
import Keychain

// `sesame keychain export --cxf | import --cxf`: moving to and from other managers (FIDO CXF 1.0).

struct KeychainExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every item to a Credential Exchange Format (CXF 1.0) file, secrets included.",
        discussion: """
            The file holds passwords, code secrets and passkey private keys in clear: it is created readable by \
            its owner only; move it to the other manager and delete it. HOTP generators have no CXF type and \
            are listed as not exported. Needs the passphrase entered recently (user verification).
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "The CXF file to write.")
    var cxf: String

    @Option(help: "exporterRpId in the header.")
    var exporterRpId: String = "localhost"

    @Flag(help: "Replace the file if it exists.")
    var force = false

    func run() async throws {
        let keychain = try options.open(requireVerification: true)
        let (json, report) = keychain.exportCXF(exporterRpId: exporterRpId)
        try writePrivateFile(json, to: cxf, force: force)
        let counts = ItemKind.allCases.map { "\(report.exported[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
        print("Exported \(counts) to \(cxf) (mode 0600; it holds secrets in clear).")
        for line in report.skipped { note("not exported: \(line)") }
    }
}

struct KeychainImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the passkeys, passwords and TOTP codes of a CXF file, a Bitwarden JSON or KeePassXC CSV export.",
        discussion: """
            --cxf reads a CXF 1.0 header document or a single account; older CamelCase type names and bare strings \
            are understood. --bitwarden reads an unencrypted Bitwarden JSON export (logins with their URIs, \
            notes and TOTP); --keepassxc a KeePassXC CSV export (title, user name, password, URL, notes, TOTP). \
            Credentials already in the vault are skipped; other kinds (cards, Wi-Fi...) are \
            counted. A file that is not what it should be adds nothing.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "The CXF file to read.")
    var cxf: String?

    @Option(help: "The unencrypted Bitwarden JSON export to read.")
    var bitwarden: String?

    @Option(help: "The KeePassXC CSV export to read.")
    var keepassxc: String?

    func run() async throws {
        let given = [("--cxf", cxf), ("--bitwarden", bitwarden), ("--keepassxc", keepassxc)].compactMap { flag, path in
            path.map { (flag, $0) }
        }
        guard let (flag, path) = given.first, given.count == 1 else {
            throw keychainUsage("give one of --cxf, --bitwarden and --keepassxc")
        }
        let data = try readFile(path, limit: 256 * 1024 * 1024, what: flag)
        let keychain = try options.open()
        let report = try keychainCall {
            let report =
                switch flag {
                case "--cxf": try keychain.importCXF(data)
                case "--bitwarden": try keychain.importBitwarden(data)
                default: try keychain.importKeePassXC(data)
                }
            try keychain.save()
            return report
        }
        let counts = ItemKind.allCases.map { "\(report.imported[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
        print("Imported \(counts); \(report.duplicates) already here.")
        for (type, count) in report.skippedTypes.sorted(by: { $0.key < $1.key }) {
            print("Skipped \(count) \(type) (not kept by this keychain).")
        }
        for failure in report.failures { note("not imported: \(failure)") }
    }
}
