import Foundation
import WebAuthn

/// The browser extension in `Extensions/browser/` and where browsers look for its native host's manifest.
public enum BrowserExtension {
    /// The native messaging host name the extension connects to (`chrome.runtime.connectNative`).
    public static let hostName = "dev.sesame.keychain"
    /// The Chromium extension ID, fixed by the public key in the extension's manifest.json (`key`): the first
    /// 128 bits of SHA-256 of that key, written with the letters a to p. (The private key is not kept anywhere:
    /// the extension is loaded unpacked, never packed.)
    public static let chromiumId = "dpeiojhnbjhjooimcpbchnhkmedcmnha"
    /// The Firefox add-on ID (`browser_specific_settings.gecko.id`).
    public static let firefoxId = "keychain@sesame.invalid"

    public enum Browser: String, Sendable, CaseIterable {
        case chromium, chrome, firefox
    }

    /// The folder where `browser` looks for native messaging host manifests on Linux: `<userDataDir>/NativeMessagingHosts`
    /// for a Chromium-family browser started with `--user-data-dir`, else the per-user folder
    /// (`$XDG_CONFIG_HOME/chromium/NativeMessagingHosts`, `$XDG_CONFIG_HOME/google-chrome/NativeMessagingHosts`,
    /// `~/.mozilla/native-messaging-hosts`). Firefox has no per-profile folder: a user data directory is refused.
    public static func manifestDirectory(
        for browser: Browser, userDataDir: String?, environment: [String: String]
    ) throws(KeychainError) -> String {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home.map { $0 + "/.config" }
        switch browser {
        case .chromium, .chrome:
            if let userDataDir { return userDataDir + "/NativeMessagingHosts" }
            guard let config else {
                throw KeychainError(.invalidDirectory, reason: "neither $XDG_CONFIG_HOME nor $HOME is set")
            }
            return config + (browser == .chromium ? "/chromium" : "/google-chrome") + "/NativeMessagingHosts"
        case .firefox:
            guard userDataDir == nil else {
                throw KeychainError(.invalidDirectory, reason: "Firefox reads host manifests per user, not per profile")
            }
            guard let home else { throw KeychainError(.invalidDirectory, reason: "$HOME is not set") }
            return home + "/.mozilla/native-messaging-hosts"
        }
    }

    /// The host manifest (Chromium: `allowed_origins`; Firefox: `allowed_extensions`), pointing at `launcher`.
    public static func hostManifest(for browser: Browser, launcher: String) -> [UInt8] {
        var manifest: [String: JSONValue] = [
            "name": .string(hostName),
            "description": .string("Sesame Keychain: passkeys for the browser extension"),
            "path": .string(launcher),
            "type": .string("stdio"),
        ]
        if browser == .firefox {
            manifest["allowed_extensions"] = .array([.string(firefoxId)])
        } else {
            manifest["allowed_origins"] = .array([.string("chrome-extension://\(chromiumId)/")])
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        // Strings and arrays of strings only: this encoding cannot fail.
        return Array((try? encoder.encode(manifest)) ?? Data()) + [0x0a]
    }

    /// The launcher script the manifest names: browsers start a host without arguments of our choosing, so this
    /// script adds the vault directory (and the public suffix list, when one was given) and passes on what the
    /// browser adds (the caller's origin).
    public static func launcher(executable: String, arguments: [String]) -> [UInt8] {
        let words = ([executable, "keychain", "native-host"] + arguments).map(shellQuoted).joined(separator: " ")
        return Array(
            """
            #!/bin/sh
            # Written by `sesame keychain install-browser`: starts the Sesame Keychain native messaging host.
            exec \(words) "$@"

            """.utf8)
    }

    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
