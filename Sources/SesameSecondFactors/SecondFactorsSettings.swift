import Foundation
import SesameCore

extension ServerConfiguration {
    private enum SMSSenderKey: SettingKey { static let defaultValue = "console" }
    private enum AllowConsoleSMSKey: SettingKey { static let defaultValue = false }

    /// Where SMS messages go: `console` (printed to standard output, for development) or an https webhook URL that
    /// receives `{"to": "+15551234567", "message": "..."}` as a JSON POST.
    public var smsSender: String {
        get { self[SMSSenderKey.self] }
        set { self[SMSSenderKey.self] = newValue }
    }

    /// Allow the `console` SMS sender (codes and numbers printed to standard output) on an https origin.
    public var allowConsoleSMS: Bool {
        get { self[AllowConsoleSMSKey.self] }
        set { self[AllowConsoleSMSKey.self] = newValue }
    }

    /// The second factors' rows of the settings table.
    package static let secondFactorsSettings: [Setting] = [
        Setting(
            key: "smsSender", flag: "--sms-sender", environment: "SESAME_SMS_SENDER",
            defaultValue: SMSSenderKey.defaultValue,
            help: "console, or an https:// webhook URL receiving (to, message) JSON."
        ) { c, v throws(ConfigurationError) in c.smsSender = v },
        Setting(
            key: "allowConsoleSMS", flag: "--allow-console-sms", environment: "SESAME_ALLOW_CONSOLE_SMS",
            defaultValue: String(AllowConsoleSMSKey.defaultValue),
            help: "Allow the console SMS sender (prints codes and numbers) on an https origin."
        ) { c, v throws(ConfigurationError) in c.allowConsoleSMS = try bool("allow-console-sms", v) },
    ]

    /// The SMS sender is the console only where codes on standard output harm no one, or an http(s) URL.
    package static func validateSecondFactors(_ c: ServerConfiguration) throws(ConfigurationError) {
        if c.smsSender == "console" {
            guard !c.isSecureOrigin || c.allowConsoleSMS else {
                throw ConfigurationError(
                    "sms-sender: console prints codes and phone numbers to standard output; on an https origin give a webhook URL, or set allow-console-sms to true"
                )
            }
        } else {
            guard let url = URL(string: c.smsSender), let scheme = url.scheme?.lowercased(),
                scheme == "https" || scheme == "http",
                url.host != nil
            else { throw ConfigurationError("sms-sender: expected console or an http(s) URL") }
        }
    }
}
