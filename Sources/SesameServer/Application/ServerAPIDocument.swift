import SesameAccount
import SesameAdminTokens
import SesameConsole
import SesameCore
import SesameEmail
import SesameForwardAuth
import SesameGroups
import SesameIdentityProvider
import SesameInvitations
import SesameKeychainSync
import SesameMetadata
import SesameOperations
import SesamePasskeys
import SesamePasswords
import SesameReauthentication
import SesameSecondFactors

extension APIFragment {
    /// Each feature's part of the API document, in the order the document lists their paths and components (after
    /// the core's base, `APIFragment.core`).
    package static let parts: [APIFragment] = [
        .operations, .metadata, .passkeys, .passwords, .secondFactors, .reauthentication, .account, .email,
        .identityProvider, .groups, .forwardAuth, .keychainSync, .invitations, .console, .adminTokens,
    ]
}

extension APIDocument {
    /// The document served at `/openapi.yaml`: the core's base and every part. A part that breaks the fragments'
    /// layout, or declares a path or component another part declares, stops the process as the router is built
    /// (the same rule as the vocabulary's words declared twice).
    package static let server: String = {
        do {
            return try assembled(base: .core, parts: APIFragment.parts, lists: vocabularyLists(.server))
        } catch {
            preconditionFailure("the API document: \(error)")
        }
    }()
}

extension APIDocument {
    /// The vocabulary's lists the parts' enums are filled from (`APIFragment`): what a feature declares is in the
    /// document without a second copy.
    package static func vocabularyLists(_ vocabulary: Vocabulary) -> VocabularyLists {
        [
            "errorCodes": vocabulary.errorCodes.map(\.rawValue),
            "oauthErrorCodes": vocabulary.oauthErrorCodes.map(\.rawValue),
            "auditKinds": vocabulary.auditKinds.map(\.rawValue),
            "auditOutcomes": AuditOutcome.allCases.map(\.rawValue),
            "factors": vocabulary.factors.map(\.rawValue),
            "sessionMethods": SessionMethod.all(factors: vocabulary.factors).map(\.rawValue),
        ]
    }
}
