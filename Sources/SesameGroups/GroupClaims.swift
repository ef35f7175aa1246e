import SesameCore
import SesameIdentityProvider
import WebAuthn

/// A group's custom claims: a small JSON object an app reads beside the `groups` claim (`{"roles": ["editor"]}`).
/// Checked when the group is saved, so nothing stored can break a token: an object of at most 4 KiB and 32 members,
/// names of 1 to 64 characters, and none the identity provider gives itself (`ScopeClaims.reserved`: `sub`, `iss`,
/// `aud`, `exp`, `nonce`, `email`, `groups`, …), which a group could otherwise forge for its members.
package enum GroupClaims {
    package static let maximumBytes = 4096
    package static let maximumMembers = 32

    /// The empty object, a group's claims until some are set.
    package static let none = JSONValue.object([(String, JSONValue)]())

    /// Reads and checks `text`; an `invalid_group_claims` error says what is wrong.
    package static func parse(_ text: String) throws -> JSONValue {
        guard text.utf8.count <= maximumBytes else {
            throw Self.refused("custom claims are at most \(maximumBytes) bytes of JSON")
        }
        guard let value = JSONReader.read(Array(text.utf8)), case .object(let members) = value else {
            throw Self.refused("custom claims must be a JSON object, e.g. {\"roles\": [\"editor\"]}")
        }
        guard members.count <= maximumMembers else {
            throw Self.refused("custom claims have at most \(maximumMembers) names")
        }
        for member in members {
            guard (1...64).contains(member.key.count) else {
                throw Self.refused("a custom claim's name has 1 to 64 characters")
            }
            guard !ScopeClaims.reserved.contains(member.key) else {
                throw Self.refused(
                    "\"\(member.key)\" is a claim Sesame gives itself; a group cannot set it (choose another name)")
            }
        }
        return value
    }

    /// The claims of an account's groups merged into one object, in the documented order: groups by slug
    /// ascending, a later group's value replacing an earlier one's for the same name.
    package static func merged(_ groups: [GroupRecord]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [:]
        for group in groups.sorted(by: { $0.slug < $1.slug }) {
            guard case .object(let members) = group.claims else { continue }
            for member in members where !ScopeClaims.reserved.contains(member.key) {
                claims[member.key] = member.value
            }
        }
        return claims
    }

    private static func refused(_ message: String) -> APIError {
        APIError(.badRequest, .invalidGroupClaims, message)
    }
}
