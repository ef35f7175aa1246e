/// The words one part of the server adds: its API error codes, OAuth error codes, audit kinds and settings.
///
/// The core has its part (`Vocabulary.core`); each feature declares its words in its own target (an `extension
/// APIErrorCode`, `extension AuditKind`, its `Setting` rows) and lists them in its part, e.g.
/// `Vocabulary.passkeys`. The composition root joins the parts, in its order, into `Vocabulary.server`: the one
/// vocabulary that the OpenAPI document, the page scripts, docs/server.md, docs/configuration.md, `--help` and the
/// configuration file are read against. A word two parts declare stops the composition (`joined(_:)`).
package struct Vocabulary: Sendable {
    /// Who declares these words (a target's name), for the message that names a duplicate.
    package var owner: String
    package var errorCodes: [APIErrorCode]
    package var oauthErrorCodes: [OAuthErrorCode]
    package var auditKinds: [AuditKind]
    package var settings: [Setting]
    /// Rules over this part's settings, checked after every source is applied (`ServerConfiguration.validate`).
    package var checks: [ConfigurationCheck]
    /// What this part's stored challenges are for, and the guessable secrets it rate-limits.
    package var challengePurposes: [ChallengePurpose]
    package var guessableSecrets: [GuessableSecret]
    /// The changes this part mails the account's owner about (`AccountNotices`).
    package var accountNotices: [AccountNoticeKind]
    /// The second factors this part checks, in the order pages offer them (`Factor`).
    package var factors: [Factor]

    package init(
        owner: String, errorCodes: [APIErrorCode] = [], oauthErrorCodes: [OAuthErrorCode] = [],
        auditKinds: [AuditKind] = [], settings: [Setting] = [], checks: [ConfigurationCheck] = [],
        challengePurposes: [ChallengePurpose] = [], guessableSecrets: [GuessableSecret] = [],
        accountNotices: [AccountNoticeKind] = [], factors: [Factor] = []
    ) {
        self.accountNotices = accountNotices
        self.factors = factors
        self.challengePurposes = challengePurposes
        self.guessableSecrets = guessableSecrets
        self.owner = owner
        self.errorCodes = errorCodes
        self.oauthErrorCodes = oauthErrorCodes
        self.auditKinds = auditKinds
        self.settings = settings
        self.checks = checks
    }

    /// Every word two parts (or one part twice) declare, as `"kind value: owner, owner"`; empty when each word is
    /// declared once. Settings are compared by key, flag and environment variable, each of which must be unique.
    package static func duplicates(in parts: [Vocabulary]) -> [String] {
        var owners: [String: [String]] = [:]
        var order: [String] = []
        func note(_ word: String, _ owner: String) {
            if owners[word] == nil { order.append(word) }
            owners[word, default: []].append(owner)
        }
        for part in parts {
            for code in part.errorCodes { note("error code \(code.rawValue)", part.owner) }
            for code in part.oauthErrorCodes { note("OAuth error code \(code.rawValue)", part.owner) }
            for kind in part.auditKinds { note("audit kind \(kind.rawValue)", part.owner) }
            for purpose in part.challengePurposes { note("challenge purpose \(purpose.rawValue)", part.owner) }
            for secret in part.guessableSecrets { note("guessable secret \(secret.rawValue)", part.owner) }
            for notice in part.accountNotices { note("account notice \(notice.rawValue)", part.owner) }
            for factor in part.factors { note("factor \(factor.rawValue)", part.owner) }
            for setting in part.settings {
                note("setting \(setting.key)", part.owner)
                note("flag \(setting.flag)", part.owner)
                note("environment variable \(setting.environment)", part.owner)
            }
        }
        return order.compactMap { word in
            let who = owners[word] ?? []
            return who.count > 1 ? "\(word): \(who.joined(separator: ", "))" : nil
        }
    }

    /// The parts joined in order; a word declared twice is a programming error and stops the process.
    package static func joined(_ parts: [Vocabulary], owner: String) -> Vocabulary {
        let duplicates = duplicates(in: parts)
        precondition(duplicates.isEmpty, "declared twice: \(duplicates.joined(separator: "; "))")
        return Vocabulary(
            owner: owner, errorCodes: parts.flatMap(\.errorCodes), oauthErrorCodes: parts.flatMap(\.oauthErrorCodes),
            auditKinds: parts.flatMap(\.auditKinds), settings: parts.flatMap(\.settings),
            checks: parts.flatMap(\.checks), challengePurposes: parts.flatMap(\.challengePurposes),
            guessableSecrets: parts.flatMap(\.guessableSecrets), accountNotices: parts.flatMap(\.accountNotices),
            factors: parts.flatMap(\.factors))
    }
}

extension Vocabulary {
    /// The core's own words: the errors of the request itself, of who is asking and of the server, the codes and
    /// kinds features that do not import each other share.
    package static let core = Vocabulary(
        owner: "SesameCore",
        errorCodes: [
            .malformedJSON, .unsupportedMediaType, .bodyTooLarge, .badRequest, .notFound, .methodNotAllowed,
            .invalidClientData, .unauthenticated, .csrfCheckFailed, .originNotAllowed, .accountDisabled,
            .reauthenticationRequired, .sessionLimited, .tooManyAttempts, .notAnAdmin, .passkeyRequired,
            .adminScopeMissing, .lastAdministrator, .challengeInvalid, .lastWayIn, .internalError,
            .unavailable,
            .storageFull,
        ],
        auditKinds: [.signOut],
        settings: ServerConfiguration.coreSettings + ServerConfiguration.languageSettings,
        checks: ServerConfiguration.languageChecks,
        accountNotices: [.newDeviceSignIn]
    )
}
