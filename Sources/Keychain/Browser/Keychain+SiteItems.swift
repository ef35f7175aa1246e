/// Verification codes and passwords for the page a field is on: the items saved for the origin's site, and saving one.
extension Keychain {
    /// The passwords whose sites serve `origin`, by the same rule as ``codeGenerators(for:suffixes:)``.
    public func passwords(for origin: WebOrigin, suffixes: PublicSuffixList) -> [KeychainItem] {
        items.filter { item in
            guard case .password(let password) = item.content else { return false }
            return password.sites.contains { Self.site($0, serves: origin, suffixes: suffixes) }
        }
    }

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

    /// Saves a password the person typed on `origin` and agreed to keep: the password for the same site and user
    /// name is updated, else a new item is added (``save()`` writes it). Returns the item.
    public func savePassword(
        username: String, password: String, for origin: WebOrigin
    ) throws(KeychainError) -> KeychainItem {
        for item in items {
            guard case .password(var saved) = item.content, saved.sites.contains(origin.host),
                saved.username == username
            else { continue }
            saved.password = password
            var updated = item
            updated.content = .password(saved)
            try update(updated)
            return self.item(id: item.id) ?? updated
        }
        return try add(.password(Password(sites: [origin.host], username: username, password: password)))
    }
}
