// swift-tools-version:6.1
// Benchmarks for Sesame, kept in a nested package so the main package does not depend on the benchmark harness.
// Run: cd Benchmarks && swift package benchmark   (or ./run-otp-vs-pyotp.sh for the pyotp comparison)
import PackageDescription

let package = Package(
    name: "SesameBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "sesame", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "OneTimeCodeBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "OneTimeCode", package: "sesame"),
            ],
            path: "Benchmarks/OneTimeCodeBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
