import Foundation
import SesameCore

extension APIErrorCode {
    /// `PUT /api/account/language` named a language the catalog does not ship; nothing was saved.
    package static let unknownLanguage = APIErrorCode("unknown_language")
}

extension AuditKind {
    package static let accountRenamed = AuditKind("account.renamed")
    package static let accountExported = AuditKind("account.exported")
    package static let sessionRevoked = AuditKind("session.revoked")
    package static let sessionRevokedAll = AuditKind("session.revoked_all")
}

extension Vocabulary {
    /// The words `SesameAccount` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let account = Vocabulary(
        owner: "SesameAccount",
        errorCodes: [.unknownLanguage],
        auditKinds: [
            .accountRenamed, .accountExported, .sessionRevoked, .sessionRevokedAll,
        ]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let account = APIFragment(owner: "SesameAccount", bundle: .module)
}
