import SesameCore

extension ServerConfiguration {
    private enum MetricsAddressKey: SettingKey { static let defaultValue: String? = nil }
    private enum MetricsTokenKey: SettingKey { static let defaultValue: String? = nil }

    /// `host:port` of a second listener that serves only `/metrics` (bind it where only your monitoring reaches).
    public var metricsAddress: String? {
        get { self[MetricsAddressKey.self] }
        set { self[MetricsAddressKey.self] = newValue }
    }

    /// Bearer token that `/metrics` requires; without it (and without `metricsAddress`) `/metrics` is not served.
    public var metricsToken: String? {
        get { self[MetricsTokenKey.self] }
        set { self[MetricsTokenKey.self] = newValue }
    }

    /// The operations' rows of the settings table.
    package static let operationsSettings: [Setting] = [
        Setting(
            key: "metricsAddress", flag: "--metrics-address", environment: "SESAME_METRICS_ADDRESS",
            defaultValue: "(none)", help: "host:port of a separate listener serving only /metrics."
        ) { c, v throws(ConfigurationError) in c.metricsAddress = v.isEmpty ? nil : v },
        Setting(
            key: "metricsToken", flag: "--metrics-token", environment: "SESAME_METRICS_TOKEN", defaultValue: "(none)",
            help: "Bearer token /metrics requires; without it or a metrics address, /metrics is not served.",
            secret: true
        ) { c, v throws(ConfigurationError) in c.metricsToken = v.isEmpty ? nil : v },
    ]

    /// The metrics listener's address parses; its token is long enough to be a secret.
    package static func validateOperations(_ c: ServerConfiguration) throws(ConfigurationError) {
        if let metricsAddress = c.metricsAddress { _ = try hostAndPort(metricsAddress, key: "metrics-address") }
        if let metricsToken = c.metricsToken, metricsToken.utf8.count < 16 {
            throw ConfigurationError(
                "metrics-token: use at least 16 characters (a random value, e.g. openssl rand -hex 16)")
        }
    }
}
