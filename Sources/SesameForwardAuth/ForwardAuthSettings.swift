import Foundation
import SesameCore

extension ServerConfiguration {
    private enum ForwardAuthDomainsKey: SettingKey { static let defaultValue: [String] = [] }
    private enum ForwardAuthPasskeyDomainsKey: SettingKey { static let defaultValue: [String] = [] }
    private enum ForwardAuthRulesKey: SettingKey { static let defaultValue: [ForwardAuthRule] = [] }

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

    /// Who may pass forward auth at which host and path (`ForwardAuthRules`): first match wins; none: every
    /// signed-in person passes.
    package var forwardAuthRules: [ForwardAuthRule] {
        get { self[ForwardAuthRulesKey.self] }
        set { self[ForwardAuthRulesKey.self] = newValue }
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
        Setting(
            key: "forwardAuthRules", flag: "--forward-auth-rules", environment: "SESAME_FORWARD_AUTH_RULES",
            defaultValue: "(none)",
            help:
                "Access rules: a JSON list of (host, path?, policy, groups?), policy signed-in, groups, passkey or nobody; first match wins, an address no rule names is refused (docs/integrations.md). None: every signed-in person passes.",
            takesJSON: true
        ) { c, v throws(ConfigurationError) in c.forwardAuthRules = try parseForwardAuthRules(v) },
    ]

    /// The rules' JSON text; an empty value is no rules.
    package static func parseForwardAuthRules(_ text: String) throws(ConfigurationError) -> [ForwardAuthRule] {
        if text.trimmingCharacters(in: .whitespaces).isEmpty { return [] }
        guard let rules = try? JSONDecoder().decode([ForwardAuthRule].self, from: Data(text.utf8)),
            let objects = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        else {
            throw ConfigurationError(
                "forward-auth-rules: expected a JSON list of {host, path?, policy, groups?} (docs/integrations.md)")
        }
        // A misspelt key would otherwise be ignored, and the rule would cover more than meant.
        let known: Set<String> = ["host", "path", "policy", "groups"]
        for (index, object) in objects.enumerated() {
            if let key = object.keys.sorted().first(where: { !known.contains($0) }) {
                throw ConfigurationError("forward-auth-rules[\(index)]: unknown key \"\(key.prefix(40))\"")
            }
        }
        return rules
    }

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
        _ = try ForwardAuthRules(c.forwardAuthRules, domains: c.forwardAuthDomains)
    }
}
