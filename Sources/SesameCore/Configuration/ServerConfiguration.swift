import Foundation
import WebAuthn

/// Every setting of `sesame serve`. Each one can come from four places, in increasing precedence:
/// built-in default < config file (JSON, `--config` / `SESAME_CONFIG`) < `SESAME_*` environment variable < flag.
/// `ServerConfiguration.settings` is the single table of names (the core's rows and each feature's, joined by the
/// composition root; a feature's values live in its target as `SettingKey`s); `docs/configuration.md` and
/// `sesame serve --help` are generated from the same facts.
public struct ServerConfiguration: Sendable, Equatable {
    /// Address to bind.
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    /// WebAuthn relying party identifier (a registrable domain suffix of every web origin).
    public var rpID: String = "localhost"
    /// Human-readable relying party name shown by authenticators.
    public var rpName: String = "Sesame"
    /// The web origin the server is reached at (scheme, host, port). Its scheme decides cookie security.
    public var origin: String = "http://localhost:8080"
    /// More origins allowed in client data: related origins (`/.well-known/webauthn`) and native app origins
    /// such as `android:apk-key-hash:<base64url sha256 of the signing certificate>`.
    public var relatedOrigins: [String] = []
    public var nativeAppOrigins: [String] = []
    /// `sqlite:<path>`, a bare path, or `postgres://user:password@host:port/database`.
    public var database: String = "sesame.sqlite"
    /// Apple app identifiers (`TEAMID.bundle.id`) listed as webcredentials apps.
    public var appleAppIDs: [String] = []
    /// Android apps listed in assetlinks.json.
    public var androidApps: [AndroidApp] = []
    /// OpenID Connect clients declared in the config file (`clients`; no flag or environment variable), brought
    /// into the store at every start.
    public var clients: [DeclaredClient] = []
    /// Challenge lifetime in seconds (ceremonies, pending second steps, SMS codes).
    public var challengeTimeout: Int = 300
    /// Session lifetime in seconds (absolute, from sign-in).
    public var sessionLifetime: Int = 14 * 24 * 3600
    /// Seconds after the session's last sign-in or re-authentication during which sensitive account changes
    /// (password, passkeys, second factors, recovery codes) are allowed without re-authenticating.
    public var reauthenticationWindow: Int = 600
    /// Take the client address from `X-Forwarded-For` (only behind proxies you run): the entry `trustedProxyHops`
    /// places from the right, which the outermost of your proxies appended. Entries to its left are the client's
    /// own words and are ignored.
    public var trustForwardedFor: Bool = false
    /// How many proxies you run in front of Sesame, each appending the address it saw to `X-Forwarded-For`.
    public var trustedProxyHops: Int = 1
    /// WebAuthn user verification: `preferred` (a passkey sign-in without it counts as one factor) or `required`
    /// (registrations and sign-ins without it are refused).
    public var userVerification: String = "preferred"
    /// Attestation conveyance asked of authenticators at registration: `none`, or `direct` (checked against the
    /// bundled trust anchors and the imported FIDO metadata).
    public var attestation: String = "none"
    /// A JSON `RegistrationPolicy` (docs/attestation.md); nil admits every verified registration that metadata
    /// status reports do not refuse.
    public var registrationPolicyFile: String?
    /// Log level: trace, debug, info, notice, warning, error, critical.
    public var logLevel: String = "info"
    /// Path of the sealing key file: 256-bit keys held outside the database that seal TOTP secrets and phone
    /// numbers (`SealingKeyFile`). Without it they are sealed under a key derived from the server secret.
    public var sealingKeyFile: String?
    /// A passkey provider list (AAGUID → name and icons, in the community `aaguid.json` format) replacing the
    /// bundled one; nil: the bundled list.
    public var providerListFile: String?
    /// A parent domain the session cookie is sent to (`Domain=`), so a reverse proxy in front of apps on its
    /// subdomains can check the session with forward auth. The cookie then carries the `__Secure-` prefix instead of
    /// `__Host-`. nil: the cookie stays on Sesame's own host.
    public var cookieDomain: String?
    /// Seconds a connection may go without a complete request part (an idle keep-alive connection, a request head
    /// sent a byte at a time, a body that stalls) before the server closes it: Hummingbird's HTTP/1 idle timeout.
    public var idleTimeout: Int = 30
    /// Seconds a request body may take to arrive in full (a body trickled to stay under `idleTimeout` still ends
    /// here): the connection is closed (`RequestDeadlineHandler`).
    public var requestTimeout: Int = 10
    /// Client connections open at once at most; further ones wait in the kernel's listen backlog until one closes.
    /// Each takes a file descriptor: the process's limit (systemd `LimitNOFILE`) must be above it.
    public var maxConnections: Int = 20000
    /// Where a passkey sign-in's challenge keeps its state between the options and the verify step.
    public var signInChallenges: SignInChallenges = .auto
    /// PostgreSQL connections each event loop (one per core) keeps in its pool: the most statements a node runs
    /// at once is this times the cores. SQLite ignores it.
    public var postgresConnections: Int = Self.defaultPostgresConnections
    public static let defaultPostgresConnections = 4
    /// Seconds PostgreSQL may take to give a pooled connection, to open a new one, and to answer each statement
    /// (`DatabaseDeadline`); past it the request answers 503 `unavailable`. `/health` waits half of it.
    public var databaseTimeout: Double = Self.defaultDatabaseTimeout
    public static let defaultDatabaseTimeout = 2.0
    /// The values of the settings features declare in their own targets (`SettingKey`), e.g. `smsSender`.
    package var featureSettings = FeatureSettings()
    /// Where each setting given came from (by key), recorded by `resolve`; shown by the console's Settings page.
    package var settingSources: [String: SettingSource] {
        get { provenance.sources }
        set { provenance.sources = newValue }
    }
    /// Whether the configuration was resolved from its sources (a setting not in `settingSources` then has its
    /// default); false for one made in code, where a value's source is unknown.
    package var settingsResolved: Bool {
        get { provenance.resolved }
        set { provenance.resolved = newValue }
    }
    private var provenance = SettingProvenance()
    /// Which threads run the request handlers of `sesame serve` (read once, when the process starts serving).
    public var taskExecutor: TaskExecutorChoice = .eventLoops

    /// `eventLoops`: Swift concurrency's global executor is the event loop group that also does the socket I/O, so a
    /// request is read, handled and answered on one thread, with no hand-off to Swift's own thread pool and back
    /// (two thread wake-ups per request; docs/server.md, "Benchmark"); `global`: Swift's own pool, as a plain Swift
    /// process has it. Handlers never block on I/O (a SQLite statement is microseconds; scrypt runs on its own thread
    /// pool), which is what running them on the event loops asks.
    public enum TaskExecutorChoice: String, Sendable, CaseIterable {
        case eventLoops = "event-loops"
        case global
    }

    /// `sealed`: in the challenge itself (`SealedSignInChallenge`), so the options step writes nothing and the
    /// verify step records the spent challenge in the sign-in statement; `stored`: a database row per options
    /// request, consumed at verify. Nodes of this version accept both; nodes before 0.10.0 finish only stored ones,
    /// hence `auto`: sealed on SQLite (one node), stored on PostgreSQL until every node runs 0.10.0 or later.
    public enum SignInChallenges: String, Sendable, CaseIterable {
        case auto, sealed, stored
    }

    /// Whether sign-in challenges are sealed (`signInChallenges`, with `auto` resolved by the database engine).
    public var sealsSignInChallenges: Bool {
        switch signInChallenges {
        case .sealed: true
        case .stored: false
        case .auto: !database.lowercased().hasPrefix("postgres")
        }
    }

    public struct AndroidApp: Sendable, Equatable, Codable {
        public var packageName: String
        /// SHA-256 fingerprints of the signing certificates, `AB:CD:...` as `keytool` prints them.
        public var sha256CertFingerprints: [String]

        public init(packageName: String, sha256CertFingerprints: [String]) {
            self.packageName = packageName
            self.sha256CertFingerprints = sha256CertFingerprints
        }

        package enum CodingKeys: String, CodingKey {
            case packageName = "package_name"
            case sha256CertFingerprints = "sha256_cert_fingerprints"
        }
    }

    public init() {}

    /// Whether cookies get `Secure` and the `__Host-` prefix.
    public var isSecureOrigin: Bool { origin.lowercased().hasPrefix("https://") }

    /// Every origin a browser or app may send in client data or the `Origin` header.
    public var allowedOrigins: [String] { [origin] + relatedOrigins + nativeAppOrigins }

    /// Web origins only (what an `Origin` request header can carry).
    public var allowedWebOrigins: [String] { [origin] + relatedOrigins }
}

/// Where the settings' values came from. Not part of a configuration's equality: two configurations with the same
/// values are the same whichever sources gave them.
struct SettingProvenance: Sendable, Equatable {
    var sources: [String: SettingSource] = [:]
    var resolved = false

    static func == (_: SettingProvenance, _: SettingProvenance) -> Bool { true }
}
