import Foundation
import SesameCore

extension AuditKind {
    package static let adminCreated = AuditKind("admin.created")
    package static let adminDisabled = AuditKind("admin.disabled")
    package static let adminEnabled = AuditKind("admin.enabled")
    package static let adminDeleted = AuditKind("admin.deleted")
    package static let adminExported = AuditKind("admin.exported")
    package static let adminResealed = AuditKind("admin.resealed")
    /// An operator or admin ended every session of the account and its apps' grants.
    package static let adminSignedOut = AuditKind("admin.signed_out")
    /// An operator or admin removed one of the account's passkeys (detail: its id).
    package static let adminPasskeyRemoved = AuditKind("admin.passkey_removed")
    /// An operator or admin removed one of the account's second factors (detail: the factor, e.g. `totp`).
    package static let adminFactorRemoved = AuditKind("admin.factor_removed")
}

extension APIErrorCode {
    /// Deleting an account through the admin API: the username typed again (`confirm`) is not the account's.
    package static let confirmationMismatch = APIErrorCode("confirmation_mismatch")
}

extension Vocabulary {
    /// The words `SesameOperations` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let operations = Vocabulary(
        owner: "SesameOperations",
        errorCodes: [.confirmationMismatch],
        auditKinds: [
            .adminCreated, .adminDisabled, .adminEnabled, .adminDeleted, .adminExported, .adminResealed,
            .adminSignedOut, .adminPasskeyRemoved, .adminFactorRemoved,
        ],
        settings: ServerConfiguration.operationsSettings,
        checks: [ConfigurationCheck { c throws(ConfigurationError) in try ServerConfiguration.validateOperations(c) }]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let operations = APIFragment(owner: "SesameOperations", bundle: .module)
}
