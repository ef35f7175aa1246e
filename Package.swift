// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "sesame",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CBOR", targets: ["CBOR"]),
        .library(name: "WebAuthn", targets: ["WebAuthn"]),
        .library(name: "OneTimeCode", targets: ["OneTimeCode"]),
        .library(name: "VirtualAuthenticator", targets: ["VirtualAuthenticator"]),
        .executable(name: "sesame", targets: ["sesame"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(name: "CBOR", swiftSettings: strict),
        .target(
            name: "WebAuthn",
            dependencies: [
                "CBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "OneTimeCode",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .target(
            name: "VirtualAuthenticator",
            dependencies: [
                "CBOR", "WebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "sesame",
            dependencies: [
                "CBOR", "WebAuthn", "OneTimeCode", "VirtualAuthenticator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "CBORTests", dependencies: ["CBOR"], swiftSettings: strict),
        .testTarget(
            name: "WebAuthnTests",
            dependencies: ["WebAuthn", "CBOR", "VirtualAuthenticator"],
            resources: [.copy("Vectors")],
            swiftSettings: strict
        ),
        .testTarget(name: "OneTimeCodeTests", dependencies: ["OneTimeCode"], swiftSettings: strict),
        .testTarget(
            name: "VirtualAuthenticatorTests",
            dependencies: ["VirtualAuthenticator", "WebAuthn", "CBOR"],
            swiftSettings: strict
        ),
    ]
)
