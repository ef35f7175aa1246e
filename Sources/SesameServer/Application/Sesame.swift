import Foundation
import Logging
import NIOPosix
import WebAuthn
import SesameCore

/// Everything the routes need, built once by `buildApplication`: the configuration and store, and the shared
/// services every feature uses (sessions, ceremonies, rate limits, audit, second factors, passkey verification).
package struct Sesame: Sendable {
    package let configuration: ServerConfiguration
    package let store: any Store
    package let clock: ServerClock
    package let logger: Logger
    /// Keys the CSRF tokens, SMS code MACs and the decoys of unknown users.
    package let serverSecret: [UInt8]
    package let metrics: ServerMetrics
    /// Passkey provider names and icons by AAGUID (the bundled list, or `providerListFile`).
    package let providers: AuthenticatorProviders
    package let passwords: PasswordHasher
    package let cookies: Cookies
    package let sessions: SessionIssuer
    package let rateLimiter: RateLimiter
    package let ceremonies: Ceremonies
    /// Seals and opens sign-in challenges. Whether this node issues sealed or stored ones is `sealsSignIn`
    /// (`ServerConfiguration.signInChallenges`); it finishes both kinds whatever it issues.
    package let sealedSignIn: SealedSignInChallenge
    package let sealsSignIn: Bool
    /// Sign-in starts per address on this node, when sealed challenges leave no row to count.
    package let signInStarts: NodeCeremonyBudget
    /// Metrics token attempts per address on this node (`MetricsEndpoint`), on both listeners.
    package let metricsGuesses: NodeCeremonyBudget
    package let audit: AuditLog
    package let factors: FactorVerifier
    package let passkeys: PasskeyVerifier
    package let metadata: MetadataService
    package let signingKeys: SigningKeyring
    package let tokens: TokenIssuer
    package let backChannelLogout: BackChannelLogout

    package init(
        configuration: ServerConfiguration, store: any Store, clock: ServerClock, logger: Logger, serverSecret: [UInt8],
        metrics: ServerMetrics, providers: AuthenticatorProviders, rateLimits: RateLimitPolicy, sms: any SMSSender,
        relyingParty: RelyingParty, ciphers: FieldCiphers, logoutDelivery: any LogoutDelivery = HTTPLogoutDelivery()
    ) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.logger = logger
        self.serverSecret = serverSecret
        self.metrics = metrics
        self.providers = providers
        self.passwords = PasswordHasher(logN: configuration.passwordScryptLogN)
        let cookies = Cookies(configuration)
        self.cookies = cookies
        self.sessions = SessionIssuer(
            store: store, clock: clock, cookies: cookies, serverSecret: serverSecret,
            lifetime: configuration.sessionLifetime
        )
        let rateLimiter = RateLimiter(store: store, policy: rateLimits, clock: clock)
        self.rateLimiter = rateLimiter
        let ceremonies = Ceremonies(
            store: store, rateLimiter: rateLimiter, clock: clock, cookies: cookies,
            lifetime: configuration.challengeTimeout)
        self.ceremonies = ceremonies
        self.sealedSignIn = SealedSignInChallenge(serverSecret: serverSecret)
        self.sealsSignIn = configuration.sealsSignInChallenges
        self.signInStarts = NodeCeremonyBudget(limit: rateLimits.ceremoniesPerAddress, window: rateLimits.window)
        self.metricsGuesses = NodeCeremonyBudget(limit: rateLimits.perAddress, window: rateLimits.window)
        let audit = AuditLog(store: store, metrics: metrics, clock: clock, logger: logger)
        self.audit = audit
        self.factors = FactorVerifier(
            store: store, rateLimiter: rateLimiter, ceremonies: ceremonies, audit: audit, clock: clock, logger: logger,
            sms: sms,
            serverSecret: serverSecret, configuration: configuration
        )
        let metadata = MetadataService(store: store, clock: clock, logger: logger)
        self.metadata = metadata
        self.passkeys = PasskeyVerifier(
            relyingParty: relyingParty, store: store, audit: audit, clock: clock, providers: providers,
            metadata: metadata)
        let signingKeys = SigningKeyring(
            store: store, ciphers: ciphers, clock: clock,
            longestTokenLifetime: TimeInterval(max(TokenIssuer.accessTokenLifetime, TokenIssuer.idTokenLifetime))
        )
        self.signingKeys = signingKeys
        let subjects = SubjectIdentifiers(serverSecret: serverSecret)
        self.tokens = TokenIssuer(
            keyring: signingKeys, issuer: configuration.origin, store: store, clock: clock, subjects: subjects)
        self.backChannelLogout = BackChannelLogout(
            keyring: signingKeys, issuer: configuration.origin, store: store, clock: clock, subjects: subjects,
            delivery: logoutDelivery, logger: logger)
    }

    package var now: Date { clock.now() }

    /// Runs CPU-heavy work (scrypt) off the event loops.
    package func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}
