import ArgumentParser
import Foundation
import Hummingbird
import SesameServer

/// Flags shared by every command that opens the database (`serve`, `migrate`, `users`, `audit`).
struct ServerOptions: ParsableArguments {
    @Option(help: "JSON config file (setting keys as in the table below). Also SESAME_CONFIG.")
    var config: String?
    @Option(help: "Address to listen on. [SESAME_HOST, default 127.0.0.1]") var host: String?
    @Option(help: "TCP port. [SESAME_PORT, default 8080]") var port: String?
    @Option(name: .customLong("rp-id"), help: "WebAuthn relying party ID. [SESAME_RP_ID, default localhost]") var rpID: String?
    @Option(name: .customLong("rp-name"), help: "Relying party name. [SESAME_RP_NAME, default Sesame]") var rpName: String?
    @Option(help: "Public web origin. [SESAME_ORIGIN, default http://localhost:8080]") var origin: String?
    @Option(name: .customLong("related-origins"), help: "Comma-separated related origins. [SESAME_RELATED_ORIGINS]") var relatedOrigins: String?
    @Option(name: .customLong("native-app-origins"), help: "Comma-separated android:apk-key-hash:… origins. [SESAME_NATIVE_APP_ORIGINS]") var nativeAppOrigins: String?
    @Option(help: "SQLite path or postgres:// URL. [SESAME_DATABASE, default sesame.sqlite]") var database: String?
    @Option(name: .customLong("apple-app-ids"), help: "Comma-separated TEAMID.bundle.id. [SESAME_APPLE_APP_IDS]") var appleAppIDs: String?
    @Option(name: .customLong("android-apps"), help: "package=FP[|FP],… [SESAME_ANDROID_APPS]") var androidApps: String?
    @Option(name: .customLong("sms-sender"), help: "console or a webhook URL. [SESAME_SMS_SENDER, default console]") var smsSender: String?
    @Option(name: .customLong("challenge-timeout"), help: "Challenge lifetime, seconds. [SESAME_CHALLENGE_TIMEOUT, default 300]") var challengeTimeout: String?
    @Option(name: .customLong("session-lifetime"), help: "Session lifetime, seconds. [SESAME_SESSION_LIFETIME, default 1209600]") var sessionLifetime: String?
    @Option(name: .customLong("reauthentication-window"), help: "Seconds sensitive changes are allowed after sign-in. [SESAME_REAUTHENTICATION_WINDOW, default 600]") var reauthenticationWindow: String?
    @Option(name: .customLong("password-scrypt-log-n"), help: "scrypt log2(N). [SESAME_PASSWORD_SCRYPT_LOG_N, default 15]") var passwordScryptLogN: String?
    @Option(name: .customLong("trust-forwarded-for"), help: "true to use X-Forwarded-For. [SESAME_TRUST_FORWARDED_FOR, default false]") var trustForwardedFor: String?
    @Option(name: .customLong("trusted-proxy-hops"), help: "Proxies in front of Sesame appending X-Forwarded-For. [SESAME_TRUSTED_PROXY_HOPS, default 1]") var trustedProxyHops: String?
    @Option(name: .customLong("user-verification"), help: "preferred or required. [SESAME_USER_VERIFICATION, default preferred]") var userVerification: String?
    @Option(name: .customLong("metrics-address"), help: "host:port of a listener serving only /metrics. [SESAME_METRICS_ADDRESS]") var metricsAddress: String?
    @Option(name: .customLong("metrics-token"), help: "Bearer token /metrics requires. [SESAME_METRICS_TOKEN]") var metricsToken: String?
    @Option(name: .customLong("allow-console-sms"), help: "true to allow the console SMS sender on https. [SESAME_ALLOW_CONSOLE_SMS, default false]") var allowConsoleSMS: String?
    @Option(name: .customLong("log-level"), help: "Log level. [SESAME_LOG_LEVEL, default info]") var logLevel: String?
    @Option(name: .customLong("sealing-key-file"), help: "File of base64 256-bit sealing keys, first one seals. [SESAME_SEALING_KEY_FILE]") var sealingKeyFile: String?
    @Option(name: .customLong("provider-list-file"), help: "AAGUID provider list (aaguid.json format) replacing the bundled one. [SESAME_PROVIDER_LIST_FILE]") var providerListFile: String?

    func resolve() throws -> ServerConfiguration {
        var flags: [String: String] = [:]
        let given: [(String, String?)] = [
            ("host", host), ("port", port), ("rpID", rpID), ("rpName", rpName), ("origin", origin),
            ("relatedOrigins", relatedOrigins), ("nativeAppOrigins", nativeAppOrigins), ("database", database),
            ("appleAppIDs", appleAppIDs), ("androidApps", androidApps), ("smsSender", smsSender),
            ("challengeTimeout", challengeTimeout), ("sessionLifetime", sessionLifetime),
            ("reauthenticationWindow", reauthenticationWindow),
            ("passwordScryptLogN", passwordScryptLogN), ("trustForwardedFor", trustForwardedFor), ("logLevel", logLevel),
            ("trustedProxyHops", trustedProxyHops), ("userVerification", userVerification), ("metricsAddress", metricsAddress),
            ("metricsToken", metricsToken), ("allowConsoleSMS", allowConsoleSMS),
            ("sealingKeyFile", sealingKeyFile), ("providerListFile", providerListFile),
        ]
        for case let (key, value?) in given { flags[key] = value }
        do {
            return try ServerConfiguration.resolve(flags: flags, environment: ProcessInfo.processInfo.environment, configFile: config)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Sesame server (passkeys, passwords, one-time codes) over HTTP.",
        discussion: """
            Every setting comes from, in increasing precedence: its default, the JSON config file \
            (--config or SESAME_CONFIG), its SESAME_* environment variable, its flag.

            \(ServerConfiguration.settings.map { "  \($0.flag.padding(toLength: 26, withPad: " ", startingAt: 0)) \($0.environment.padding(toLength: 30, withPad: " ", startingAt: 0)) default \($0.defaultValue)" }.joined(separator: "\n"))

            The database is created and migrated on start. SIGTERM or SIGINT stops the server gracefully.
            """
    )

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        let app = try await buildApplication(configuration: configuration)
        try await app.runService()
    }
}
