import Foundation

/// Usernames: what is accepted, and the case-folded key that is unique.
public enum Usernames {
    public static let maxLength = 64

    /// NFKC, then lower-cased: `Alice`, `ALICE` and `ａｌｉｃｅ` are one account.
    public static func key(_ username: String) -> String {
        username.precomposedStringWithCompatibilityMapping.lowercased()
    }

    /// Trims, checks length (1...64 characters) and refuses control and separator characters.
    public static func validate(_ raw: String) -> String? {
        let username = raw.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard !username.isEmpty, username.count <= maxLength else { return nil }
        for scalar in username.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .unassigned, .privateUse,
                .surrogate:
                return nil
            default: continue
            }
        }
        return username
    }
}
