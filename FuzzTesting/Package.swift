// swift-tools-version:5.4
// libFuzzer targets over Sesame's parsers of untrusted bytes. Build and run with ./run (see README.md).
import Foundation
import PackageDescription

// A path dependency's identity is its directory name, which differs between clones.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "sesame-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(name: "FuzzCBOR", dependencies: [.product(name: "CBOR", package: root)]),
        .executableTarget(
            name: "FuzzAuthenticatorData",
            dependencies: [.product(name: "WebAuthn", package: root), .product(name: "CBOR", package: root)]
        ),
        .executableTarget(name: "FuzzFastJSON", dependencies: [.product(name: "WebAuthn", package: root)]),
        .executableTarget(name: "FuzzProviderIcon", dependencies: [.product(name: "WebAuthn", package: root)]),
        .executableTarget(
            name: "FuzzAttestationObject",
            dependencies: [.product(name: "WebAuthn", package: root), .product(name: "CBOR", package: root)]
        ),
        .executableTarget(name: "FuzzTPM", dependencies: [.product(name: "WebAuthn", package: root)]),
        .executableTarget(name: "FuzzAndroidKeyDescription", dependencies: [.product(name: "WebAuthn", package: root)]),
        .executableTarget(name: "FuzzJWS", dependencies: [.product(name: "WebAuthn", package: root)]),
        .executableTarget(name: "FuzzMetadata", dependencies: [.product(name: "WebAuthn", package: root)]),
        .executableTarget(name: "FuzzVaultFile", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzSyncMessage", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzPublicSuffixList", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzCXF", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzNativeMessage", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzDeflate", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzBitwarden", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzKeePassXC", dependencies: [.product(name: "Keychain", package: root)]),
        .executableTarget(name: "FuzzSMTPReply", dependencies: [.product(name: "SMTP", package: root)]),
        .executableTarget(name: "FuzzPortableObject", dependencies: [.product(name: "SesameLanguage", package: root)]),
        .executableTarget(name: "FuzzLanguageChoice", dependencies: [.product(name: "SesameLanguage", package: root)]),
    ]
)
