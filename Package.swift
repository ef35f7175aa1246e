// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// The commit the binary is built from, for `sesame --version`: scripts/release and scripts/test set SESAME_COMMIT
/// (`git rev-parse HEAD`, with `-dirty` when the work tree has changes). Anything else is ignored, so a plain
/// `swift build` says "commit unknown" instead of guessing; no git is needed when the binary runs.
let buildCommit: String? = {
    guard let value = Context.environment["SESAME_COMMIT"] else { return nil }
    let id = value.hasSuffix("-dirty") ? String(value.dropLast(6)) : value
    guard (7...64).contains(id.count), id.allSatisfy({ "0123456789abcdef".contains($0) }) else { return nil }
    return value
}()

let package = Package(
    name: "sesame",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CBOR", targets: ["CBOR"]),
        .library(name: "WebAuthn", targets: ["WebAuthn"]),
        .library(name: "OneTimeCode", targets: ["OneTimeCode"]),
        .library(name: "VirtualAuthenticator", targets: ["VirtualAuthenticator"]),
        .library(name: "Keychain", targets: ["Keychain"]),
        .library(name: "SMTP", targets: ["SMTP"]),
        .library(name: "SesameLanguage", targets: ["SesameLanguage"]),
        .executable(name: "sesame", targets: ["sesame"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
    ],
    targets: [
        .target(name: "CBOR", swiftSettings: strict),
        // Debian's SQLite (libsqlite3-dev to build, libsqlite3-0 to run), which the SQLite store opens and calls
        // itself (`SQLiteHandle`); the header adds the calls Swift cannot make (variadic configuration).
        .systemLibrary(name: "SystemSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // Small byte helpers written once for the libraries and the server: the constant-time compare, hex, JSON
        // string literals.
        // Not a product: other targets of this package use it through `package` access.
        .target(name: "SesameBytes", swiftSettings: strict),
        // The one message catalog (gettext files: messages.pot and a .po per language), plural rules, the choice
        // of a request's language. Pages, scripts, mails, the console and the extension read their words here.
        .target(name: "SesameLanguage", resources: [.copy("Resources")], swiftSettings: strict),
        .target(
            name: "SesameBuildInfo",
            cSettings: buildCommit.map { [.define("SESAME_COMMIT", to: "\"\($0)\"")] } ?? []
        ),
        .target(
            name: "WebAuthn",
            dependencies: [
                "CBOR", "SesameBytes",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("TrustAnchors")],
            swiftSettings: strict
        ),
        .target(
            name: "OneTimeCode",
            dependencies: ["SesameBytes", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // What an authenticator writes, written once for the two in the package (the keychain's and the virtual
        // one): credential keys and signatures, authenticator data, attestation objects, client data JSON.
        .target(
            name: "AuthenticatorSigning",
            dependencies: [
                "CBOR", "SesameBytes",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "VirtualAuthenticator",
            dependencies: [
                "AuthenticatorSigning", "CBOR", "SesameBytes", "WebAuthn",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Keychain",
            dependencies: [
                "AuthenticatorSigning", "CBOR", "SesameBytes", "WebAuthn", "OneTimeCode",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            // The EFF long word list for generated passphrases (NOTICE names its source and license).
            resources: [.copy("WordLists")],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "sesame",
            dependencies: [
                "CBOR", "SesameBytes", "WebAuthn", "OneTimeCode", "VirtualAuthenticator", "Keychain",
                "SesameBuildInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                "SesameServer", "SesameCore", "SesameWeb", "SesameMetadata", "SesameSecondFactors",
                "SesameIdentityProvider", "SesamePasswords", "SesamePasskeys", "SesameAccount",
                "SesameReauthentication", "SesameKeychainSync", "SesameForwardAuth", "SesameOperations", "SesameMail",
                "SesameInvitations", "SMTP", "SesameGroups", "SesameConsole", "SesameAdminTokens",
            ],
            swiftSettings: strict
        ),
        // Runs programs for the tests without Foundation's Process (Tests/Spawn/Spawn.swift says why).
        .target(name: "Spawn", path: "Tests/Spawn", swiftSettings: strict),
        .testTarget(name: "CBORTests", dependencies: ["CBOR"], swiftSettings: strict),
        .testTarget(name: "SesameBytesTests", dependencies: ["SesameBytes"], swiftSettings: strict),
        .testTarget(name: "SesameLanguageTests", dependencies: ["SesameLanguage"], swiftSettings: strict),
        // Checks on the repository itself (NOTICE and LICENSE), reading files from the source tree.
        .testTarget(name: "RepositoryTests", swiftSettings: strict),
        .testTarget(
            name: "WebAuthnTests",
            dependencies: ["WebAuthn", "CBOR", "SesameBytes", "VirtualAuthenticator"],
            resources: [.copy("Vectors")],
            swiftSettings: strict
        ),
        .testTarget(name: "OneTimeCodeTests", dependencies: ["OneTimeCode", "Spawn"], swiftSettings: strict),
        // A small, strict SMTP client (no Swift SMTP package is on the mirror): replies, MIME, STARTTLS/TLS, AUTH.
        .target(
            name: "SMTP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SMTPTests",
            dependencies: [
                "SMTP", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict),
        .testTarget(
            name: "KeychainTests",
            dependencies: [
                "Keychain", "WebAuthn", "CBOR", "OneTimeCode",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Vectors")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VirtualAuthenticatorTests",
            dependencies: ["VirtualAuthenticator", "WebAuthn", "CBOR"],
            swiftSettings: strict
        ),
        // The server's core: request contexts, sessions, ceremonies, rate limits, audit, settings, sealing, and the
        // store with its migration machinery. Features build on it; it imports none of them.
        .target(
            name: "SesameCore",
            dependencies: [
                "CBOR", "SesameBytes", "WebAuthn", "OneTimeCode", "Keychain", "SesameBuildInfo", "SesameLanguage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // MaximumAvailableConnections, for the server's connection limit.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                // SQLite's values, rows and dialect for sql-kit; the connections are `SystemSQLite`'s.
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                "SystemSQLite",
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // HTTP request parts, for the request deadline handler in the server's channel pipeline.
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // the server-rendered pages and static files (Resources/Web).
        .target(
            name: "SesameWeb",
            dependencies: [
                "SesameCore",
                "SesameBytes",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // the FIDO metadata in force and `sesame metadata`.
        .target(
            name: "SesameMetadata",
            dependencies: [
                "SesameCore",
                "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // TOTP, SMS and recovery codes: FactorVerifier and their routes.
        .target(
            name: "SesameSecondFactors",
            dependencies: [
                "SesameCore",
                "OneTimeCode",
                "SesameBytes",
                "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // the OpenID Connect provider.
        .target(
            name: "SesameIdentityProvider",
            dependencies: [
                "SesameCore",
                "SesameWeb",
                "SesameBytes",
                "WebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // JWS and JWK: the tokens the provider signs, clients' assertions it verifies, its JWKS.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // password sign-in and password changes.
        .target(
            name: "SesamePasswords",
            dependencies: [
                "SesameCore",
                "SesameSecondFactors",
                "SesameIdentityProvider",
                "SesameBytes",
                "WebAuthn",
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // passkey sign-up, sign-in and management; provider names (Resources/providers.json).
        .target(
            name: "SesamePasskeys",
            dependencies: [
                "SesameCore",
                "SesameMetadata",
                "AuthenticatorSigning",
                "SesameBytes",
                "WebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // the account document, sessions, signals, the data export.
        .target(
            name: "SesameAccount",
            dependencies: [
                "SesameCore",
                "SesameLanguage",
                "SesameEmail",
                "SesamePasskeys",
                "SesamePasswords",
                "SesameSecondFactors",
                "SesameIdentityProvider",
                "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // confirming the holder of a session again.
        .target(
            name: "SesameReauthentication",
            dependencies: [
                "SesameCore",
                "SesamePasskeys",
                "SesamePasswords",
                "SesameSecondFactors",
                "SesameBytes",
                "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // keychain devices and sync.
        .target(
            name: "SesameKeychainSync",
            dependencies: [
                "SesameCore",
                "SesamePasskeys",
                "Keychain",
                "SesameBytes",
                "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // mail delivery: the SMTP relay or the console as the outbox's transport, its settings, `sesame mail test`.
        .target(
            name: "SesameMail",
            dependencies: [
                "SesameCore", "SMTP",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // an email address per account: adding, verifying (code or link), changing and removing it.
        .target(
            name: "SesameEmail",
            dependencies: [
                "SesameCore", "SesameMail", "SMTP", "SesameBytes", "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // sign-up by invitation: single-use links with their groups, mailed through the outbox; `sesame invites`.
        .target(
            name: "SesameInvitations",
            dependencies: [
                "SesameCore", "SesameEmail", "SesameBytes", "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // groups and memberships (`sesame groups`, the admin API), and the `groups` scope's claims.
        .target(
            name: "SesameGroups",
            dependencies: [
                "SesameCore", "SesameIdentityProvider", "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // admin API tokens (`sesame admin-tokens`, the gate's `AdminTokenCheck`) and the audit log's admin API.
        .target(
            name: "SesameAdminTokens",
            dependencies: [
                "SesameCore", "SesameBytes", "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // The operators' console: its pages and scripts (`Resources/Console`), over the admin API that each
        // feature registers behind the core's admin gate.
        .target(
            name: "SesameConsole",
            dependencies: [
                "SesameCore", "SesameWeb", "SesameBytes",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // reverse-proxy sign-in.
        .target(
            name: "SesameForwardAuth",
            dependencies: [
                "SesameCore",
                "SesameIdentityProvider",
                "SesameWeb",
                "WebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // health, metrics, serving the API document (its parts: each target's Resources/openapi.yaml), admin commands,
        // backups.
        .target(
            name: "SesameOperations",
            dependencies: [
                "SesameCore",
                "SesameEmail",
                "SesameGroups",
                "SesameAccount",
                "SesameIdentityProvider",
                "SesamePasskeys",
                "SesamePasswords",
                "SesameBytes",
                "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        // The composition root: `buildApplication` builds the core and every feature, registers their routes and
        // background services.
        .target(
            name: "SesameServer",
            dependencies: [
                "SesameCore", "SesameWeb", "SesameMetadata", "SesameSecondFactors", "SesameIdentityProvider",
                "SesamePasswords", "SesamePasskeys", "SesameAccount", "SesameReauthentication", "SesameKeychainSync",
                "SesameForwardAuth", "SesameOperations", "SesameMail", "SesameEmail", "SesameInvitations",
                "SesameGroups", "SesameConsole", "SesameAdminTokens",
                "WebAuthn",
                .product(name: "Hummingbird", package: "hummingbird"),
                // MaximumAvailableConnections, for the server's connection limit.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SesameServerTests",
            dependencies: [
                "SesameServer", "SesameCore", "SesameWeb", "SesameMetadata", "SesameSecondFactors",
                "SesameIdentityProvider", "SesamePasswords", "SesamePasskeys", "SesameAccount",
                "SesameReauthentication", "SesameKeychainSync", "SesameForwardAuth", "SesameOperations", "SesameBytes",
                "SesameEmail", "SesameMail", "SesameInvitations", "SesameGroups", "SesameConsole", "SesameAdminTokens",
                "WebAuthn",
                "OneTimeCode",
                "VirtualAuthenticator", "Keychain", "Spawn",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: strict
        ),
    ]
)
