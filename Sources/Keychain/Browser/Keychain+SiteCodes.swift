/// Verification codes for the page a one-time-code field is on: the code generators saved for the origin's site.
extension Keychain {
    /// The code generators whose sites include `origin`'s host or a parent domain of it that is not a public
    /// suffix (a generator for `example.com` serves `login.example.com`; one for `com` would serve nothing).
    public func codeGenerators(for origin: WebOrigin, suffixes: PublicSuffixList) -> [KeychainItem] {
        items.filter { item in
            guard case .codeGenerator(let generator) = item.content else { return false }
            return generator.sites.contains { Self.site($0, serves: origin, suffixes: suffixes) }
        }
    }

    static func site(_ site: String, serves origin: WebOrigin, suffixes: PublicSuffixList) -> Bool {
        let site = site.lowercased()
        if site == origin.host { return true }
        guard origin.host.hasSuffix("." + site) else { return false }
        return !suffixes.isPublicSuffix(site)
    }
}
