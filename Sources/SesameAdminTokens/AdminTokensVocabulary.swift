import Foundation
import SesameCore

extension APIErrorCode {
    /// An admin token's name that is empty, longer than 64 characters or holds control characters.
    package static let invalidAdminTokenName = APIErrorCode("invalid_admin_token_name")
    /// No scope, or a scope the admin API does not know (`AdminScope.all`).
    package static let invalidAdminTokenScope = APIErrorCode("invalid_admin_token_scope")
    /// A lifetime outside 1 to 365 days.
    package static let invalidAdminTokenLifetime = APIErrorCode("invalid_admin_token_lifetime")
    /// No admin token with that id is live (never made, or revoked already).
    package static let adminTokenNotFound = APIErrorCode("admin_token_not_found")
    /// An admin token asked to make another: only a person at the console (or the command line) makes tokens.
    package static let adminTokenNeedsPerson = APIErrorCode("admin_token_needs_person")
    /// An audit log filter the API cannot read: a time that is not ISO 8601, an outcome or kind it does not know, a
    /// page cursor it did not give, a limit outside 1 to 200.
    package static let invalidAuditFilter = APIErrorCode("invalid_audit_filter")
}

extension AuditKind {
    /// An admin API token was made (detail: its id, name and scopes; by whom).
    package static let adminTokenCreated = AuditKind("admin_token.created")
    /// An admin API token was revoked (detail: its id and name; by whom).
    package static let adminTokenRevoked = AuditKind("admin_token.revoked")
}

extension GuessableSecret {
    /// An admin API token, per client address (no account is named before it is checked).
    package static let adminToken = GuessableSecret("admin_token")
}

extension Vocabulary {
    /// The words `SesameAdminTokens` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let adminTokens = Vocabulary(
        owner: "SesameAdminTokens",
        errorCodes: [
            .invalidAdminTokenName, .invalidAdminTokenScope, .invalidAdminTokenLifetime, .adminTokenNotFound,
            .adminTokenNeedsPerson, .invalidAuditFilter,
        ],
        auditKinds: [.adminTokenCreated, .adminTokenRevoked],
        guessableSecrets: [.adminToken]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let adminTokens = APIFragment(owner: "SesameAdminTokens", bundle: .module)
}
