import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesamePasskeys

/// Provider names from the bundled list (`Resources/providers.json`: names only), icons from a deployment's own list
/// (`providerListFile`), and `GET /providers/{aaguid}/icon`.
@Suite struct ProviderIconTests {
    /// The bundled file read independently of `AuthenticatorProviders`: AAGUID → entry.
    static func bundledList() throws -> [String: [String: String]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Sources/SesamePasskeys/Resources/providers.json")
        let data = try Data(contentsOf: url)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: String]])
    }

    static let apple = "fbfc3007-154e-4ecc-8c0b-6e020557d7bd"

    /// Every entry is a name, and nothing else: the project ships no provider's icon (their marks, and the list
    /// they come from carries no license).
    @Test func theBundledListNamesProvidersWithoutIcons() throws {
        let list = try Self.bundledList()
        #expect(list.count >= 40)
        #expect(ProviderNames.bundled.count == list.count)
        for (key, entry) in list {
            #expect(Array(entry.keys) == ["name"], "\(key)")
            let provider = try #require(ProviderNames.provider(for: key, in: ProviderNames.bundled), "\(key)")
            #expect(provider.name == entry["name"])
            #expect(provider.lightIcon == nil && provider.darkIcon == nil)
            #expect(ProviderNames.iconPath(for: key, in: ProviderNames.bundled) == nil)
        }
        #expect(ProviderNames.provider(for: Self.apple, in: ProviderNames.bundled)?.name == "Apple Passwords")
        // The canonical form only.
        #expect(ProviderNames.provider(for: Self.apple.uppercased(), in: ProviderNames.bundled) == nil)
    }

    @Test func iconsAreServedFromThisOriginWithASandbox() async throws {
        let path = try ProviderFixture.file()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await TestServer(.sqlite) { $0.providerListFile = path }.app().test(.router) { client in
            for (query, svg) in [
                ("", ProviderFixture.light), ("?theme=light", ProviderFixture.light),
                ("?theme=dark", ProviderFixture.dark),
            ] {
                let answer = try await client.execute(
                    uri: "/providers/\(ProviderFixture.aaguid)/icon\(query)", method: .get)
                #expect(answer.status == .ok)
                #expect(answer.headers[.contentType] == "image/svg+xml")
                #expect(answer.headers[.xContentTypeOptions] == "nosniff")
                #expect(
                    answer.headers[.contentSecurityPolicy] == "default-src 'none'; style-src 'unsafe-inline'; sandbox")
                #expect(answer.headers[.cacheControl] == "public, max-age=604800")
                #expect(String(buffer: answer.body) == svg, "\(query)")
            }
            // The bundled list has no icons: a named provider's icon is not found.
            let named = try await client.execute(uri: "/providers/\(Self.apple)/icon", method: .get)
            #expect(named.status == .notFound)
        }
    }

    @Test(arguments: [
        ("/providers/\(ProviderFixture.aaguid)/icon?theme=sepia", HTTPResponse.Status.badRequest, "invalid_theme"),
        ("/providers/\(apple)/icon", .notFound, "not_found"),
        ("/providers/\(apple.uppercased())/icon", .notFound, "not_found"),
        ("/providers/00000000-0000-0000-0000-000000000000/icon", .notFound, "not_found"),
        ("/providers/11111111-2222-3333-4444-555555555555/icon", .notFound, "not_found"),
        ("/providers/fbfc3007154e4ecc8c0b6e020557d7bd----/icon", .notFound, "not_found"),
        ("/providers/+bfc3007-154e-4ecc-8c0b-6e020557d7bd/icon", .notFound, "not_found"),
        ("/providers/..%2F..%2Fetc%2Fpasswd/icon", .notFound, "not_found"),
        ("/providers/x/icon", .notFound, "not_found"),
    ])
    func badRequestsGetJSONErrors(_ uri: String, _ status: HTTPResponse.Status, _ code: String) async throws {
        let path = try ProviderFixture.file()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await TestServer(.sqlite) { $0.providerListFile = path }.app().test(.router) { client in
            let answer = try await client.json(uri)
            #expect(answer.status == status)
            #expect(answer.errorCode == code)
            #expect(answer.headers[.contentType]?.hasPrefix("application/json") == true)
        }
    }

    /// A deployment's own list (`providerListFile`) replaces the bundled one: its names and icons are served, the
    /// bundled entries are gone.
    @Test func aProviderListFileReplacesTheBundledList() async throws {
        let aaguid = "0ea242b4-43c4-4a1b-8b17-dd6d0b6baec6"
        let svg =
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#2a6"/></svg>"##
        let list = [
            aaguid: [
                "name": "Example Keys",
                "icon_light": "data:image/svg+xml;base64,\(Data(svg.utf8).base64EncodedString())",
            ]
        ]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sesame-providers-\(UUID().uuidString).json"
        ).path
        try JSONSerialization.data(withJSONObject: list).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let loaded = try ProviderNames.load(path)
        #expect(loaded.count == 1)
        #expect(ProviderNames.provider(for: aaguid, in: loaded)?.name == "Example Keys")
        #expect(ProviderNames.iconPath(for: aaguid, in: loaded) == "/providers/\(aaguid)/icon")

        try await TestServer(.sqlite) { $0.providerListFile = path }.app().test(.router) { client in
            let icon = try await client.execute(uri: "/providers/\(aaguid)/icon?theme=dark", method: .get)
            #expect(icon.status == .ok)
            #expect(icon.headers[.contentType] == "image/svg+xml")
            #expect(String(buffer: icon.body) == svg)  // no dark icon: the light one
            let bundledOnly = try await client.execute(uri: "/providers/\(Self.apple)/icon", method: .get)
            #expect(bundledOnly.status == .notFound)
        }
    }

    /// A list that cannot be read or is not a provider list stops the start with a message naming the file.
    @Test func aBadProviderListFileStopsTheStart() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sesame-providers-\(UUID().uuidString).json"
        ).path
        try Data("[1, 2, 3]".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(
            throws: ConfigurationError("providerListFile: \(path) is not an AAGUID provider list (invalidProviderList)")
        ) {
            try ProviderNames.load(path)
        }
        await #expect(throws: ConfigurationError.self) {
            _ = try await TestServer(.sqlite) { $0.providerListFile = path }.app()
        }
        #expect(throws: ConfigurationError("providerListFile: cannot read /nonexistent/aaguid.json")) {
            try ProviderNames.load("/nonexistent/aaguid.json")
        }
        let resolved = try ServerConfiguration.resolve(
            flags: [:], environment: ["SESAME_PROVIDER_LIST_FILE": "/etc/aaguid.json"], configFile: nil)
        #expect(resolved.providerListFile == "/etc/aaguid.json")
        #expect(ServerConfiguration().providerListFile == nil)
    }
}
