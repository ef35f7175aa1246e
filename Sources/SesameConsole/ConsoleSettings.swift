import SesameCore

extension ServerConfiguration {
    private enum ConsoleWindowKey: SettingKey { static let defaultValue = 900 }

    /// Seconds after a passkey sign-in or re-authentication during which the console and the admin API serve an
    /// administrator (`AdminGate`); after it, the console asks for the passkey again, inline.
    public var consoleReauthenticationWindow: Int {
        get { self[ConsoleWindowKey.self] }
        set { self[ConsoleWindowKey.self] = newValue }
    }

    /// The console's rows of the settings table.
    package static let consoleSettings: [Setting] = [
        Setting(
            key: "consoleReauthenticationWindow", flag: "--console-reauthentication-window",
            environment: "SESAME_CONSOLE_REAUTHENTICATION_WINDOW", defaultValue: String(ConsoleWindowKey.defaultValue),
            help:
                "Seconds after a passkey sign-in or re-authentication during which the operators' console and the admin API serve an administrator."
        ) { c, v throws(ConfigurationError) in
            c.consoleReauthenticationWindow = try int("console-reauthentication-window", v, 60...86_400)
        }
    ]
}
