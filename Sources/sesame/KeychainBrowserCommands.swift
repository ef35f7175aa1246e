import ArgumentParser
import Foundation
import Keychain

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// `sesame keychain native-host` and `install-browser`: the keychain for the browser extension in
// Extensions/browser (docs/keychain.md, "In the browser").

struct KeychainNativeHostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "native-host",
        abstract: "The browser extension's native messaging host (started by the browser, not by hand).",
        discussion: """
            Reads native messages on standard input (a 4-byte native-endian length, then JSON) and answers each \
            on standard output; at most 1 MiB each way. Requests carry the page's origin as the browser reported \
            it; the RP ID is checked against it with the public suffix list, and only that site's passkeys are \
            listed or used. The vault must be unlocked (`sesame keychain unlock`, or the extension's toolbar \
            window, which passes on the passphrase typed there): the host never asks for the passphrase. The arguments the browser adds (the caller's origin, Firefox's manifest path and add-on \
            ID) are accepted and not used: the host manifest already limits which extension may start the host.
            """
    )

    @OptionGroup var keychainOptions: KeychainOptions

    @Option(help: "The public suffix list file (default: $SESAME_PUBLIC_SUFFIX_LIST, else Debian's).")
    var publicSuffixList: String?

    @Option(help: "Seconds without use after which a session the toolbar window started locks (as `unlock --idle`).")
    var idle: UInt32 = 600

    @Argument(help: .hidden)
    var browserArguments: [String] = []

    func run() async throws {
        let path =
            publicSuffixList ?? ProcessInfo.processInfo.environment["SESAME_PUBLIC_SUFFIX_LIST"]
            ?? PublicSuffixList.defaultPath
        let suffixes = try keychainCall { try PublicSuffixList.load(path: path) }
        let directory = try keychainOptions.directory()
        let passphrase = try keychainOptions.givenPassphrase()
        let syncFolder = keychainOptions.syncFolder
        let host = Self.host(
            directory: directory, passphrase: passphrase, suffixes: suffixes, syncFolder: syncFolder, idle: idle)
        while true {
            guard let header = try readExactly(NativeMessageFrame.headerLength, allowEOF: true) else { return }
            switch Self.bodyLength(header) {
            case .failure(let error):
                // The stream cannot be followed past a frame this host will not read: say why, then stop.
                try send(NativeHost.reply(refusing: error))
                throw keychainFailure(error)
            case .success(let length):
                guard let body = try readExactly(length, allowEOF: false) else { return }
                try send(await host.replyWithSync(to: body))
            }
        }
    }

    private static func bodyLength(_ header: [UInt8]) -> Result<Int, KeychainError> {
        do {
            return .success(try NativeMessageFrame.length(header: header))
        } catch {
            return .failure(error)
        }
    }

    /// The host opens the vault with the unlock session (or a passphrase given by file or environment) for each
    /// request, and never asks on a terminal; the toolbar window's `unlock` and `lock` start and end that session.
    /// The window's sync requests go to the sync folder when the host was given one (`--sync-dir`, which
    /// `install-browser` writes into the launcher), else to the server this directory enrolled with.
    private static func host(
        directory: VaultDirectory, passphrase: String?, suffixes: PublicSuffixList, syncFolder: String?, idle: UInt32
    ) -> NativeHost {
        let sync = NativeHost.SyncControl { () throws(KeychainError) -> any SyncTransport in
            if let syncFolder { return FileSyncTransport(directory: syncFolder) }
            guard let enrollment = try SyncEnrollment.load(from: directory) else {
                throw KeychainError(
                    .syncNotConfigured, reason: "no sync folder, and this device is not enrolled with a server")
            }
            return try HTTPSyncTransport(enrollment: enrollment)
        }
        return NativeHost(suffixes: suffixes, session: .directory(directory, idle: idle), sync: sync) {
            () throws(KeychainError) -> Keychain in
            try Keychain.open(directory, passphrase: passphrase)
        }
    }

    private func readExactly(_ count: Int, allowEOF: Bool) throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = bytes.withUnsafeMutableBytes { read(0, $0.baseAddress! + offset, count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                if offset == 0 && allowEOF { return nil }
                throw keychainFailure(
                    KeychainError(.malformedNativeMessage, reason: "standard input ended inside a message"))
            }
            offset += n
        }
        return bytes
    }

    private func send(_ reply: [UInt8]) throws {
        let frame = try keychainCall { try NativeMessageFrame.encode(reply) }
        var offset = 0
        while offset < frame.count {
            let n = frame.withUnsafeBytes { write(1, $0.baseAddress! + offset, frame.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw ExitCode(1) }  // the browser went away
            offset += n
        }
    }
}

struct KeychainInstallBrowserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install-browser",
        abstract: "Register the native host with a browser and say how to load the extension.",
        discussion: """
            Writes the native messaging host manifest (\(BrowserExtension.hostName).json) and a launcher script \
            where the browser looks: <user-data-dir>/NativeMessagingHosts for Chromium or Chrome started with \
            --user-data-dir, else ~/.config/chromium/NativeMessagingHosts, ~/.config/google-chrome/\
            NativeMessagingHosts or ~/.mozilla/native-messaging-hosts. The launcher runs this sesame binary with \
            this vault directory. The extension itself is Extensions/browser in Sesame's source tree.
            """
    )

    enum BrowserChoice: String, ExpressibleByArgument, CaseIterable {
        case chromium, chrome, firefox
    }

    @OptionGroup var keychainOptions: KeychainOptions

    @Option(help: "The browser: chromium, chrome or firefox.")
    var browser: BrowserChoice = .chromium

    @Option(help: "The Chromium or Chrome profile folder the browser is started with (--user-data-dir).")
    var userDataDir: String?

    @Option(help: "The public suffix list file the host should read (default: Debian's).")
    var publicSuffixList: String?

    @Option(help: "Where the extension is (printed in the instructions; default: Extensions/browser).")
    var extensionDir: String?

    @Option(help: "Seconds without use after which a session the toolbar window started locks (default 600).")
    var idle: UInt32?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let which = BrowserExtension.Browser(rawValue: browser.rawValue)!
        let folder = try keychainCall {
            try BrowserExtension.manifestDirectory(
                for: which, userDataDir: userDataDir.map(absolute), environment: environment)
        }
        let vault = try keychainOptions.directory()
        var arguments = ["--dir", absolute(vault.path)]
        // The window's "Sync now" and device approval use the same sync folder as the CLI (a server enrollment is
        // found in the vault directory itself).
        if let folder = keychainOptions.syncFolder { arguments += ["--sync-dir", absolute(folder)] }
        if let publicSuffixList { arguments += ["--public-suffix-list", absolute(publicSuffixList)] }
        if let idle { arguments += ["--idle", String(idle)] }
        let executable = absolute(CommandLine.arguments[0].contains("/") ? CommandLine.arguments[0] : selfPath())
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw keychainUsage("cannot create \(folder)")
        }
        let launcher = folder + "/sesame-keychain-host"
        let manifest = folder + "/\(BrowserExtension.hostName).json"
        try replace(launcher, BrowserExtension.launcher(executable: executable, arguments: arguments), mode: 0o755)
        try replace(manifest, BrowserExtension.hostManifest(for: which, launcher: launcher), mode: 0o644)
        let source = extensionDir.map(absolute) ?? "Extensions/browser (in Sesame's source tree)"
        print("Native host registered for \(browser.rawValue): \(manifest)")
        print("It runs: \(launcher)")
        switch which {
        case .firefox:
            print(
                "Load the extension: about:debugging → This Firefox → Load Temporary Add-on → \(source)/manifest.json")
        case .chromium, .chrome:
            let flag = userDataDir.map { " --user-data-dir=\(absolute($0))" } ?? ""
            print(
                "Load the extension: \(which == .chrome ? "google-chrome" : "chromium")\(flag) --load-extension=\(source)"
            )
            print("  or chrome://extensions → Developer mode → Load unpacked → \(source)")
            print("Its ID is \(BrowserExtension.chromiumId) (fixed by the key in its manifest.json).")
        }
        print("Unlock the vault before signing in: sesame keychain unlock")
    }

    private func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    private func selfPath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Writes `bytes` to a temporary file beside `path` and renames it over `path`.
    private func replace(_ path: String, _ bytes: [UInt8], mode: Int) throws {
        let temporary = path + ".tmp-\(getpid())"
        guard
            FileManager.default.createFile(
                atPath: temporary, contents: Data(bytes), attributes: [.posixPermissions: mode])
        else { throw keychainUsage("cannot write \(temporary)") }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw keychainUsage("cannot write \(path)")
        }
    }
}
