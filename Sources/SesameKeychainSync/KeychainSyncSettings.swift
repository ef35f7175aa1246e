import SesameCore

extension ServerConfiguration {
    private enum KeychainQuotaKey: SettingKey { static let defaultValue = 256 }

    /// MiB one account's keychain may hold on the server (sync records, key wraps, share offers); a push or share
    /// that would pass it is refused with nothing written.
    public var keychainQuota: Int {
        get { self[KeychainQuotaKey.self] }
        set { self[KeychainQuotaKey.self] = newValue }
    }
    package var keychainQuotaBytes: Int64 { Int64(keychainQuota) * 1024 * 1024 }

    /// The keychain sync's rows of the settings table.
    package static let keychainSyncSettings: [Setting] = [
        Setting(
            key: "keychainQuota", flag: "--keychain-quota", environment: "SESAME_KEYCHAIN_QUOTA",
            defaultValue: String(KeychainQuotaKey.defaultValue),
            help:
                "MiB one account's keychain may hold on the server (sync records, key wraps, share offers); a push or share that would pass it answers 409 keychain_limit_reached and writes nothing."
        ) { c, v throws(ConfigurationError) in c.keychainQuota = try int("keychain-quota", v, 1...65536) }
    ]
}
