import SesameCore

extension AuditKind {
    package static let adminCreated = AuditKind("admin.created")
    package static let adminDisabled = AuditKind("admin.disabled")
    package static let adminEnabled = AuditKind("admin.enabled")
    package static let adminDeleted = AuditKind("admin.deleted")
    package static let adminExported = AuditKind("admin.exported")
    package static let adminResealed = AuditKind("admin.resealed")
}

extension Vocabulary {
    /// The words `SesameOperations` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let operations = Vocabulary(
        owner: "SesameOperations",
        auditKinds: [
            .adminCreated, .adminDisabled, .adminEnabled, .adminDeleted, .adminExported, .adminResealed,
        ],
        settings: ServerConfiguration.operationsSettings,
        checks: [ConfigurationCheck { c throws(ConfigurationError) in try ServerConfiguration.validateOperations(c) }]
    )
}
