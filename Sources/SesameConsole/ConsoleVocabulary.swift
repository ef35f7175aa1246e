import Foundation
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

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let console = APIFragment(owner: "SesameConsole", bundle: .module)
}
