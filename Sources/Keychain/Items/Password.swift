/// A saved password for one or more sites.
public struct Password: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Lower-case DNS names (see ``SiteName``); at least one.
    public var sites: [String]
    public var username: String
    public var password: String

    public init(sites: [String], username: String, password: String) {
        self.sites = sites
        self.username = username
        self.password = password
    }

    public var description: String { "Password(\(sites.joined(separator: ", ")), password redacted)" }
    public var debugDescription: String { description }

    func validate() throws(KeychainError) {
        try Sites.check(sites, required: true)
        try ItemLimits.checkText(username, field: "username", allowEmpty: true)
        try ItemLimits.checkText(password, field: "password", maximum: ItemLimits.passwordBytes)
    }
}

enum Sites {
    static func check(_ sites: [String], required: Bool) throws(KeychainError) {
        guard !required || !sites.isEmpty else { throw KeychainError(.invalidItem, reason: "no site") }
        guard sites.count <= ItemLimits.sites else {
            throw KeychainError(.invalidItem, reason: "more than \(ItemLimits.sites) sites")
        }
        for site in sites where SiteName.normalise(site) != site {
            throw KeychainError(.invalidItem, reason: "a site is not a lower-case DNS name")
        }
        guard Set(sites).count == sites.count else {
            throw KeychainError(.invalidItem, reason: "a site is listed twice")
        }
    }
}
