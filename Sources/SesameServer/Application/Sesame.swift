import Foundation
import Logging
import SesameCore
import WebAuthn
import SesameWeb
import SesameMetadata
import SesameSecondFactors
import SesameIdentityProvider
import SesamePasswords
import SesamePasskeys
import SesameAccount
import SesameReauthentication
import SesameKeychainSync
import SesameForwardAuth
import SesameOperations
import SesameEmail
import SesameGroups

/// What `buildApplication` builds once: the core every feature shares and the services features lend each other
/// (second factors, passkey verification, metadata, the identity provider's keys, tokens and logout). Only the
/// composition root holds this; each feature's routes get the core and the services they name.
package struct Sesame: Sendable {
    package let core: ServerCore
    package let passwords: PasswordHasher
    package let factors: FactorVerifier
    package let passkeys: PasskeyVerifier
    package let metadata: MetadataService
    package let signingKeys: SigningKeyring
    package let tokens: TokenIssuer
    package let backChannelLogout: BackChannelLogout
    /// Verified addresses, for the identity provider's `email` scope and forward auth's `Remote-Email`.
    package let emails: any VerifiedEmailLookup
    /// The one store, with every feature's part; features get it as the narrow protocols they use.
    package let store: SQLStore
    /// The roots a metadata BLOB uploaded through the admin API is verified against (the bundled FIDO root).
    package let metadataTrust: MetadataTrust

    package init(
        configuration: ServerConfiguration, store: SQLStore, clock: ServerClock, logger: Logger, serverSecret: [UInt8],
        metrics: ServerMetrics, providers: AuthenticatorProviders, rateLimits: RateLimitPolicy, sms: any SMSSender,
        relyingParty: RelyingParty, ciphers: FieldCiphers, logoutDelivery: any LogoutDelivery = HTTPLogoutDelivery(),
        accountGroups: any AccountGroups = NoAccountGroups(), metadataTrust: MetadataTrust = .bundled
    ) {
        self.metadataTrust = metadataTrust
        let groups = StoredAccountGroups(store: store)
        let core = ServerCore(
            configuration: configuration, store: store, clock: clock, logger: logger, serverSecret: serverSecret,
            metrics: metrics, providers: providers, rateLimits: rateLimits, factors: Vocabulary.server.factors,
            accountNotices: EmailAccountNotices(store: store, configuration: configuration, metrics: metrics),
            accountGroups: accountGroups,
            signUpAddresses: EmailSignUpAddresses(
                store: store, configuration: configuration, serverSecret: serverSecret,
                rateLimiter: RateLimiter(store: store, policy: rateLimits, clock: clock), metrics: metrics),
            adminGroup: configuration.adminGroup,
            languagePreferences: StoredLanguagePreferences(store: store))
        self.core = core
        self.store = store
        self.passwords = PasswordHasher(logN: configuration.passwordScryptLogN)
        self.factors = FactorVerifier(
            store: store, rateLimiter: core.rateLimiter, ceremonies: core.ceremonies, audit: core.audit, clock: clock,
            logger: logger, sms: sms, serverSecret: serverSecret, configuration: configuration,
            accountNotices: core.accountNotices, languages: core.languages
        )
        let metadata = MetadataService(store: store, clock: clock, logger: logger)
        self.metadata = metadata
        self.passkeys = PasskeyVerifier(
            relyingParty: relyingParty, store: store, audit: core.audit, clock: clock, providers: providers,
            metadata: metadata)
        let signingKeys = SigningKeyring(
            store: store, ciphers: ciphers, clock: clock,
            longestTokenLifetime: TimeInterval(max(TokenIssuer.accessTokenLifetime, TokenIssuer.idTokenLifetime))
        )
        self.signingKeys = signingKeys
        let subjects = SubjectIdentifiers(serverSecret: serverSecret)
        let emails = VerifiedEmails(store: store, policy: configuration.email)
        self.emails = emails
        self.tokens = TokenIssuer(
            keyring: signingKeys, issuer: configuration.origin, store: store, clock: clock, subjects: subjects,
            factors: core.factors, emails: emails, groups: groups, languages: core.languages.preferences)
        self.backChannelLogout = BackChannelLogout(
            keyring: signingKeys, issuer: configuration.origin, store: store, clock: clock, subjects: subjects,
            delivery: logoutDelivery, logger: logger)
    }
}

/// The address feature's verified addresses as the identity provider reads them; none while addresses are off (the
/// `email` scope then gives nothing, even for addresses kept from when they were on).
package struct VerifiedEmails: VerifiedEmailLookup {
    package let store: any EmailStore
    package let policy: EmailAddressPolicy

    package func verifiedEmail(userID: String) async throws -> String? {
        policy == .off ? nil : try await store.email(userID: userID)?.address
    }

    package var keepsAddresses: Bool { policy != .off }
}

/// The groups accounts belong to, for the server and the operator's commands (`sesame invites create --groups`): the
/// groups feature's, over the one store.
package func serverAccountGroups(_ store: SQLStore) -> any AccountGroups { StoredAccountGroups(store: store) }
