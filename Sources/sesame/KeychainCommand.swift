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

/// `sesame keychain`: a passkey, password and verification-code keychain, end-to-end encrypted and synced
/// (docs/keychain.md).
///
/// Exit status: 0 success; 1 a refusal (wrong passphrase, locked, a check failed, an attack detected, nothing
/// found); 2 bad input or usage (a malformed item, origin, code, key or file).
struct KeychainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain",
        abstract: "Passkeys, passwords and verification codes, end-to-end encrypted and synced.",
        discussion: """
            The vault lives in --dir, else $SESAME_KEYCHAIN_DIR, else $XDG_DATA_HOME/sesame-keychain \
            (~/.local/share/sesame-keychain). Commands that need it unlocked use the session `unlock` started, \
            else the passphrase from --passphrase-file, --passphrase-fd or $SESAME_KEYCHAIN_PASSPHRASE, else ask on \
            the terminal without echo. No option takes the passphrase itself.

            Sync, joining, recovery and sharing go through the Sesame server the directory enrolled with \
            (`enroll --server URL`, with a session token of the account), or through --sync-dir or \
            $SESAME_KEYCHAIN_SYNC_DIR, a folder that plays the server.
            """,
        subcommands: [
            KeychainInitCommand.self, KeychainUnlockCommand.self, KeychainLockCommand.self, KeychainStatusCommand.self,
            KeychainEnrollCommand.self, KeychainSyncCommand.self,
            KeychainListCommand.self, KeychainShowCommand.self, KeychainEditCommand.self, KeychainDeleteCommand.self,
            KeychainAddPasswordCommand.self, KeychainAddCodeCommand.self, KeychainCodeCommand.self,
            KeychainDevicesCommand.self, KeychainApproveCommand.self, KeychainRefuseCommand.self,
            KeychainJoinCommand.self,
            KeychainRecoverCommand.self,
            KeychainExportCommand.self, KeychainImportCommand.self,
            KeychainShareCommand.self, KeychainAcceptCommand.self,
            KeychainWebAuthnCommand.self, KeychainNativeHostCommand.self, KeychainInstallBrowserCommand.self,
        ]
    )
}

/// Options every keychain command takes.
struct KeychainOptions: ParsableArguments {
    @Option(help: "The vault directory (default: $SESAME_KEYCHAIN_DIR, else $XDG_DATA_HOME/sesame-keychain).")
    var dir: String?

    @Option(help: "Read the passphrase from this file's first line (default: $SESAME_KEYCHAIN_PASSPHRASE, else ask).")
    var passphraseFile: String?

    @Option(help: "Read the passphrase from this open file descriptor's first line (for scripts: 3<file).")
    var passphraseFd: Int32?

    @Option(help: "A sync folder standing in for the server (default: $SESAME_KEYCHAIN_SYNC_DIR).")
    var syncDir: String?

    @Option(
        help:
            "The Sesame server to sync with (default: $SESAME_KEYCHAIN_SERVER, else the one this directory enrolled with)."
    )
    var server: String?

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    func directory() throws -> VaultDirectory {
        try keychainCall { try VaultDirectory.resolve(explicit: dir, environment: environment) }
    }

    /// The passphrase from the file or the environment, if given there.
    func givenPassphrase() throws -> String? {
        if passphraseFile != nil && passphraseFd != nil {
            throw keychainUsage("give --passphrase-file or --passphrase-fd, not both")
        }
        if let passphraseFile { return try readFirstLine(path: passphraseFile, what: "--passphrase-file") }
        if let passphraseFd { return try readFirstLine(fd: passphraseFd, what: "--passphrase-fd") }
        if let env = environment["SESAME_KEYCHAIN_PASSPHRASE"], !env.isEmpty { return env }
        return nil
    }

    /// The passphrase, asking on the terminal (twice with `confirm`) when none was given.
    func passphrase(prompt: String = "Passphrase: ", confirm: Bool = false) throws -> String {
        if let given = try givenPassphrase() { return given }
        let first = try Terminal.readSecret(prompt)
        if confirm {
            let second = try Terminal.readSecret("Again: ")
            guard first == second else { throw keychainUsage("the passphrases differ") }
        }
        return first
    }

    /// Opens the vault with the live session, else the given or asked passphrase.
    func open(requireVerification: Bool = false) throws -> Keychain {
        let directory = try directory()
        if let given = try givenPassphrase() {
            return try keychainCall { try Keychain.open(directory, passphrase: given) }
        }
        do throws(KeychainError) {
            let keychain = try Keychain.open(directory, passphrase: nil)
            if !requireVerification || keychain.userVerified { return keychain }
        } catch {
            guard error.code == .locked else { throw keychainFailure(error) }
        }
        let asked = try Terminal.readSecret("Passphrase: ")
        return try keychainCall { try Keychain.open(directory, passphrase: asked) }
    }

    var syncFolder: String? { (syncDir ?? environment["SESAME_KEYCHAIN_SYNC_DIR"]).flatMap { $0.isEmpty ? nil : $0 } }
    var serverAddress: String? { (server ?? environment["SESAME_KEYCHAIN_SERVER"]).flatMap { $0.isEmpty ? nil : $0 } }

    /// The transport: the sync folder when one is given, else the Sesame server this directory enrolled with
    /// (`enroll`), else a clear error.
    func transport() throws -> any SyncTransport {
        if let folder = syncFolder {
            guard serverAddress == nil else { throw keychainUsage("give a sync folder or a server, not both") }
            return FileSyncTransport(directory: folder)
        }
        let directory = try directory()
        guard let enrollment = try keychainCall({ try SyncEnrollment.load(from: directory) }) else {
            throw keychainFailure(
                KeychainError(
                    .syncNotConfigured,
                    reason: serverAddress == nil
                        ? "give --server (after `sesame keychain enroll --server URL`) or --sync-dir"
                        : "this device is not enrolled: run `sesame keychain enroll --server URL` first"))
        }
        if let serverAddress {
            let wanted = try keychainCall { try HTTPSyncTransport.checkedServer(serverAddress) }
            guard wanted.absoluteString == enrollment.server else {
                throw keychainUsage(
                    "this directory is enrolled with \(enrollment.server); enroll again to use another server")
            }
        }
        return try keychainCall { try HTTPSyncTransport(enrollment: enrollment) }
    }

    var hasTransport: Bool {
        if syncFolder != nil || serverAddress != nil { return true }
        guard let directory = try? directory() else { return false }
        return (try? SyncEnrollment.load(from: directory)) != nil
    }
}

// MARK: Errors and output

/// Library errors whose cause is the input rather than the vault's state: exit 2.
private let usageCodes: Set<KeychainError.Code> = [
    .invalidItem, .invalidOrigin, .invalidOptions, .pairingCodeMalformed, .recoveryKeyMalformed, .recoveryKeyChecksum,
    .invalidSharingKey, .invalidCXF, .unsupportedCXFVersion, .passphraseTooShort, .invalidDirectory,
    .passphraseUnavailable, .qrDecoderUnavailable, .qrUnreadable, .malformedNativeMessage, .nativeMessageTooLarge,
    .invalidGeneratorSettings, .invalidExport, .encryptedExport, .unsupportedPasskeyKey, .malformedPasskeyKey,
]

/// Prints the error (its code and reason never hold a secret) and gives the exit status.
func keychainFailure(_ error: KeychainError) -> ExitCode {
    var standardError = StandardError()
    print("error: \(error.code): \(error.reason)", to: &standardError)
    return ExitCode(usageCodes.contains(error.code) ? 2 : 1)
}

func keychainUsage(_ message: String) -> ExitCode {
    var standardError = StandardError()
    print("error: \(message)", to: &standardError)
    return ExitCode(2)
}

/// Runs a library call, turning a `KeychainError` into the command's exit (other errors, already exits, pass).
func keychainCall<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as KeychainError {
        throw keychainFailure(error)
    }
}

func keychainCall<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as KeychainError {
        throw keychainFailure(error)
    }
}

func note(_ message: String) {
    var standardError = StandardError()
    print(message, to: &standardError)
}

/// Writes `bytes` to a new file readable by its owner only; an existing file is replaced only with `force`.
func writePrivateFile(_ bytes: [UInt8], to path: String, force: Bool) throws {
    if force { unlink(path) }
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
        throw keychainUsage(
            "cannot create \(path): \(String(cString: strerror(errno)))" + (errno == EEXIST ? " (use --force)" : ""))
    }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw keychainUsage("cannot write \(path): \(String(cString: strerror(errno)))") }
        offset += n
    }
}

/// The first line of a file holding a secret (a passphrase, password or recovery key). Read with read(2), so
/// /dev/fd/N and pipes work; at most 64 KiB; a trailing CR is dropped. The path is named in an error, never
/// the content.
func readFirstLine(path: String, what: String) throws -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw keychainUsage("cannot read \(what) \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    return try readFirstLine(fd: fd, what: what)
}

func readFirstLine(fd: Int32, what: String) throws -> String {
    let bytes = try readAll(fd: fd, limit: 64 * 1024, what: what, stopAtNewline: true)
    var line = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
    guard let text = String(validating: line, as: UTF8.self) else { throw keychainUsage("\(what) is not UTF-8 text") }
    return text
}

/// Everything readable from `fd` (or up to the first newline with `stopAtNewline`, so a line typed or pasted on a
/// terminal ends the input), refusing more than `limit` bytes.
func readAll(fd: Int32, limit: Int, what: String, stopAtNewline: Bool = false) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n == 0 { break }
        if n < 0 {
            if errno == EINTR { continue }
            throw keychainUsage("cannot read \(what): \(String(cString: strerror(errno)))")
        }
        bytes += buffer[..<n]
        guard bytes.count <= limit else { throw keychainUsage("\(what) is larger than \(limit) bytes") }
        if stopAtNewline, buffer[..<n].contains(UInt8(ascii: "\n")) { break }
    }
    return bytes
}

/// A whole file (or standard input for `-`) of at most `limit` bytes.
func readFile(_ path: String, limit: Int, what: String) throws -> [UInt8] {
    if path == "-" { return try readAll(fd: 0, limit: limit, what: what) }
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw keychainUsage("cannot read \(what) \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    return try readAll(fd: fd, limit: limit, what: what)
}

/// Dates as ISO 8601 in UTC, for output.
func isoDate(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// What a signal handler needs to turn echo back on: the terminal and its settings from before the prompt. Set
/// only on the main thread around one prompt.
private enum EchoGuard {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()

    static let restoreAndRaise: @convention(c) (Int32) -> Void = { number in
        if EchoGuard.fd >= 0 {
            tcsetattr(EchoGuard.fd, TCSANOW, &EchoGuard.saved)
            _ = write(EchoGuard.fd, "\n", 1)
        }
        signal(number, SIG_DFL)
        raise(number)
    }
}

/// The terminal, for secrets typed without echo.
enum Terminal {
    static var isInteractive: Bool { isatty(0) == 1 }

    /// Reads a line from /dev/tty with echo off. No terminal: `passphraseUnavailable`.
    static func readSecret(_ prompt: String) throws -> String {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            throw keychainFailure(
                KeychainError(
                    .passphraseUnavailable,
                    reason:
                        "no terminal to ask on: use --passphrase-file or SESAME_KEYCHAIN_PASSPHRASE (or unlock first)"))
        }
        defer { close(fd) }
        var original = termios()
        let isTerminal = tcgetattr(fd, &original) == 0
        var previousHandlers: [(Int32, sig_t?)] = []
        if isTerminal {
            // Ctrl-C or a kill while echo is off must not leave the terminal silent: put it back, then die of
            // the signal as usual.
            EchoGuard.fd = fd
            EchoGuard.saved = original
            previousHandlers = [SIGINT, SIGTERM, SIGHUP].map { ($0, signal($0, EchoGuard.restoreAndRaise)) }
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &silent)
        }
        defer {
            if isTerminal {
                tcsetattr(fd, TCSAFLUSH, &original)
                _ = write(fd, "\n", 1)
                for (number, handler) in previousHandlers { signal(number, handler) }
                EchoGuard.fd = -1
            }
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
            if line.count > 4096 { break }
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Asks a yes/no question on the terminal; false without one.
    static func confirm(_ question: String) -> Bool {
        guard let answer = try? readLine(question) else { return false }
        return ["y", "yes"].contains(answer.lowercased())
    }

    static func readLine(_ prompt: String) throws -> String {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw keychainUsage("no terminal to ask on") }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
            if line.count > 4096 { break }
        }
        return String(decoding: line, as: UTF8.self)
    }
}
