import Foundation
import SesameCore

extension APIErrorCode {
    /// A metadata BLOB given to the admin API failed a check (the message says which); nothing was stored.
    package static let metadataRefused = APIErrorCode("metadata_refused")
}

extension AuditKind {
    package static let metadataImported = AuditKind("metadata.imported")
}

extension Vocabulary {
    /// The words `SesameMetadata` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let metadata = Vocabulary(
        owner: "SesameMetadata",
        errorCodes: [.metadataRefused],
        auditKinds: [
            .metadataImported
        ]
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let metadata = APIFragment(owner: "SesameMetadata", bundle: .module)
}
