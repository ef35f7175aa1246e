import SesameCore

extension ServerConfiguration {
    private enum PasswordScryptLogNKey: SettingKey { static let defaultValue = 15 }

    /// scrypt cost: N = 2^passwordScryptLogN, r = 8, p = 1.
    public var passwordScryptLogN: Int {
        get { self[PasswordScryptLogNKey.self] }
        set { self[PasswordScryptLogNKey.self] = newValue }
    }

    /// The passwords' rows of the settings table.
    package static let passwordsSettings: [Setting] = [
        Setting(
            key: "passwordScryptLogN", flag: "--password-scrypt-log-n", environment: "SESAME_PASSWORD_SCRYPT_LOG_N",
            defaultValue: String(PasswordScryptLogNKey.defaultValue),
            help: "scrypt cost log2(N) for new password hashes (r=8, p=1); older hashes upgrade on sign-in."
        ) { c, v throws(ConfigurationError) in c.passwordScryptLogN = try int("password-scrypt-log-n", v, 10...20) }
    ]
}
