import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import WebAuthn

@testable import SesameServer

/// Provider names and icons from the shipped community AAGUID list (`Resources/aaguids`), and
/// `GET /providers/{aaguid}/icon`.
@Suite struct ProviderIconTests {
    /// The shipped file read independently of `AuthenticatorProviders`: AAGUID → entry.
    static func shippedList() throws -> [String: [String: String]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/SesameServer/Resources/aaguids/aaguid.json")
        let data = try Data(contentsOf: url)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: String]])
    }

    static func decodedIcon(_ uri: String?) -> [UInt8]? {
        guard let uri, let comma = uri.firstIndex(of: ",") else { return nil }
        return Data(base64Encoded: String(uri[uri.index(after: comma)...])).map { [UInt8]($0) }
    }

    static let apple = "fbfc3007-154e-4ecc-8c0b-6e020557d7bd"

    @Test func theShippedListLoadsWithItsIcons() throws {
        let list = try Self.shippedList()
        #expect(list.count >= 40)
        // Every entry of this commit is well-formed and its SVG icons pass the checks, so all are kept.
        #expect(ProviderNames.providers.count == list.count)
        for (key, entry) in list {
            let provider = try #require(ProviderNames.provider(for: key), "\(key)")
            #expect(provider.name == entry["name"]?.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(provider.lightIcon?.bytes == Self.decodedIcon(entry["icon_light"]), "\(key)")
            #expect(provider.darkIcon?.bytes == Self.decodedIcon(entry["icon_dark"]), "\(key)")
            #expect(provider.lightIcon.map { $0.bytes.count <= ProviderIcon.defaultMaxBytes } ?? true)
        }
        #expect(ProviderNames.name(for: Self.apple) == "Apple Passwords")
        #expect(ProviderNames.provider(for: Self.apple.uppercased()) == nil)  // canonical form only
    }

    @Test func iconsAreServedFromThisOriginWithASandbox() async throws {
        // A provider whose light and dark icons differ, so the theme is seen to choose.
        let list = try Self.shippedList()
        let (aaguid, entry) = try #require(list.sorted { $0.key < $1.key }.first { $0.value["icon_light"] != $0.value["icon_dark"] && $0.value["icon_dark"] != nil })
        try await TestServer(.sqlite).app().test(.router) { client in
            for (query, key) in [("", "icon_light"), ("?theme=light", "icon_light"), ("?theme=dark", "icon_dark")] {
                let answer = try await client.execute(uri: "/providers/\(aaguid)/icon\(query)", method: .get)
                #expect(answer.status == .ok)
                #expect(answer.headers[.contentType] == "image/svg+xml")
                #expect(answer.headers[.xContentTypeOptions] == "nosniff")
                #expect(answer.headers[.contentSecurityPolicy] == "default-src 'none'; style-src 'unsafe-inline'; sandbox")
                #expect(answer.headers[.cacheControl] == "public, max-age=604800")
                #expect([UInt8](answer.body.readableBytesView) == Self.decodedIcon(entry[key]), "\(query)")
            }
        }
    }

    @Test(arguments: [
        ("/providers/\(apple)/icon?theme=sepia", HTTPResponse.Status.badRequest, "invalid_theme"),
        ("/providers/\(apple.uppercased())/icon", .notFound, "not_found"),
        ("/providers/00000000-0000-0000-0000-000000000000/icon", .notFound, "not_found"),
        ("/providers/11111111-2222-3333-4444-555555555555/icon", .notFound, "not_found"),
        ("/providers/fbfc3007154e4ecc8c0b6e020557d7bd----/icon", .notFound, "not_found"),
        ("/providers/+bfc3007-154e-4ecc-8c0b-6e020557d7bd/icon", .notFound, "not_found"),
        ("/providers/..%2F..%2Fetc%2Fpasswd/icon", .notFound, "not_found"),
        ("/providers/x/icon", .notFound, "not_found"),
    ])
    func badRequestsGetJSONErrors(_ uri: String, _ status: HTTPResponse.Status, _ code: String) async throws {
        try await TestServer(.sqlite).app().test(.router) { client in
            let answer = try await client.json(uri)
            #expect(answer.status == status)
            #expect(answer.errorCode == code)
            #expect(answer.headers[.contentType]?.hasPrefix("application/json") == true)
        }
    }
}
