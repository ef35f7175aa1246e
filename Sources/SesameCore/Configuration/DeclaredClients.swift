import Foundation
import WebAuthn

/// A client declared in the JSON configuration file (`"clients": [...]`), for deployments that are set up from
/// files: at every start the store is brought in line with the file (a declared client is created, or updated when
/// its declaration changed; clients registered with `sesame clients add` are left alone). The secret is never in
/// the configuration itself: `secretFile` names a file holding it (the application's own configuration holds the
/// same value), and only its SHA-256 is stored.
///
/// ```json
/// "clients": [{"id": "wiki", "name": "Wiki", "redirectURIs": ["https://wiki.example.com/oauth/callback"],
///              "secretFile": "/etc/sesame/wiki.secret", "firstParty": true,
///              "allowedGroups": ["family"], "idTokenClaims": true}]
/// ```
public struct DeclaredClient: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]?
    public var backchannelLogoutURI: String?
    /// A file holding the client secret (at least 32 characters); absent with `public: true`.
    public var secretFile: String?
    public var `public`: Bool?
    public var firstParty: Bool?
    /// `ES256` (default) or `RS256`.
    public var idTokenAlg: String?
    /// `public` (default) or `pairwise`.
    public var subjectType: String?
    /// The slugs of the groups whose members may use the client (absent: anyone who can sign in).
    public var allowedGroups: [String]?
    /// Whether the scope claims go in the ID token as well as UserInfo (default false).
    public var idTokenClaims: Bool?

    /// Ids of declared clients: 1 to 64 of letters, digits, `.`, `_` and `-`, so they never look like the
    /// `sesame_…` ids `sesame clients add` makes.
    package static func validID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && !id.hasPrefix("sesame_")
            && id.utf8.allSatisfy { ClientRules.isBase64URL($0) || $0 == UInt8(ascii: ".") }
    }

    /// Checks what can be checked without reading the secret file; the message names the client and the field.
    package func validate() throws(ConfigurationError) {
        let name = "clients[\(id.prefix(64))]"
        guard Self.validID(id) else {
            throw ConfigurationError("\(name).id: 1 to 64 letters, digits, '.', '_' or '-', not starting sesame_")
        }
        guard (1...64).contains(self.name.count) else { throw ConfigurationError("\(name).name: 1 to 64 characters") }
        guard !redirectURIs.isEmpty else { throw ConfigurationError("\(name).redirectURIs: give at least one") }
        for uri in redirectURIs + (postLogoutRedirectURIs ?? []) + [backchannelLogoutURI].compactMap({ $0 })
        where !ClientRules.registrable(uri) {
            throw ConfigurationError(
                "\(name): \(uri.prefix(80)) is not https, http on a loopback host, or a private-use scheme")
        }
        guard (self.public ?? false) == (secretFile == nil) else {
            throw ConfigurationError("\(name): give either secretFile (a confidential client) or public: true")
        }
        guard IDTokenAlgorithm(rawValue: idTokenAlg ?? "ES256") != nil else {
            throw ConfigurationError("\(name).idTokenAlg: ES256 or RS256")
        }
        guard ["public", "pairwise"].contains(subjectType ?? "public") else {
            throw ConfigurationError("\(name).subjectType: public or pairwise")
        }
        if let allowedGroups {
            guard !allowedGroups.isEmpty else {
                throw ConfigurationError("\(name).allowedGroups: give at least one group, or leave it out for anyone")
            }
            for slug in allowedGroups {
                if let problem = GroupSlugs.problem(slug) {
                    throw ConfigurationError("\(name).allowedGroups: \(problem)")
                }
            }
        }
        if subjectType == "pairwise", ClientRules.sector(redirectURIs) == nil {
            throw ConfigurationError("\(name): a pairwise client's redirect URIs must share one host")
        }
    }
}
