import Foundation
import Hummingbird
import SesameCore

/// The admin JSON API for the settings in force (`/api/admin/settings`, scope `settings`), in the OpenAPI document;
/// the console's Settings page shows it. Read-only: settings change where they are given (the configuration file,
/// the environment, flags) and take effect at the next start. Each row is a row of the settings table
/// (`ServerConfiguration.settings`, which the composition root passes in) with the value given and where it came
/// from; a secret setting's value (`Setting.secret`) is never in the answer, only whether it is set, and a URL's
/// password (`Setting.secretURLPassword`: the database, the mail relay) is masked while the rest of the URL shows.
package struct SettingsAdminRoutes: Sendable {
    package let sesame: ServerCore
    package let settings: [Setting]

    package init(sesame: ServerCore, settings: [Setting]) {
        self.sesame = sesame
        self.settings = settings
    }

    package static let scope = AdminScope("settings")
    /// What a secret setting's value shows when one is set.
    package static let masked = "••••••••"

    package struct SettingBody: ResponseEncodable, Sendable {
        package let key: String
        package let flag: String
        package let environment: String
        /// The value in force as given (`masked` for a set secret), or the default.
        package let value: String
        /// `default`, `file <path>`, `environment <VAR>`, `flag <--flag>`, or `unknown` (a configuration made in
        /// code, whose sources were not recorded).
        package let source: String
        package let secret: Bool
        package let help: String
        /// No value is in force: the setting is given empty, or not given and without a default (`(none)` in
        /// `value`, the settings table's English); the console says so in the page's language.
        package let none: Bool
    }

    /// The settings table's default of a setting that has none.
    package static let noDefault = "(none)"

    package struct SettingsBody: ResponseEncodable, Sendable { package let settings: [SettingBody] }

    package func rows() -> [SettingBody] {
        let configuration = sesame.configuration
        return settings.sorted { $0.key < $1.key }.map { setting in
            let given = configuration.settingSources[setting.key]
            let value: String
            if let given {
                if setting.secret {
                    value = given.value.isEmpty ? Self.noDefault : Self.masked
                } else if setting.secretURLPassword {
                    value = Self.maskingPassword(given.value)
                } else {
                    value = given.value
                }
            } else {
                value = setting.defaultValue
            }
            return SettingBody(
                key: setting.key, flag: setting.flag, environment: setting.environment, value: value,
                source: given?.source ?? (configuration.settingsResolved ? "default" : "unknown"),
                secret: setting.secret, help: setting.help,
                none: given.map { $0.value.isEmpty } ?? (setting.defaultValue == Self.noDefault))
        }
    }

    /// A URL with its password masked and its query left out (`URLRedaction`); a path as it is; a value with `://`
    /// that does not parse is masked whole.
    package static func maskingPassword(_ value: String) -> String {
        guard value.contains("://") else { return value }
        return URLRedaction.redacting(value, mask: masked) ?? masked
    }

    /// Registers the route on the admin API's group (`/api/admin`, behind `AdminMiddleware`).
    package func register(admin group: RouterGroup<AdminRequestContext>) {
        group.get("settings") { _, context in
            try context.admin.require(Self.scope)
            return SettingsBody(settings: rows())
        }
    }
}
