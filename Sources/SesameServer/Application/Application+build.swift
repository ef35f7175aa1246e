import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import WebAuthn
import SesameConsole
import SesameCore
import SesameWeb
import SesameMail
import SesameEmail
import SesameMetadata
import SesameSecondFactors
import SesameIdentityProvider
import SesameInvitations
import SesamePasswords
import SesamePasskeys
import SesameAccount
import SesameAdminTokens
import SesameReauthentication
import SesameKeychainSync
import SesameForwardAuth
import SesameGroups
import SesameOperations

/// What the process supplies besides the settings: clock, logger, SMS delivery, metrics registry. Tests replace
/// these; `sesame serve` uses the defaults.
public struct ServerEnvironment: Sendable {
    public var clock: ServerClock = .system
    public var logger: Logger?
    /// Overrides the sender the configuration names (tests capture messages here).
    public var smsSender: (any SMSSender)?
    /// Overrides how back-channel logout tokens are sent (tests capture them here).
    public var logoutDelivery: (any LogoutDelivery)?
    public var metrics = ServerMetrics()
    public var rateLimits = RateLimitPolicy()
    /// PostgreSQL schema to use instead of the default one (tests isolate runs this way).
    public var postgresSchema: String?
    /// What background services count their turns on (the purge, SQLite checkpoints); tests pass a clock they
    /// advance by hand.
    public var serviceClock: any Clock<Duration> = ContinuousClock()
    /// Overrides the transport the mail settings name (tests capture mail here).
    package var mailTransport: (any MailTransport)?
    /// Sees every statement the store runs (tests reading query plans; see `StatementObserver`).
    package var statementObserver: StatementObserver?
    /// Overrides the groups accounts belong to (tests hand an in-memory `AccountGroups` here).
    package var accountGroups: (any AccountGroups)?
    /// Overrides the roots an uploaded metadata BLOB is verified against (tests give the example BLOB's root).
    package var metadataTrust: MetadataTrust = .bundled

    public init() {}
}

/// Opens the store the configuration names and brings its schema up to date (under the migration lock).
public func openStore(
    _ configuration: SesameCore.ServerConfiguration, environment: ServerEnvironment = .init(), logger: Logger
) async throws -> (engine: SQLEngine, store: SQLStore) {
    let location = try DatabaseLocation(parsing: configuration.database)
    // The key file is read before the database is opened, so a missing or malformed file stops the start with
    // its own message (file and line, never key bytes).
    let sealingKeys = try configuration.sealingKeyFile.map { path throws(SealingKeyError) in
        try SealingKeyFile.load(path: path)
    }
    // The live files hold the server secret: refused before anything reads them when others may.
    if case .sqlite(let path) = location { try SQLiteFileMode.checkPrivate(path) }
    let engine = try await SQLEngine.open(
        location, searchPath: environment.postgresSchema, logger: logger, observer: environment.statementObserver,
        postgresConnectionsPerLoop: configuration.postgresConnections,
        deadline: DatabaseDeadline(seconds: configuration.databaseTimeout))
    do {
        let applied = try await Migrations.run(ServerSchema.full, on: engine, now: environment.clock.now())
        if !applied.isEmpty {
            logger.notice(
                "database migrated",
                metadata: [
                    "versions": .string(applied.map(String.init).joined(separator: ",")),
                    "database": .string(location.redacted),
                ])
        }
        let newer = try await Migrations.checkNoUnknownContract(ServerSchema.full, on: engine)
        if !newer.isEmpty {
            logger.warning(
                "database schema is newer than this node's; running beside the newer version (its changes only add)",
                metadata: [
                    "versions": .string(newer.map(String.init).joined(separator: ",")),
                    "this node": .string(String(ServerSchema.full.current)),
                ])
        }
        let store = try await SQLStore.open(
            engine: engine, schema: ServerSchema.full, now: environment.clock.now(), sealingKeys: sealingKeys)
        if let sealingKeys, let path = configuration.sealingKeyFile {
            logger.info(
                "sealing key file loaded", metadata: ["keys": .string(sealingKeys.descriptions.joined(separator: ","))])
            if let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int,
                mode & 0o077 != 0
            {
                logger.warning(
                    "sealing key file is accessible to group or others; make it readable by the server's user only (chmod 600)",
                    metadata: ["path": .string(path), "mode": .string(String(mode & 0o777, radix: 8))]
                )
            }
        }
        return (engine, store)
    } catch {
        try? await engine.shutdown()
        throw error
    }
}

/// The composition root: opens and migrates the store, loads the server secret, builds the shared services and the
/// router with its middleware and every feature's routes, and returns the application whose service group also
/// closes the database, purges expired rows, checkpoints SQLite's WAL off the event loops and, when configured, runs
/// the metrics listener. Run it with `runService()` for graceful shutdown on SIGTERM/SIGINT.
public func buildApplication(
    configuration: SesameCore.ServerConfiguration, environment: ServerEnvironment = .init()
) async throws -> some ApplicationProtocol {
    try configuration.validate()
    var logger = environment.logger ?? Logger(label: "sesame")
    if environment.logger == nil { logger.logLevel = Logger.Level(rawValue: configuration.logLevel) ?? .info }

    // Read before the database is opened, so a bad list stops the start with its own message.
    let providers = try ProviderNames.load(configuration.providerListFile)
    let relyingParty = RelyingParty(configuration: try configuration.relyingPartyConfiguration())
    // The relay's password and CA file are read before the database is opened, so a bad one stops the start.
    let mailTransport = try environment.mailTransport ?? makeMailTransport(configuration)
    let (engine, store) = try await openStore(configuration, environment: environment, logger: logger)
    let sesame: Sesame
    var checkpointer: SQLiteCheckpointer? = nil
    do {
        if case .sqlite(let path) = engine.location { checkpointer = try SQLiteCheckpointer.open(path: path) }
        let secret = try await store.serverSecret(
            named: ServerSecret.name, generate: ServerSecret.generate, now: environment.clock.now())
        sesame = Sesame(
            configuration: configuration, store: store, clock: environment.clock, logger: logger, serverSecret: secret,
            metrics: environment.metrics, providers: providers, rateLimits: environment.rateLimits,
            sms: environment.smsSender ?? makeSMSSender(configuration, logger: logger), relyingParty: relyingParty,
            ciphers: store.ciphers, logoutDelivery: environment.logoutDelivery ?? HTTPLogoutDelivery(),
            accountGroups: environment.accountGroups ?? serverAccountGroups(store),
            metadataTrust: environment.metadataTrust
        )
        // Clients declared in the config file, brought in line before the first request.
        let declared = try await ClientRegistry(store: store).declare(configuration.clients, now: sesame.core.now)
        for id in declared.created {
            await sesame.core.audit.record(
                .clientAdded, .success, user: nil, clientAddress: "config", detail: id, client: id)
        }
        for id in declared.updated {
            await sesame.core.audit.record(
                .clientUpdated, .success, user: nil, clientAddress: "config", detail: id, client: id)
        }
        // A declared client may name groups an operator has yet to add; until then nobody is in them, so nobody may
        // use it. Said at start, so the reason is in the log and not only in refusals.
        for client in configuration.clients {
            let unknown = try await sesame.core.accountGroups.unknownSlugs(client.allowedGroups ?? [])
            if !unknown.isEmpty {
                logger.warning(
                    "declared client allows groups that do not exist (sesame groups add)",
                    metadata: ["client": .string(client.id), "groups": .string(unknown.joined(separator: ","))])
            }
        }
    } catch {
        checkpointer?.close()
        try? await engine.shutdown()
        throw error
    }

    // Limits against slow and idle clients (docs/configuration.md): connections idle or sending an unfinished part
    // for `idleTimeout` are closed, a body must arrive within `requestTimeout`, and at most `maxConnections` are open.
    let requestTimeout = TimeAmount.seconds(Int64(configuration.requestTimeout))
    var app = Application(
        router: buildRouter(sesame),
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [RequestDeadlineHandler(timeout: requestTimeout)],
                idleTimeout: .seconds(Int64(configuration.idleTimeout)))),
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "sesame",
            availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections, logger: logger)),
        logger: logger
    )
    app.addServices(DatabaseService(engine: engine), PurgeService(sesame: sesame.core, ticks: environment.serviceClock))
    let audit = sesame.core.audit
    app.addServices(
        OutboxSender(
            store: store, transport: mailTransport, clock: environment.clock, ticks: environment.serviceClock,
            retention: TimeInterval(configuration.mailRetentionDays) * 86400,
            schedule: configuration.outboxSchedule, host: URL(string: configuration.origin)?.host ?? "localhost",
            logger: logger, metrics: sesame.core.metrics,
            onGiveUp: { claimed, _ in
                await audit.record(.mailGaveUp, .failure, user: nil, clientAddress: "outbox", detail: claimed.kind)
            }))
    app.addServices(
        NodeHeartbeats(store: store, clock: environment.clock, ticks: environment.serviceClock, logger: logger))
    if let checkpointer, let handle = engine.sqliteHandle {
        app.addServices(
            SQLiteCheckpointService(
                checkpointer: checkpointer, commits: { handle.commits.load(ordering: .relaxed) }, logger: logger,
                ticks: environment.serviceClock))
    }
    if let metricsListener = try MetricsEndpoint.listener(
        configuration, metrics: sesame.core.metrics, guesses: sesame.core.metricsGuesses, clock: sesame.core.clock,
        outbox: store, logger: logger)
    {
        app.addServices(metricsListener)
    }
    return app
}

/// The router: middleware in the order requests pass through them, then every feature's routes.
package func buildRouter(_ sesame: Sesame) -> Router<SesameRequestContext> {
    // The routes are registered twice: first into a scratch router whose route list feeds the 405 index (the
    // error middleware must be added before the routes it wraps), then into the application router.
    let scratch = Router(context: SesameRequestContext.self)
    registerRoutes(on: scratch, sesame)
    // HEAD on a GET route runs the GET handler (with every middleware) and answers its status and headers,
    // Content-Length included, without the body (RFC 9110 §9.3.2).
    let router = Router(context: SesameRequestContext.self, options: .autoGenerateHeadEndpoints)
    var errors = ErrorMiddleware(metrics: sesame.core.metrics, methods: MethodIndex(routes: scratch.routes))
    errors.vocabulary = .server
    router.add(middleware: errors)
    router.add(
        middleware: SessionMiddleware(
            configuration: sesame.core.configuration, cookies: sesame.core.cookies, sessions: sesame.core.sessions,
            clock: sesame.core.clock
        ))
    registerRoutes(on: router, sesame)
    return router
}

/// Every feature's routes, in registration order. `part` is told, before each feature's routes, which part of the
/// API document describes them (`VocabularyTests` holds each part to the routes that follow it, so a path described
/// in another feature's fragment fails).
package func registerRoutes(
    on router: Router<SesameRequestContext>, _ sesame: Sesame, describedBy part: (APIFragment) -> Void = { _ in }
) {
    let core = sesame.core
    WebRoutes(
        sesame: core, emailRecovery: core.configuration.emailRecovery, accountSections: AccountSection.server,
        secondStepChoices: SecondStepChoice.server
    ).register(on: router)
    part(.operations)
    OperationalRoutes(
        sesame: core, outbox: sesame.store, mailDelayedAfter: core.configuration.outboxSchedule.delayedAfter,
        apiDocument: APIDocument.server
    ).register(on: router)
    part(.passkeys)
    SignUpRoutes(
        sesame: core, store: sesame.store, passkeyVerifier: sesame.passkeys,
        invitations: Invitations(sesame: core, store: sesame.store),
        firstAdmin: core.configuration.firstSignUpAdmin
            ? FirstSignUpAdmin(adminGroup: core.configuration.adminGroup) : nil
    ).register(on: router)
    SignInRoutes(sesame: core, store: sesame.store, passkeyVerifier: sesame.passkeys).register(on: router)
    PasskeyManagementRoutes(
        sesame: core, store: sesame.store, passkeyVerifier: sesame.passkeys, metadataService: sesame.metadata
    )
    .register(on: router)
    ProviderIconRoutes(sesame: core).register(on: router)
    part(.passwords)
    PasswordRoutes(
        sesame: core, store: sesame.store, passwordHasher: sesame.passwords, factorVerifier: sesame.factors,
        backChannelLogout: sesame.backChannelLogout
    ).register(on: router)
    part(.secondFactors)
    SecondFactorRoutes(sesame: core, store: sesame.store, factorVerifier: sesame.factors).register(on: router)
    part(.reauthentication)
    ReauthenticationRoutes(
        sesame: core, store: sesame.store, passwordHasher: sesame.passwords, factorVerifier: sesame.factors,
        passkeyVerifier: sesame.passkeys
    ).register(on: router)
    part(.account)
    AccountRoutes(
        sesame: core, store: sesame.store, factorVerifier: sesame.factors, backChannelLogout: sesame.backChannelLogout
    )
    .register(on: router)
    part(.email)
    EmailRoutes(sesame: core, store: sesame.store).register(on: router)
    // The admin API and the console, behind the one admin gate.
    let adminTokens = AdminTokens(store: sesame.store, rateLimiter: core.rateLimiter, clock: core.clock)
    let gate = AdminGate(
        adminGroup: core.configuration.adminGroup, window: core.configuration.consoleReauthenticationWindow,
        groups: core.accountGroups, tokens: adminTokens, sessions: core.sessions, clock: core.clock)
    let adminAPI = router.group("/api/admin").add(middleware: AdminMiddleware(gate: gate))
        .group(context: AdminRequestContext.self)
    part(.groups)
    GroupsRoutes(sesame: core, store: sesame.store).register(admin: adminAPI)
    part(.invitations)
    InvitationsAdminRoutes(sesame: core, store: sesame.store).register(admin: adminAPI)
    part(.identityProvider)
    AppsAdminRoutes(sesame: core, store: sesame.store, signingKeyring: sesame.signingKeys).register(admin: adminAPI)
    part(.forwardAuth)
    ForwardAuthAdminRoutes(sesame: core).register(admin: adminAPI)
    part(.metadata)
    MetadataAdminRoutes(sesame: core, store: sesame.store, trust: sesame.metadataTrust).register(admin: adminAPI)
    part(.operations)
    SettingsAdminRoutes(sesame: core, settings: Vocabulary.server.settings).register(admin: adminAPI)
    part(.adminTokens)
    AdminTokensRoutes(tokens: adminTokens).register(admin: adminAPI)
    AuditRoutes(store: sesame.store, kinds: Vocabulary.server.auditKinds.map(\.rawValue)).register(admin: adminAPI)
    part(.console)
    OverviewRoutes(sesame: core, store: sesame.store, sources: overviewSources(sesame)).register(admin: adminAPI)
    part(.email)
    let recoveryLinks = RecoveryLinks(sesame: core, store: sesame.store)
    recoveryLinks.register(admin: adminAPI)
    recoveryLinks.register(on: router)
    part(.operations)
    PeopleAdminRoutes(sesame: core, store: sesame.store, backChannelLogout: sesame.backChannelLogout)
        .register(admin: adminAPI)
    part(.console)
    ConsoleRoutes(sesame: core, gate: gate).register(
        console: router.group("/console").add(middleware: AdminMiddleware(gate: gate)))
    part(.email)
    EmailRecovery(sesame: core, store: sesame.store).register(on: router)
    part(.identityProvider)
    IdentityProviderRoutes(
        sesame: core, store: sesame.store, signingKeyring: sesame.signingKeys, tokenIssuer: sesame.tokens
    )
    .register(on: router)
    AppAccessRoutes(sesame: core, store: sesame.store, backChannelLogout: sesame.backChannelLogout).register(on: router)
    LogoutRoutes(
        sesame: core, store: sesame.store, tokenIssuer: sesame.tokens, backChannelLogout: sesame.backChannelLogout
    )
    .register(on: router)
    DeviceAuthorizationRoutes(sesame: core, store: sesame.store).register(on: router)
    part(.forwardAuth)
    ForwardAuthRoutes(sesame: core, emails: sesame.emails).register(on: router)
    part(.keychainSync)
    KeychainSyncRoutes(sesame: core, store: sesame.store).register(on: router)
}

/// What the Overview reads from features the console does not import: the metadata in force, the signing keys'
/// ages and the audit kinds that are sign-ins.
func overviewSources(_ sesame: Sesame) -> OverviewSources {
    let store = sesame.store
    let metadata = sesame.metadata
    return OverviewSources(
        metadata: {
            guard let index = await metadata.current(), let stored = try await store.latestMetadataBLOB() else {
                return nil
            }
            return MetadataFigures(
                number: index.number, nextUpdate: index.nextUpdate, entries: index.entries.count,
                importedAt: stored.importedAt)
        },
        signingKeys: {
            try await store.signingKeys().map {
                SigningKeyFigures(
                    kid: $0.kid, algorithm: $0.algorithm, createdAt: $0.createdAt, retiredAt: $0.retiredAt)
            }
        },
        signInKinds: Vocabulary.server.auditKinds.map(\.rawValue).filter { $0.hasPrefix("sign_in.") }
            + [AuditKind.emailRecoverySignedIn.rawValue, AuditKind.recoveryLinkUsed.rawValue])
}
