import ArgumentParser
import Foundation
import Keychain
import OneTimeCode
import WebAuthn

// `sesame keychain list | show | delete | add-password | add-code | code`: the items.

enum KindOption: String, ExpressibleByArgument, CaseIterable {
    case passkey, password, code
    var kind: ItemKind { ItemKind(rawValue: rawValue)! }
}

extension KeychainItem {
    /// The sites the item keeps (a passkey's RP ID), without the issuer name `sites` adds for searching.
    var storedSites: [String] {
        switch content {
        case .passkey(let p): [p.rpId]
        case .password(let p): p.sites
        case .codeGenerator(let c): c.sites
        }
    }

    /// One line of JSON for scripts (no secrets).
    var summaryJSON: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(id.text)), ("kind", .string(kind.rawValue)), ("title", .string(title)),
            ("sites", .array(storedSites.map { .string($0) })), ("created", .string(isoDate(created))),
            ("modified", .string(isoDate(modified))),
        ]
        switch content {
        case .passkey(let p):
            members += [
                ("rpId", .string(p.rpId)), ("userName", .string(p.userName)), ("displayName", .string(p.displayName)),
                ("credentialId", .string(Base64URL.encode(p.credentialId))),
                ("userHandle", .string(Base64URL.encode(p.userHandle))),
                ("algorithm", .string(p.algorithm.description)),
                ("lastUsed", p.lastUsed.map { .string(isoDate($0)) } ?? .null), ("hidden", .bool(p.hidden)),
            ]
        case .password(let p):
            members.append(("username", .string(p.username)))
        case .codeGenerator(let c):
            members += [("issuer", .optional(c.key.issuer)), ("account", .string(c.key.account))]
            switch c.key.generator {
            case .totp(let t):
                members += [
                    ("type", .string("totp")), ("algorithm", .string(t.algorithm.rawValue)),
                    ("digits", .int(Int64(t.digits))),
                    ("period", .int(Int64(t.period))),
                ]
            case .hotp(let h, let counter):
                members += [
                    ("type", .string("hotp")), ("algorithm", .string(h.algorithm.rawValue)),
                    ("digits", .int(Int64(h.digits))),
                    ("counter", .int(Int64(clamping: counter))),
                ]
            }
        }
        if let notes { members.append(("notes", .string(notes))) }
        return .object(members)
    }
}

struct KeychainListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the items (ID, kind, sites and user name; never a secret).")

    @OptionGroup var options: KeychainOptions

    @Argument(help: "Only items whose ID starts with this, or whose sites or names contain it.")
    var query: String = ""

    @Option(help: "Only this kind: passkey, password or code.")
    var kind: KindOption?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func run() async throws {
        let keychain = try options.open()
        for item in keychain.find(query, kind: kind?.kind) {
            if json {
                print(item.summaryJSON.rendered())
            } else {
                print(
                    "\(item.id.text)  \(item.kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))  \(item.title)"
                )
            }
        }
    }
}

struct KeychainShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show one item; its password or code secret only with --reveal.",
        discussion: "A passkey's private key is never shown; `export --cxf` carries it to another manager."
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The item's ID (or a unique prefix of at least 4 characters), or a site or name in it.")
    var query: String

    @Flag(help: "Also print the password, or the code generator's otpauth:// link with its secret.")
    var reveal = false

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        let keychain = try options.open()
        let item = try keychainCall { try keychain.item(matching: query) }
        guard case .object(var members) = item.summaryJSON else { return }
        if reveal {
            switch item.content {
            case .password(let p): members.append(.init(key: "password", value: .string(p.password)))
            case .codeGenerator(let c): members.append(.init(key: "uri", value: .string(c.key.otpauthURI)))
            case .passkey: break
            }
        }
        if json {
            print(JSONValue.object(members).rendered(pretty: true))
        } else {
            for member in members {
                let (name, value) = (member.key, member.value)
                switch value {
                case .string(let s): print("\(name): \(s)")
                case .null: continue
                default: print("\(name): \(value.rendered())")
                }
            }
        }
    }
}

struct KeychainDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete an item (other devices learn of it at their next sync).",
        discussion: "Asks for confirmation on a terminal; without one, pass --yes."
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The item's ID (or a unique prefix), or a site or name in it.")
    var query: String

    @Flag(help: "Do not ask.")
    var yes = false

    func run() async throws {
        let keychain = try options.open()
        let item = try keychainCall { try keychain.item(matching: query) }
        if !yes {
            guard Terminal.isInteractive else { throw keychainUsage("pass --yes to delete without a terminal") }
            guard Terminal.confirm("Delete \(item.kind.rawValue) \(item.title)? [y/N] ") else {
                print("Not deleted.")
                return
            }
        }
        try keychainCall {
            try keychain.delete(item.id)
            try keychain.save()
        }
        print("Deleted \(item.id.text) (\(item.title)).")
    }
}

struct KeychainAddPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-password",
        abstract: "Save a password for one or more sites.",
        discussion: """
            The password comes from --password-file (its first line), from standard input when it is not a \
            terminal, or is asked for without echo; --generate makes a random one (20 characters, or --words N from \
            the EFF long word list) and prints it once with its strength. It is never taken from the command line, \
            where other users could see it.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(name: .customLong("site"), help: "A site the password is for (repeat for several): example.com or a URL.")
    var sites: [String]

    @Option(help: "The user name at the site.")
    var username: String = ""

    @Option(help: "Read the password from this file's first line.")
    var passwordFile: String?

    @Flag(help: "Make a random 20-character password and print it once.")
    var generate = false

    @Option(help: "With --generate: this many words (3 to 20) from the EFF long word list instead of characters.")
    var words: Int?

    @Option(help: "Notes to keep with it.")
    var notes: String?

    func run() async throws {
        var normalised: [String] = []
        for site in sites {
            guard let name = SiteName.normalise(site) else {
                throw keychainUsage("'\(site)' is not a site name or URL")
            }
            if !normalised.contains(name) { normalised.append(name) }
        }
        guard !normalised.isEmpty else { throw keychainUsage("give at least one --site") }
        guard words == nil || generate else { throw keychainUsage("--words goes with --generate") }
        let password: String
        var generated: PasswordGenerator.Generated?
        if generate {
            generated = try Self.generated(words: words)
            password = generated?.password ?? ""
        } else if let passwordFile {
            password = try readFirstLine(path: passwordFile, what: "--password-file")
        } else if !Terminal.isInteractive {
            password = try readFirstLine(fd: 0, what: "standard input")
        } else {
            password = try Terminal.readSecret("Password: ")
        }
        let keychain = try options.open()
        let item = try keychainCall {
            let item = try keychain.add(
                .password(Password(sites: normalised, username: username, password: password)), notes: notes)
            try keychain.save()
            return item
        }
        print("Added \(item.id.text) (\(item.title)).")
        if let generated { Self.show(generated, words: words) }
    }

    /// 20 characters from the generator's 65 (about 120 bits), or `words` words from the EFF long word list
    /// (about 12.9 bits each).
    static func generated(words: Int?) throws -> PasswordGenerator.Generated {
        try keychainCall {
            if let words { return try PasswordGenerator.words(count: words) }
            return try PasswordGenerator.characters()
        }
    }

    /// The password, once, and its strength.
    static func show(_ generated: PasswordGenerator.Generated, words: Int?) {
        print("Password: \(generated.password)")
        let from =
            words.map { "\($0) words from \(PasswordGenerator.wordListName), 7,776 words" }
            ?? "\(generated.password.count) characters from \(PasswordGenerator.alphabet.count)"
        print("Strength: about \(Int(generated.bits)) bits of entropy (\(from)).")
    }
}

struct KeychainEditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change an item: its user name, sites, password or notes.",
        discussion: """
            Sites apply to passwords and code generators, --username and the password to passwords, notes to every \
            kind. A new password comes from --password-file, from standard input with --password-stdin, or is made \
            with --generate (printed once); never from the command line. Other devices get the change at their \
            next sync; a field changed differently on two devices at once keeps both versions (docs/keychain.md, \
            "Merging").
            """
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The item's ID (or a unique prefix), or a site or name in it.")
    var query: String

    @Option(help: "The new user name (passwords).")
    var username: String?

    @Option(name: .customLong("add-site"), help: "Add a site (repeat).")
    var addSites: [String] = []

    @Option(name: .customLong("remove-site"), help: "Remove a site (repeat).")
    var removeSites: [String] = []

    @Option(help: "Read the new password from this file's first line.")
    var passwordFile: String?

    @Flag(help: "Read the new password from standard input's first line.")
    var passwordStdin = false

    @Flag(help: "Make a new random 20-character password and print it once.")
    var generate = false

    @Option(help: "With --generate: this many words (3 to 20) from the EFF long word list instead of characters.")
    var words: Int?

    @Option(help: "Replace the notes.")
    var notes: String?

    @Flag(help: "Remove the notes.")
    var clearNotes = false

    func run() async throws {
        guard [passwordFile != nil, passwordStdin, generate].filter({ $0 }).count <= 1 else {
            throw keychainUsage("give one of --password-file, --password-stdin and --generate")
        }
        guard notes == nil || !clearNotes else { throw keychainUsage("give --notes or --clear-notes, not both") }
        guard words == nil || generate else { throw keychainUsage("--words goes with --generate") }
        let changes: [Bool] = [
            username != nil, !addSites.isEmpty, !removeSites.isEmpty, passwordFile != nil, passwordStdin, generate,
            notes != nil, clearNotes,
        ]
        guard changes.contains(true) else { throw keychainUsage("nothing to change: see --help") }
        let added = try addSites.map { site in
            guard let name = SiteName.normalise(site) else {
                throw keychainUsage("'\(site)' is not a site name or URL")
            }
            return name
        }
        let removed = removeSites.map { SiteName.normalise($0) ?? $0.lowercased() }
        var newPassword: String?
        var generated: PasswordGenerator.Generated?
        if generate {
            generated = try KeychainAddPasswordCommand.generated(words: words)
            newPassword = generated?.password
        } else if let passwordFile {
            newPassword = try readFirstLine(path: passwordFile, what: "--password-file")
        } else if passwordStdin {
            newPassword = try readFirstLine(fd: 0, what: "standard input")
        }

        let keychain = try options.open()
        var item = try keychainCall { try keychain.item(matching: query) }
        func editSites(_ sites: inout [String]) throws {
            for site in removed {
                guard sites.contains(site) else { throw keychainUsage("the item has no site \(site)") }
                sites.removeAll { $0 == site }
            }
            for site in added where !sites.contains(site) { sites.append(site) }
        }
        switch item.content {
        case .password(var p):
            try editSites(&p.sites)
            if let username { p.username = username }
            if let newPassword { p.password = newPassword }
            item.content = .password(p)
        case .codeGenerator(var c):
            guard username == nil, newPassword == nil else {
                throw keychainUsage("a code generator has no user name or password to change")
            }
            try editSites(&c.sites)
            item.content = .codeGenerator(c)
        case .passkey:
            guard username == nil, newPassword == nil, added.isEmpty, removed.isEmpty else {
                throw keychainUsage("a passkey's sites and names are the relying party's; only its notes change")
            }
        }
        if let notes { item.notes = notes }
        if clearNotes { item.notes = nil }
        let edited = item
        try keychainCall {
            try keychain.update(edited)
            try keychain.save()
        }
        print("Changed \(edited.id.text) (\(edited.title)).")
        if let generated { KeychainAddPasswordCommand.show(generated, words: words) }
    }
}

struct KeychainAddCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-code",
        abstract: "Save a verification-code generator from an otpauth:// or apple-otpauth:// link or a QR image.",
        discussion: """
            Give the link as an argument, or - to read it from standard input (keeps the secret out of the \
            process list), or --qr with a PNG image of its QR code. QR images are read with zbarimg (Debian \
            package zbar-tools), which must be installed for --qr.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The otpauth:// or apple-otpauth:// link, or - for standard input.")
    var uri: String?

    @Option(help: "A PNG (or other image zbarimg reads) holding the link as a QR code.")
    var qr: String?

    @Option(
        name: .customLong("site"), help: "A site the codes are for (repeat); default: the issuer when it is a domain.")
    var sites: [String] = []

    @Option(help: "Notes to keep with it.")
    var notes: String?

    func run() async throws {
        var text: String
        switch (uri, qr) {
        case (nil, let path?):
            guard FileManager.default.isReadableFile(atPath: path) else { throw keychainUsage("cannot read \(path)") }
            text = try keychainCall { try QRReader.read(path: path) }
        case ("-", nil): text = try readFirstLine(fd: 0, what: "standard input")
        case (let given?, nil): text = given
        default: throw keychainUsage("give a link or --qr, not both")
        }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        var normalised: [String] = []
        for site in sites {
            guard let name = SiteName.normalise(site) else {
                throw keychainUsage("'\(site)' is not a site name or URL")
            }
            if !normalised.contains(name) { normalised.append(name) }
        }
        let generator = try keychainCall { try CodeGenerator(parsing: text, sites: normalised) }
        let keychain = try options.open()
        let item = try keychainCall {
            let item = try keychain.add(.codeGenerator(generator), notes: notes)
            try keychain.save()
            return item
        }
        print("Added \(item.id.text) (\(item.title)).")
    }
}

struct KeychainCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code",
        abstract: "Print the current verification code and how many seconds it stays valid.",
        discussion: """
            With one matching generator: the code on the first line, then how long it stays valid (HOTP: the \
            counter, which then moves on). With several: one line each, code, seconds and title.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The generator's ID, or a site, issuer or account in it (default: all).")
    var query: String = ""

    @Option(help: "The time: ISO 8601 (2026-01-01T12:00:00Z) or Unix seconds. Default: now.")
    var at: String?

    func run() async throws {
        let time: Date? = try at.map { try parseTime($0) }
        let keychain = try options.open()
        let generators = keychain.find(query, kind: .code)
        guard !generators.isEmpty else {
            throw keychainFailure(KeychainError(.itemNotFound, reason: "no verification-code generator matches"))
        }
        var lines: [String] = []
        var countersMoved = false
        for item in generators {
            let code = try keychainCall { try keychain.code(for: item.id, at: time) }
            if code.counter != nil { countersMoved = true }
            if generators.count == 1 {
                lines.append(code.code)
                if let seconds = code.secondsLeft {
                    lines.append("valid for \(seconds) more second\(seconds == 1 ? "" : "s")")
                } else if let counter = code.counter {
                    lines.append("counter \(counter)")
                }
            } else {
                let validity = code.secondsLeft.map { "\($0)s" } ?? "#\(code.counter ?? 0)"
                lines.append("\(code.code)  \(validity)  \(item.title)")
            }
        }
        // An HOTP counter moved on: it is saved before the code is shown, so no code is ever shown twice.
        if countersMoved { try keychainCall { try keychain.save() } }
        for line in lines { print(line) }
    }
}
