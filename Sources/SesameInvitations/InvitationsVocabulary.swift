import Foundation
import SesameCore

extension APIErrorCode {
    package static let invitationInvalid = APIErrorCode("invitation_invalid")
    /// The admin API refused to make an invitation (the message says which rule).
    package static let invitationRefused = APIErrorCode("invitation_refused")
    package static let invitationNotFound = APIErrorCode("invitation_not_found")
}

extension APIError {
    /// Every invitation that cannot be used gets this one answer: malformed, unknown, used, revoked or expired.
    package static var invitationInvalid: APIError {
        APIError(
            .forbidden, .invitationInvalid,
            "This invitation can't be used: it may have been used, withdrawn or have expired. Ask for a new one.")
    }
}

extension AuditKind {
    package static let invitationCreated = AuditKind("invitation.created")
    /// The invitation's mail was put in the outbox (with the invitation, in one transaction).
    package static let invitationMailed = AuditKind("invitation.mailed")
    /// An account was created with the invitation (failure: an unusable invitation was presented).
    package static let invitationUsed = AuditKind("invitation.used")
    package static let invitationRevoked = AuditKind("invitation.revoked")
}

extension GuessableSecret {
    /// An invitation's token, per invitation and per client address.
    package static let invitation = GuessableSecret("invitation")
}

extension Vocabulary {
    /// The words `SesameInvitations` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let invitations = Vocabulary(
        owner: "SesameInvitations",
        errorCodes: [.invitationInvalid, .invitationRefused, .invitationNotFound],
        auditKinds: [.invitationCreated, .invitationMailed, .invitationUsed, .invitationRevoked],
        guessableSecrets: [.invitation]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let invitations = APIFragment(owner: "SesameInvitations", bundle: .module)
}
