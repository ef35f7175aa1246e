import Foundation
import WebAuthn

/// One row of the settings table.
public struct Setting: Sendable {
    public let key: String
    public let flag: String
    public let environment: String
    public let defaultValue: String
    public let help: String
    /// The value is JSON text (`forwardAuthRules`): the config file may give it as JSON (a list or an object), the
    /// environment and the flag as its text.
    package let takesJSON: Bool
    /// The value is a secret (a token): wherever the settings in force are shown (the console's Settings page), it
    /// is masked whole.
    package let secret: Bool
    /// The value is a URL that may carry a password (`postgres://user:password@…`, `smtp://user:password@…`): where
    /// the settings in force are shown, only the password is masked, so a SQLite path or a relay's host still shows.
    package let secretURLPassword: Bool
    package let apply: @Sendable (inout ServerConfiguration, String) throws(ConfigurationError) -> Void

    /// A row: `key` in the config file, `flag` on the command line, `environment` variable, the default as
    /// `--help` prints it, the meaning, and how a value is read into the configuration.
    package init(
        key: String, flag: String, environment: String, defaultValue: String, help: String, takesJSON: Bool = false,
        secret: Bool = false, secretURLPassword: Bool = false,
        apply: @escaping @Sendable (inout ServerConfiguration, String) throws(ConfigurationError) -> Void
    ) {
        self.key = key
        self.flag = flag
        self.environment = environment
        self.defaultValue = defaultValue
        self.help = help
        self.takesJSON = takesJSON
        self.secret = secret
        self.secretURLPassword = secretURLPassword
        self.apply = apply
    }
}

/// Where a setting's value came from: the text given and the source (`file <path>`, `environment <VAR>`, `flag
/// <--flag>`), recorded as the configuration is resolved.
package struct SettingSource: Sendable, Equatable {
    package let value: String
    package let source: String

    package init(value: String, source: String) {
        self.value = value
        self.source = source
    }
}

/// A rule over several settings, checked once every source is applied.
package struct ConfigurationCheck: Sendable {
    package let check: @Sendable (ServerConfiguration) throws(ConfigurationError) -> Void

    package init(_ check: @escaping @Sendable (ServerConfiguration) throws(ConfigurationError) -> Void) {
        self.check = check
    }
}

/// A setting that cannot be used, said as `flag: what is wrong` (`sesame serve` adds every way to set it). The
/// server's error shape (`ServerError`).
public typealias ConfigurationError = ServerError<ConfigurationErrorCode>

/// The code of `ConfigurationError`.
public struct ConfigurationErrorCode: ServerErrorCode {
    public let name: String
    private init(_ name: String) { self.name = name }
    public var description: String { name }

    /// A setting's value, or a combination of settings, is refused; the message names the setting.
    public static let invalidSetting = ConfigurationErrorCode("invalidSetting")
}

extension ServerError where Code == ConfigurationErrorCode {
    public init(_ message: String, file: String = #fileID, line: Int = #line) {
        self.init(code: .invalidSetting, message: message, file: file, line: line)
    }
}

extension ServerConfiguration {
    package static func int(_ key: String, _ value: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int
    {
        guard let number = Int(value.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
            throw ConfigurationError("\(key): expected an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    package static func bool(_ key: String, _ value: String) throws(ConfigurationError) -> Bool {
        switch value.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off", "": return false
        default: throw ConfigurationError("\(key): expected true or false")
        }
    }

    package static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Android apps on the command line / environment: `package=FP1|FP2,package2=FP3`.
    private static func androidApps(_ value: String) throws(ConfigurationError) -> [AndroidApp] {
        var apps: [AndroidApp] = []
        for entry in list(value) {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw ConfigurationError("android-apps: expected package=FINGERPRINT[|FINGERPRINT...]")
            }
            let prints = parts[1].split(separator: "|").map(String.init)
            guard !prints.isEmpty else { throw ConfigurationError("android-apps: \(parts[0]) has no fingerprint") }
            apps.append(AndroidApp(packageName: parts[0], sha256CertFingerprints: prints))
        }
        return apps
    }

    /// The core's rows of the settings table: key (config file), flag, environment variable, default, meaning.
    /// Each feature declares its own rows in its target; the composition root joins them into the one table
    /// (`ServerConfiguration.settings`, `Vocabulary.server`).
    package static let coreSettings: [Setting] = [
        Setting(
            key: "host", flag: "--host", environment: "SESAME_HOST", defaultValue: "127.0.0.1",
            help: "Address to listen on."
        ) { c, v throws(ConfigurationError) in c.host = v },
        Setting(
            key: "port", flag: "--port", environment: "SESAME_PORT", defaultValue: "8080",
            help: "TCP port to listen on (0 picks a free one)."
        ) { c, v throws(ConfigurationError) in c.port = try int("port", v, 0...65535) },
        Setting(
            key: "rpID", flag: "--rp-id", environment: "SESAME_RP_ID", defaultValue: "localhost",
            help: "WebAuthn relying party ID (your registrable domain)."
        ) { c, v throws(ConfigurationError) in c.rpID = v },
        Setting(
            key: "rpName", flag: "--rp-name", environment: "SESAME_RP_NAME", defaultValue: "Sesame",
            help: "Relying party name shown by authenticators."
        ) { c, v throws(ConfigurationError) in c.rpName = v },
        Setting(
            key: "origin", flag: "--origin", environment: "SESAME_ORIGIN", defaultValue: "http://localhost:8080",
            help: "Public web origin; https turns on Secure __Host- cookies."
        ) { c, v throws(ConfigurationError) in c.origin = v },
        Setting(
            key: "relatedOrigins", flag: "--related-origins", environment: "SESAME_RELATED_ORIGINS",
            defaultValue: "(none)", help: "Comma-separated related web origins, listed in /.well-known/webauthn."
        ) { c, v throws(ConfigurationError) in c.relatedOrigins = list(v) },
        Setting(
            key: "nativeAppOrigins", flag: "--native-app-origins", environment: "SESAME_NATIVE_APP_ORIGINS",
            defaultValue: "(none)", help: "Comma-separated native app origins, e.g. android:apk-key-hash:<hash>."
        ) { c, v throws(ConfigurationError) in c.nativeAppOrigins = list(v) },
        Setting(
            key: "database", flag: "--database", environment: "SESAME_DATABASE", defaultValue: "sesame.sqlite",
            help: "SQLite file path (or sqlite:<path>) or postgres://user:pass@host:port/db.",
            secretURLPassword: true
        ) { c, v throws(ConfigurationError) in c.database = v },
        Setting(
            key: "appleAppIDs", flag: "--apple-app-ids", environment: "SESAME_APPLE_APP_IDS", defaultValue: "(none)",
            help: "Comma-separated TEAMID.bundle.id values for apple-app-site-association."
        ) { c, v throws(ConfigurationError) in c.appleAppIDs = list(v) },
        Setting(
            key: "androidApps", flag: "--android-apps", environment: "SESAME_ANDROID_APPS", defaultValue: "(none)",
            help:
                "package=FP[|FP],... for assetlinks.json (config file: list of (package_name, sha256_cert_fingerprints))."
        ) { c, v throws(ConfigurationError) in c.androidApps = try androidApps(v) },
        Setting(
            key: "challengeTimeout", flag: "--challenge-timeout", environment: "SESAME_CHALLENGE_TIMEOUT",
            defaultValue: "300", help: "Seconds a challenge, pending second step or SMS code lives."
        ) { c, v throws(ConfigurationError) in c.challengeTimeout = try int("challenge-timeout", v, 30...3600) },
        Setting(
            key: "sessionLifetime", flag: "--session-lifetime", environment: "SESAME_SESSION_LIFETIME",
            defaultValue: "1209600", help: "Seconds a session lives after sign-in."
        ) { c, v throws(ConfigurationError) in c.sessionLifetime = try int("session-lifetime", v, 60...31_536_000) },
        Setting(
            key: "reauthenticationWindow", flag: "--reauthentication-window",
            environment: "SESAME_REAUTHENTICATION_WINDOW", defaultValue: "600",
            help:
                "Seconds after sign-in or re-authentication during which sensitive account changes, an app's grant with offline_access and a device approval are allowed."
        ) { c, v throws(ConfigurationError) in
            c.reauthenticationWindow = try int("reauthentication-window", v, 30...86_400)
        },
        Setting(
            key: "trustForwardedFor", flag: "--trust-forwarded-for", environment: "SESAME_TRUST_FORWARDED_FOR",
            defaultValue: "false",
            help:
                "Take the client address from X-Forwarded-For, as your proxies appended it (only behind proxies you run)."
        ) { c, v throws(ConfigurationError) in c.trustForwardedFor = try bool("trust-forwarded-for", v) },
        Setting(
            key: "trustedProxyHops", flag: "--trusted-proxy-hops", environment: "SESAME_TRUSTED_PROXY_HOPS",
            defaultValue: "1",
            help:
                "Proxies you run in front of Sesame; the client address is the X-Forwarded-For entry this many places from the right."
        ) { c, v throws(ConfigurationError) in c.trustedProxyHops = try int("trusted-proxy-hops", v, 1...10) },
        Setting(
            key: "userVerification", flag: "--user-verification", environment: "SESAME_USER_VERIFICATION",
            defaultValue: "preferred",
            help:
                "preferred (a passkey sign-in without user verification is one factor) or required (refused without it)."
        ) { c, v throws(ConfigurationError) in
            guard ["preferred", "required"].contains(v) else {
                throw ConfigurationError("user-verification: expected preferred or required")
            }
            c.userVerification = v
        },
        Setting(
            key: "logLevel", flag: "--log-level", environment: "SESAME_LOG_LEVEL", defaultValue: "info",
            help: "trace, debug, info, notice, warning, error or critical."
        ) { c, v throws(ConfigurationError) in c.logLevel = v },
        Setting(
            key: "sealingKeyFile", flag: "--sealing-key-file", environment: "SESAME_SEALING_KEY_FILE",
            defaultValue: "(none)",
            help:
                "File of base64 256-bit keys (first one seals) for TOTP secrets and phone numbers; none: a key derived from the server secret in the database.",
            secret: true
        ) { c, v throws(ConfigurationError) in c.sealingKeyFile = v.isEmpty ? nil : v },
        Setting(
            key: "providerListFile", flag: "--provider-list-file", environment: "SESAME_PROVIDER_LIST_FILE",
            defaultValue: "(bundled)",
            help:
                "AAGUID list (aaguid.json format) naming passkey providers and their icons, replacing the bundled names."
        ) { c, v throws(ConfigurationError) in c.providerListFile = v.isEmpty ? nil : v },
        Setting(
            key: "cookieDomain", flag: "--cookie-domain", environment: "SESAME_COOKIE_DOMAIN", defaultValue: "(none)",
            help:
                "Parent domain of the origin's host that the session cookie is sent to (Domain=; __Secure- instead of __Host-), for forward auth on its subdomains."
        ) { c, v throws(ConfigurationError) in c.cookieDomain = v.isEmpty ? nil : v.lowercased() },
        Setting(
            key: "attestation", flag: "--attestation", environment: "SESAME_ATTESTATION", defaultValue: "none",
            help: "none, or direct: ask authenticators for attestation (checked against bundled anchors and metadata)."
        ) { c, v throws(ConfigurationError) in
            guard ["none", "direct"].contains(v) else { throw ConfigurationError("attestation: none or direct") }
            c.attestation = v
        },
        Setting(
            key: "registrationPolicyFile", flag: "--registration-policy-file",
            environment: "SESAME_REGISTRATION_POLICY_FILE", defaultValue: "(accept any)",
            help: "JSON registration policy (docs/attestation.md): formats, AAGUID lists, certification level, synced."
        ) { c, v throws(ConfigurationError) in c.registrationPolicyFile = v.isEmpty ? nil : v },
        Setting(
            key: "idleTimeout", flag: "--idle-timeout", environment: "SESAME_IDLE_TIMEOUT", defaultValue: "30",
            help:
                "Seconds a connection may send nothing complete (no request, an unfinished header, a stalled body) before it is closed."
        ) { c, v throws(ConfigurationError) in c.idleTimeout = try int("idle-timeout", v, 1...3600) },
        Setting(
            key: "requestTimeout", flag: "--request-timeout", environment: "SESAME_REQUEST_TIMEOUT",
            defaultValue: "10",
            help: "Seconds a request (head to end of body) may take to arrive in full; slower ones are disconnected."
        ) { c, v throws(ConfigurationError) in c.requestTimeout = try int("request-timeout", v, 1...600) },
        Setting(
            key: "maxConnections", flag: "--max-connections", environment: "SESAME_MAX_CONNECTIONS",
            defaultValue: "20000",
            help:
                "Open client connections at most; more wait in the listen backlog. Keep the file descriptor limit above it."
        ) { c, v throws(ConfigurationError) in c.maxConnections = try int("max-connections", v, 16...1_000_000) },
        Setting(
            key: "signInChallenges", flag: "--sign-in-challenges", environment: "SESAME_SIGN_IN_CHALLENGES",
            defaultValue: "auto",
            help:
                "sealed (the options step writes nothing), stored (a row per options request) or auto: sealed on SQLite, stored on PostgreSQL while nodes before 0.10.0 may serve."
        ) { c, v throws(ConfigurationError) in
            guard let mode = SignInChallenges(rawValue: v) else {
                throw ConfigurationError("sign-in-challenges: expected auto, sealed or stored")
            }
            c.signInChallenges = mode
        },
        Setting(
            key: "postgresConnections", flag: "--postgres-connections", environment: "SESAME_POSTGRES_CONNECTIONS",
            defaultValue: String(ServerConfiguration.defaultPostgresConnections),
            help:
                "PostgreSQL connections per event loop (one loop per core): the most statements a node runs at once is this times the cores."
        ) { c, v throws(ConfigurationError) in c.postgresConnections = try int("postgres-connections", v, 1...64) },
        Setting(
            key: "databaseTimeout", flag: "--database-timeout", environment: "SESAME_DATABASE_TIMEOUT",
            defaultValue: String(Int(ServerConfiguration.defaultDatabaseTimeout)),
            help:
                "Seconds PostgreSQL may take to give a connection, to open one and to answer each statement; past it the request answers 503 unavailable and the statement's connection is closed. /health waits half of it."
        ) { c, v throws(ConfigurationError) in
            guard let seconds = Double(v.trimmingCharacters(in: .whitespaces)), (0.1...60).contains(seconds) else {
                throw ConfigurationError("database-timeout: expected seconds in 0.1...60")
            }
            c.databaseTimeout = seconds
        },
        Setting(
            key: "taskExecutor", flag: "--task-executor", environment: "SESAME_TASK_EXECUTOR",
            defaultValue: "event-loops",
            help:
                "event-loops (request handlers run on the threads that read and write the sockets) or global (Swift's own thread pool, one hand-off there and back per request)."
        ) { c, v throws(ConfigurationError) in
            guard let choice = TaskExecutorChoice(rawValue: v) else {
                throw ConfigurationError("task-executor: expected event-loops or global")
            }
            c.taskExecutor = choice
        },
    ]

    /// Resolves the configuration: defaults, then the config file, then environment, then flags.
    /// - Parameters:
    ///   - flags: values given on the command line, by setting key.
    ///   - environment: the process environment (`SESAME_*` variables are read; `SESAME_CONFIG` names the file).
    ///   - configFile: path of a JSON config file given with `--config` (wins over `SESAME_CONFIG`).
    ///   - vocabulary: the settings table and the checks (`Vocabulary.server`).
    package static func resolve(
        flags: [String: String],
        environment: [String: String],
        configFile: String?,
        vocabulary: Vocabulary
    ) throws(ConfigurationError) -> ServerConfiguration {
        let settings = vocabulary.settings
        var configuration = ServerConfiguration()
        if let path = configFile ?? environment["SESAME_CONFIG"] {
            try configuration.apply(fileAt: path, vocabulary: vocabulary)
        }
        for setting in settings {
            if let value = environment[setting.environment] {
                try setting.apply(&configuration, value)
                configuration.settingSources[setting.key] = SettingSource(
                    value: value, source: "environment \(setting.environment)")
            }
        }
        for setting in settings {
            if let value = flags[setting.key] {
                try setting.apply(&configuration, value)
                configuration.settingSources[setting.key] = SettingSource(value: value, source: "flag \(setting.flag)")
            }
        }
        configuration.settingsResolved = true
        try configuration.validate(vocabulary: vocabulary)
        return configuration
    }

    /// Applies a JSON config file: an object whose keys are the setting keys. Lists are JSON arrays;
    /// `androidApps` is a list of `{package_name, sha256_cert_fingerprints}`; `clients` (the file only) declares
    /// OpenID Connect clients (`DeclaredClient`).
    package mutating func apply(fileAt path: String, vocabulary: Vocabulary) throws(ConfigurationError) {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ConfigurationError("config file \(path): cannot be read")
        }
        try apply(json: data, source: path, vocabulary: vocabulary)
    }

    package mutating func apply(json data: Data, source: String = "config", vocabulary: Vocabulary)
        throws(ConfigurationError)
    {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigurationError("\(source): expected a JSON object")
        }
        let known = Set(vocabulary.settings.map(\.key))
        for key in object.keys.sorted() where !known.contains(key) && key != "clients" {
            throw ConfigurationError("\(source): unknown setting \"\(key)\"")
        }
        if let declared = object["clients"] {
            guard let encoded = try? JSONSerialization.data(withJSONObject: declared),
                let clients = try? JSONDecoder().decode([DeclaredClient].self, from: encoded)
            else {
                throw ConfigurationError(
                    "\(source): clients must be a list of {id, name, redirectURIs, secretFile or public, ...}")
            }
            for client in clients { try client.validate() }
            guard Set(clients.map(\.id)).count == clients.count else {
                throw ConfigurationError("\(source): two clients have the same id")
            }
            self.clients = clients
        }
        func applied(_ setting: Setting, _ value: String) throws(ConfigurationError) {
            try setting.apply(&self, value)
            settingSources[setting.key] = SettingSource(value: value, source: "file \(source)")
        }
        for setting in vocabulary.settings {
            guard let value = object[setting.key] else { continue }
            switch value {
            case let structured where setting.takesJSON && (structured is [Any] || structured is [String: Any]):
                guard let text = try? JSONSerialization.data(withJSONObject: structured, options: [.sortedKeys]) else {
                    throw ConfigurationError("\(source): \(setting.key) is not JSON")
                }
                try applied(setting, String(decoding: text, as: UTF8.self))
            case let string as String:
                try applied(setting, string)
            case let number as NSNumber where ["true", "false"].contains(setting.defaultValue):
                try applied(setting, number.boolValue ? "true" : "false")
            case let number as NSNumber:
                try applied(setting, number.stringValue)
            case let strings as [String]:
                try applied(setting, strings.joined(separator: ","))
            case let apps as [Any] where setting.key == "androidApps":
                guard let encoded = try? JSONSerialization.data(withJSONObject: apps),
                    let decoded = try? JSONDecoder().decode([AndroidApp].self, from: encoded)
                else {
                    throw ConfigurationError(
                        "\(source): androidApps must be a list of {package_name, sha256_cert_fingerprints}")
                }
                self.androidApps = decoded
                settingSources[setting.key] = SettingSource(value: "\(decoded.count) apps", source: "file \(source)")
            default:
                throw ConfigurationError("\(source): \(setting.key) has the wrong type")
            }
        }
    }

    /// Checks values that each source may set independently but must agree: the core's rules here, then the checks
    /// each part declares (`Vocabulary.checks`).
    package func validate(vocabulary: Vocabulary) throws(ConfigurationError) {
        guard let url = URL(string: origin), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            let host = url.host?.lowercased(), url.path.isEmpty || url.path == "/", url.query == nil
        else { throw ConfigurationError("origin: expected scheme://host[:port], e.g. https://example.com") }
        let rp = rpID.lowercased()
        guard !rp.isEmpty, host == rp || host.hasSuffix("." + rp) else {
            throw ConfigurationError("rp-id: \(rpID) must equal the origin's host or be a suffix of it")
        }
        for related in relatedOrigins {
            guard let url = URL(string: related), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else {
                throw ConfigurationError("related-origins: \(related) is not a web origin")
            }
        }
        // What the relying party accepts is checked by building it, so nothing that passes here fails at start-up.
        _ = try relyingPartyConfiguration()
        _ = try DatabaseLocation(parsing: database)
        try validateCookieDomain(originHost: host)
        for rule in vocabulary.checks { try rule.check(self) }
    }

    /// The cookie domain is a plain DNS name: the origin's host or a parent of it.
    private func validateCookieDomain(originHost: String) throws(ConfigurationError) {
        if let cookieDomain {
            guard DomainName.isValid(cookieDomain), DomainName.covers(cookieDomain, host: originHost) else {
                throw ConfigurationError(
                    "cookie-domain: \(cookieDomain) must be the origin's host or a parent domain of it")
            }
        }
    }

    /// The relying party this configuration describes: RP ID, name, and every origin it accepts in client data
    /// (the web origin, related origins, Android app origins). `validate()` builds it, so a value the WebAuthn
    /// library refuses stops the configuration, not the start-up.
    public func relyingPartyConfiguration() throws(ConfigurationError) -> RelyingPartyConfiguration {
        for native in nativeAppOrigins where !native.hasPrefix("android:apk-key-hash:") {
            throw ConfigurationError("native-app-origins: \(native) is not android:apk-key-hash:<base64url SHA-256>")
        }
        var rp: RelyingPartyConfiguration
        do {
            rp = try RelyingPartyConfiguration(id: rpID, name: rpName, origins: [origin] + nativeAppOrigins)
            // Related origins (WebAuthn L3 "related origin requests", listed in /.well-known/webauthn) are other
            // sites that may use this RP ID, so they are outside it by design; the initialiser refuses such origins.
            rp.origins = try AllowedOrigins(allowedOrigins)
        } catch {
            throw ConfigurationError("origins: \(error.description)")
        }
        rp.userVerification = userVerification == "required" ? .required : .preferred
        rp.timeoutMilliseconds = UInt32(challengeTimeout) * 1000
        rp.attestation = attestation == "direct" ? .direct : .none
        if attestation == "direct" {
            do { rp.attestationTrust = AttestationTrust(formatAnchors: try TrustAnchors.bundled().formatAnchors) } catch
            {
                throw ConfigurationError("attestation: the bundled trust anchors cannot be read (\(error.code))")
            }
        }
        rp.registrationPolicy = try registrationPolicy()
        return rp
    }

    /// The registration policy of `registrationPolicyFile`, or `.acceptAny`.
    package func registrationPolicy() throws(ConfigurationError) -> RegistrationPolicy {
        guard let path = registrationPolicyFile else { return .acceptAny }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("registration-policy-file: \(path) cannot be read")
        }
        do { return try RegistrationPolicy(json: Array(data)) } catch {
            throw ConfigurationError("registration-policy-file: \(path): \(error.detail)")
        }
    }

    /// `host:port` as a listener address.
    package static func hostAndPort(_ value: String, key: String) throws(ConfigurationError) -> (
        host: String, port: Int
    ) {
        guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw ConfigurationError("\(key): expected host:port, e.g. 127.0.0.1:9090")
        }
        var host = String(value[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ConfigurationError("\(key): expected host:port, e.g. 127.0.0.1:9090") }
        return (host, port)
    }

    /// The settings table as Markdown (docs/configuration.md embeds it; a test keeps them equal).
    package static func markdownTable(for settings: [Setting]) -> String {
        var lines = [
            "| key (config file) | flag | environment | default | meaning |",
            "|---|---|---|---|---|",
        ]
        for s in settings {
            lines.append("| `\(s.key)` | `\(s.flag)` | `\(s.environment)` | `\(s.defaultValue)` | \(s.help) |")
        }
        return lines.joined(separator: "\n")
    }
}

extension ServerConfiguration {
    /// Reads setting flags from command-line words: `--flag value` or `--flag=value`, flags as in the settings table.
    /// Returns the values by setting key. An unknown flag, a flag without a value or a stray word is an error that
    /// names it (values are never echoed: a flag may carry a token).
    package static func flags(from words: [String], settings: [Setting]) throws(ConfigurationError) -> [String: String]
    {
        let byFlag = Dictionary(uniqueKeysWithValues: settings.map { ($0.flag, $0.key) })
        var values: [String: String] = [:]
        var index = 0
        while index < words.count {
            let word = words[index]
            guard word.hasPrefix("--") else { throw ConfigurationError("unexpected argument \"\(word.prefix(40))\"") }
            let flag: String
            let value: String
            if let equals = word.firstIndex(of: "=") {
                flag = String(word[..<equals])
                value = String(word[word.index(after: equals)...])
            } else {
                flag = word
                guard index + 1 < words.count else { throw ConfigurationError("\(flag) needs a value") }
                index += 1
                value = words[index]
            }
            guard let key = byFlag[flag] else {
                throw ConfigurationError("unknown option \(flag.prefix(40)) (sesame serve --help lists them)")
            }
            values[key] = value
            index += 1
        }
        return values
    }

    /// The settings as `--help` shows them: flag, environment variable, default and meaning, one per line.
    package static func helpText(for settings: [Setting]) -> String {
        settings.map { setting in
            "  \(setting.flag) <value>\n      \(setting.help) [\(setting.environment), default \(setting.defaultValue)]"
        }.joined(separator: "\n")
    }
}
