import SesameCore

extension AuditKind {
    package static let metadataImported = AuditKind("metadata.imported")
}

extension Vocabulary {
    /// The words `SesameMetadata` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let metadata = Vocabulary(
        owner: "SesameMetadata",
        auditKinds: [
            .metadataImported
        ]
    )
}
