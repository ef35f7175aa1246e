import SesameCore

extension ServerConfiguration {
    private enum ForwardAuthDomainsKey: SettingKey { static let defaultValue: [String] = [] }
    private enum ForwardAuthPasskeyDomainsKey: SettingKey { static let defaultValue: [String] = [] }

    /// Hosts forward auth answers for and may send people back to after signing in: each name covers itself and its
    /// subdomains (docs/integrations.md).
    public var forwardAuthDomains: [String] {
        get { self[ForwardAuthDomainsKey.self] }
        set { self[ForwardAuthDomainsKey.self] = newValue }
    }

    /// Hosts (each covering its subdomains, each within `forwardAuthDomains`) that forward auth lets in only after a
    /// passkey sign-in (`phr`).
    public var forwardAuthPasskeyDomains: [String] {
        get { self[ForwardAuthPasskeyDomainsKey.self] }
        set { self[ForwardAuthPasskeyDomainsKey.self] = newValue }
    }

    /// Forward auth's rows of the settings table.
    package static let forwardAuthSettings: [Setting] = [
        Setting(
            key: "forwardAuthDomains", flag: "--forward-auth-domains", environment: "SESAME_FORWARD_AUTH_DOMAINS",
            defaultValue: "(none)",
            help:
                "Comma-separated hosts forward auth answers for and returns people to after sign-in; each covers its subdomains."
        ) { c, v throws(ConfigurationError) in c.forwardAuthDomains = list(v).map { $0.lowercased() } },
        Setting(
            key: "forwardAuthPasskeyDomains", flag: "--forward-auth-passkey-domains",
            environment: "SESAME_FORWARD_AUTH_PASSKEY_DOMAINS", defaultValue: "(none)",
            help:
                "Comma-separated hosts (within forward-auth-domains, each covering its subdomains) that need a passkey sign-in (phr)."
        ) { c, v throws(ConfigurationError) in c.forwardAuthPasskeyDomains = list(v).map { $0.lowercased() } },
    ]

    /// Forward-auth hosts are plain DNS names; every passkey-only host is one forward auth answers for.
    package static func validateForwardAuth(_ c: ServerConfiguration) throws(ConfigurationError) {
        for domain in c.forwardAuthDomains where !DomainName.isValid(domain) {
            throw ConfigurationError("forward-auth-domains: \(domain) is not a DNS name")
        }
        for domain in c.forwardAuthPasskeyDomains {
            guard DomainName.isValid(domain),
                c.forwardAuthDomains.contains(where: { DomainName.covers($0, host: domain) })
            else {
                throw ConfigurationError(
                    "forward-auth-passkey-domains: \(domain) is not a DNS name within forward-auth-domains")
            }
        }
    }
}
