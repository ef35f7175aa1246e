import SesameLanguage

extension ServerConfiguration {
    private enum DefaultLanguageKey: SettingKey { static let defaultValue = "en" }

    /// The language of pages and mails for people who saved none and whose browser asks for none the catalog holds
    /// (`PageLanguages`): a tag of the catalog (`en`, `ko`, `ja`, `de`, `es`, `ar`, or one added).
    public var defaultLanguage: String {
        get { self[DefaultLanguageKey.self] }
        set { self[DefaultLanguageKey.self] = newValue }
    }

    package static let languageSettings: [Setting] = [
        Setting(
            key: "defaultLanguage", flag: "--default-language", environment: "SESAME_DEFAULT_LANGUAGE",
            defaultValue: DefaultLanguageKey.defaultValue,
            help:
                "Language of pages and mails when neither the person's saved choice, ui_locales nor Accept-Language names one the catalog holds (en, ko, ja, de, es, ar)."
        ) { c, v throws(ConfigurationError) in c.defaultLanguage = v }
    ]

    /// `defaultLanguage` must be a language the catalog holds.
    package static let languageChecks: [ConfigurationCheck] = [
        ConfigurationCheck { c throws(ConfigurationError) in
            guard case .success(let catalog) = PageLanguages.bundled else { return }
            guard catalog.shipped.contains(where: { $0.tag == c.defaultLanguage }) else {
                throw ConfigurationError(
                    "default-language: expected one of \(catalog.shipped.map(\.tag).joined(separator: ", "))")
            }
        }
    ]
}
