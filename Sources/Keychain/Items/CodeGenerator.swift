import OneTimeCode

/// A verification-code generator: everything an `otpauth:` or `apple-otpauth:` link carries (TOTP or HOTP,
/// secret, algorithm, digits, period or counter, issuer, account), plus the sites it belongs to.
public struct CodeGenerator: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var key: OTPKeyURI
    /// Lower-case DNS names; may be empty (the issuer then names the service).
    public var sites: [String]

    /// The shortest secret kept: 80 bits. RFC 4226 asks for 128, and Sesame issues 160, but services still issue
    /// 80-bit secrets and a password manager that refused them would leave people without their codes.
    public static let minimumSecretByteCount = 10

    /// Parses a key URI with the keychain's secret minimum.
    static func parseKey(_ uri: String) throws(OneTimeCodeError) -> OTPKeyURI {
        try OTPKeyURI(parsing: uri, minimumSecretByteCount: minimumSecretByteCount)
    }

    public init(key: OTPKeyURI, sites: [String] = []) {
        self.key = key
        self.sites = sites
    }

    /// A generator from a link, with the issuer as its site when the issuer is a domain name of two or more labels
    /// (as `apple-otpauth:` requires) and no sites are given; an issuer such as `Example` stays a name only.
    public init(parsing uri: String, sites: [String] = []) throws(KeychainError) {
        let key: OTPKeyURI
        do {
            key = try Self.parseKey(uri)
        } catch {
            throw KeychainError(.invalidItem, reason: "not a valid otpauth link (\(error.code))")
        }
        var sites = sites
        if sites.isEmpty, let issuer = key.issuer, let site = SiteName.normalise(issuer), site == issuer.lowercased(),
            site.contains(".")
        {
            sites = [site]
        }
        self.init(key: key, sites: sites)
    }

    public var description: String { "CodeGenerator(\(key.issuer ?? "no issuer"), secret redacted)" }
    public var debugDescription: String { description }

    func validate() throws(KeychainError) {
        try Sites.check(sites, required: false)
    }
}
