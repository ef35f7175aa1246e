/// Where a vault lives: `--dir`, else `SESAME_KEYCHAIN_DIR`, else `$XDG_DATA_HOME/sesame-keychain`, else
/// `~/.local/share/sesame-keychain`.
///
/// ```
/// DIR/vault     the vault file (VaultFile), mode 0600
/// DIR/session   the unlocked session (Session), mode 0600, only while unlocked
/// DIR/.lock     an empty file other sesame processes wait on (flock) while one of them changes the vault
/// ```
/// The directory is created with mode 0700.
public struct VaultDirectory: Sendable, Hashable {
    public let path: String

    public init(path: String) {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.path = p
    }

    public static func resolve(explicit: String?, environment: [String: String]) throws(KeychainError) -> VaultDirectory
    {
        if let explicit, !explicit.isEmpty { return VaultDirectory(path: explicit) }
        if let env = environment["SESAME_KEYCHAIN_DIR"], !env.isEmpty { return VaultDirectory(path: env) }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            // The XDG Base Directory specification ignores relative paths here.
            if data.hasPrefix("/") { return VaultDirectory(path: data + "/sesame-keychain") }
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw KeychainError(
                .invalidDirectory, reason: "no vault directory: set --dir, SESAME_KEYCHAIN_DIR, XDG_DATA_HOME or HOME")
        }
        return VaultDirectory(path: home + "/.local/share/sesame-keychain")
    }

    var vaultFile: String { path + "/vault" }
    var sessionFile: String { path + "/session" }
    var lockFile: String { path + "/.lock" }

    func lock() throws(KeychainError) -> DirectoryLock {
        try AtomicFile.makeDirectory(path)
        return try DirectoryLock(path: lockFile)
    }
}
