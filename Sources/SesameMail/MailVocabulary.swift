import SesameCore

extension AuditKind {
    /// The outbox gave a mail up: the relay refused it, or could not take it for a day (detail: the mail's kind).
    package static let mailGaveUp = AuditKind("mail.gave_up")
}

extension Vocabulary {
    /// The words `SesameMail` declares; the composition root collects them into `Vocabulary.server`.
    package static let mail = Vocabulary(
        owner: "SesameMail",
        errorCodes: [],
        auditKinds: [.mailGaveUp],
        settings: ServerConfiguration.mailSettings,
        checks: [ConfigurationCheck { c throws(ConfigurationError) in try ServerConfiguration.validateMail(c) }]
    )
}
