import SesameCore

extension Vocabulary {
    /// The words `SesameConsole` declares; the composition root collects them into `Vocabulary.server`.
    package static let console = Vocabulary(
        owner: "SesameConsole",
        errorCodes: [],
        auditKinds: [],
        settings: ServerConfiguration.consoleSettings
    )
}
