import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOPosix
import WebAuthn

/// The services every feature shares, built once by `buildApplication`: the configuration and store, the clock and
/// logger, sessions and their cookies, ceremonies, rate limits and audit. A feature takes this and, beside it, only
/// the services of other features it uses (named one by one where the composition root builds it).
package struct ServerCore: Sendable {
    package let configuration: ServerConfiguration
    package let store: any Store
    package let clock: ServerClock
    package let logger: Logger
    /// Keys the CSRF tokens, SMS code MACs and the decoys of unknown users.
    package let serverSecret: [UInt8]
    package let metrics: ServerMetrics
    /// Passkey provider names and icons by AAGUID (the bundled list, or `providerListFile`).
    package let providers: AuthenticatorProviders
    package let cookies: Cookies
    package let sessions: SessionIssuer
    /// The browsers each account signed in from (the device cookie).
    package let knownDevices: KnownDevices
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
    /// Mails to the account's owner about changes to its ways in (`AccountNotices`); the composition root gives the
    /// address feature's.
    package let accountNotices: any AccountNotices
    /// The address a sign-up gives (`SignUpAddresses`); the composition root gives the address feature's.
    package let signUpAddresses: any SignUpAddresses
    /// The groups accounts belong to (`AccountGroups`); the composition root gives the groups feature's.
    package let accountGroups: any AccountGroups
    /// The second factors the server's features declare (`Vocabulary.factors`), for reading sessions' methods.
    package let factors: [Factor]
    /// The last-administrator rule over `accountGroups` and the administrators' group the composition root names
    /// (the groups feature's `adminGroup`); nil without one. An owner's change that could take the last
    /// administrator's last passkey runs through it, as an operator's does.
    package let administrators: AdministratorRule?
    /// The message catalog and the choice of each request's language; the account feature gives the saved choices.
    package let languages: PageLanguages

    package init(
        configuration: ServerConfiguration, store: any Store, clock: ServerClock, logger: Logger, serverSecret: [UInt8],
        metrics: ServerMetrics, providers: AuthenticatorProviders, rateLimits: RateLimitPolicy, factors: [Factor],
        accountNotices: any AccountNotices = NoAccountNotices(), accountGroups: any AccountGroups = NoAccountGroups(),
        signUpAddresses: any SignUpAddresses = NoSignUpAddresses(), adminGroup: String? = nil,
        languagePreferences: any LanguagePreferences = NoLanguagePreferences()
    ) {
        self.languages = PageLanguages(
            catalog: (try? PageLanguages.bundled.get()) ?? .empty, defaultTag: configuration.defaultLanguage,
            preferences: languagePreferences)
        self.administrators = adminGroup.map { AdministratorRule(groups: accountGroups, adminGroup: $0) }
        self.accountNotices = accountNotices
        self.signUpAddresses = signUpAddresses
        self.accountGroups = accountGroups
        self.factors = factors
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.logger = logger
        self.serverSecret = serverSecret
        self.metrics = metrics
        self.providers = providers
        let cookies = Cookies(configuration)
        self.cookies = cookies
        self.knownDevices = KnownDevices(serverSecret: serverSecret, cookies: cookies)
        self.sessions = SessionIssuer(
            store: store, clock: clock, cookies: cookies, serverSecret: serverSecret,
            lifetime: configuration.sessionLifetime
        )
        let rateLimiter = RateLimiter(store: store, policy: rateLimits, clock: clock)
        self.rateLimiter = rateLimiter
        self.ceremonies = Ceremonies(
            store: store, rateLimiter: rateLimiter, clock: clock, cookies: cookies,
            lifetime: configuration.challengeTimeout)
        self.sealedSignIn = SealedSignInChallenge(serverSecret: serverSecret)
        self.sealsSignIn = configuration.sealsSignInChallenges
        self.signInStarts = NodeCeremonyBudget(limit: rateLimits.ceremoniesPerAddress, window: rateLimits.window)
        self.metricsGuesses = NodeCeremonyBudget(limit: rateLimits.perAddress, window: rateLimits.window)
        self.audit = AuditLog(store: store, metrics: metrics, clock: clock, logger: logger)
    }

    package var now: Date { clock.now() }

    /// The notice of a change `user` makes from this request, for its store to give in the change's transaction; in
    /// the account's saved language, else the request's (`noticeLanguage`).
    package func notice(_ kind: AccountNoticeKind, user: User, request: Request?, context: some ClientContext) async
        -> AccountNotice
    {
        AccountNotice(
            kind, userID: user.id, username: user.username, clientAddress: context.clientAddress, at: now,
            language: await noticeLanguage(userID: user.id, request: request), notices: accountNotices)
    }

    /// The language of a mail to `userID` caused by `request`: their saved choice, else the request's (`ui_locales`,
    /// `Accept-Language`), else the default. Read before the change's transaction opens.
    package func noticeLanguage(userID: String?, request: Request?) async -> String {
        await languages.tag(forUser: userID, fallback: request.map { languages.tag(for: $0, saved: nil) })
    }

    /// After a sign-in by `user` has committed: nil, with no query, when this browser's device cookie knows the
    /// account (`KnownDevices`); otherwise mails the owner "New sign-in to your account" (`sign_in.new_device`,
    /// with the device and the client address) and gives the `Set-Cookie` that remembers the account here. The mail
    /// is written in a transaction of its own (the passkey sign-in commits in one statement); the cookie is only
    /// given once the mail is in the outbox, so a failed write (logged, the sign-in still succeeds) mails at the
    /// next sign-in instead.
    package func signedInFromDevice(user: User, request: Request, context: some ClientContext) async -> HTTPField? {
        guard !knownDevices.knows(userID: user.id, request: request) else { return nil }
        // An account that gets no mail (no verified address, or addresses off) is only remembered: one read, no
        // language lookup and no write transaction (on SQLite that would hold every other request's statements).
        // The transaction below still reads the address again.
        do {
            if try await !accountNotices.getsNotices(userID: user.id) {
                return HTTPField(name: .setCookie, value: knownDevices.remember(userID: user.id, request: request))
            }
        } catch {
            logger.error("the new-device mail was not written", metadata: ["error": "\(String(reflecting: error))"])
            return nil
        }
        let notice = AccountNotice(
            .newDeviceSignIn, userID: user.id, username: user.username, clientAddress: context.clientAddress, at: now,
            details: AccountNoticeDetail.signIn(
                userAgent: request.headers[.userAgent], clientAddress: context.clientAddress),
            language: await noticeLanguage(userID: user.id, request: request), notices: accountNotices)
        do {
            try await notice.give()
        } catch {
            logger.error("the new-device mail was not written", metadata: ["error": "\(String(reflecting: error))"])
            return nil
        }
        return HTTPField(name: .setCookie, value: knownDevices.remember(userID: user.id, request: request))
    }

    /// A new account's first session: its browser is known from the start, so the sign-up mails nothing.
    package func rememberDevice(user: User, request: Request) -> HTTPField {
        HTTPField(name: .setCookie, value: knownDevices.remember(userID: user.id, request: request))
    }

    /// Runs CPU-heavy work (scrypt) off the event loops.
    package func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}
