// swift-tools-version: 6.1
// Benchmarks for Sesame, a package of its own so the root package does not depend on the benchmark tooling.
// Run from this directory: `swift package benchmark` (or `--target WebAuthnVerify` / `--target OneTimeCodeBenchmarks`);
// ./run-otp-vs-pyotp.sh compares one-time codes with pyotp in the same run.
import PackageDescription

// SwiftPM names a path dependency after its directory, so the root package's identity is the name of the
// directory this package sits in (the checkout's name), not "sesame".
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map { String($0).lowercased() } ?? "sesame"

let package = Package(
    name: "sesame-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "WebAuthnVerify",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "WebAuthn", package: root),
                .product(name: "VirtualAuthenticator", package: root),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Benchmarks/WebAuthnVerify",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "AttestationVerify",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "WebAuthn", package: root),
                .product(name: "CBOR", package: root),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/AttestationVerify",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "OneTimeCodeBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "OneTimeCode", package: root),
            ],
            path: "Benchmarks/OneTimeCodeBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "KeychainBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Keychain", package: root),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Benchmarks/KeychainBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Not a package-benchmark target (those live in Benchmarks/): a plain executable that scripts/bench-server
        // runs for the raw ES256 verify rate on all cores. Build: swift build -c release --product ES256VerifyThroughput
        .executableTarget(
            name: "ES256VerifyThroughput",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "Tools/ES256VerifyThroughput"
        ),
        // The floor under Sesame's requests: Hummingbird with none of Sesame's middleware, sessions or database, and
        // the same JSON decoding of a sign-in body. scripts/bench-server --mode http runs it beside `sesame serve`.
        // Build: swift build -c release --product BareHTTP
        .executableTarget(
            name: "BareHTTP",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "WebAuthn", package: root),
            ],
            path: "Tools/BareHTTP"
        ),
    ]
)
