import Foundation

/// What an operator's command (`sesame users`, `sesame clients`, `sesame metadata`, …) refused, said in a line the
/// command prints; never a secret.
public struct AdminError: Error, CustomStringConvertible {
    public let description: String

    package init(description: String) { self.description = description }
}

extension AuditEvent {
    /// An audit event of an operator's command (client address `cli`).
    package static func byOperator(_ kind: AuditKind, _ outcome: AuditOutcome, user: User?, detail: String = "")
        -> AuditEvent
    {
        AuditEvent(
            at: Date(), kind: kind.rawValue, outcome: outcome.rawValue, userID: user?.id, username: user?.username,
            clientAddress: "cli", detail: detail)
    }
}
