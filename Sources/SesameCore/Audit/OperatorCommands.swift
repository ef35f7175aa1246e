import Foundation

/// What an operator's command (`sesame users`, `sesame clients`, `sesame metadata`, …) refused, said in a line the
/// command prints; never a secret.
/// The server's error shape (`ServerError`); the command prints the message.
public typealias AdminError = ServerError<AdminErrorCode>

/// The codes of `AdminError`.
public struct AdminErrorCode: ServerErrorCode {
    public let name: String
    private init(_ name: String) { self.name = name }
    public var description: String { name }

    /// The command cannot do what it was asked: the message says why and what to give instead.
    public static let refused = AdminErrorCode("refused")
}

extension ServerError where Code == AdminErrorCode {
    package init(description: String, file: String = #fileID, line: Int = #line) {
        self.init(code: .refused, message: description, file: file, line: line)
    }
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
