/// What an audit event records. `sesame audit`, `GET /api/account/audit` and the `sesame_auth_events_total`
/// metric use these names.
///
/// Opaque and extensible, like `APIErrorCode`: the core declares the kinds no one feature owns; each feature
/// declares its own in an `extension AuditKind` in its target and lists them in its part of the vocabulary
/// (`Vocabulary`); `VocabularyTests` ties the collected list (`Vocabulary.server`) to docs/server.md and the OpenAPI
/// document.
public struct AuditKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    package init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension AuditKind {
    /// A session ended (the account's sign-out and the identity provider's logout both end one).
    package static let signOut = AuditKind("sign_out")
}

/// How an audited attempt ended.
public enum AuditOutcome: String, CaseIterable, Sendable, Codable {
    case success
    case failure
    /// The secret was right but the attempt was turned down (a disabled account).
    case refused
    /// The password was right; a second factor is still to come.
    case pendingSecondFactor = "pending_second_factor"
}
