import Foundation
import Hummingbird
import NIOCore
import WebAuthn
import SesameCore
import SesameBytes

/// Passkey providers by AAGUID: names and icons, read with the WebAuthn library's `AuthenticatorProviders`, which
/// keeps only icons that are safe to serve. By default the list is `Resources/providers.json`: provider names by
/// AAGUID (facts, with their source in NOTICE) and no icons; `providerListFile` replaces it with a deployment's own
/// list, icons included (for example the community list, whose files carry no license and so are not shipped).
package enum ProviderNames {
    /// The bundled list.
    package static let bundled: AuthenticatorProviders = {
        guard let url = Bundle.module.url(forResource: "providers", withExtension: "json", subdirectory: "Resources"),
            let data = try? Data(contentsOf: url), let table = try? AuthenticatorProviders(json: [UInt8](data))
        else { return AuthenticatorProviders() }
        return table
    }()

    /// The list a deployment names, or the bundled one. A file that cannot be read or is not a provider list
    /// stops the start with a message naming the file (its content is not echoed).
    package static func load(_ path: String?) throws(ConfigurationError) -> AuthenticatorProviders {
        guard let path else { return bundled }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("providerListFile: cannot read \(path)")
        }
        do {
            return try AuthenticatorProviders(json: [UInt8](data))
        } catch {
            throw ConfigurationError("providerListFile: \(path) is not an AAGUID provider list (\(error.code))")
        }
    }

    /// `aaguid` in canonical form (lower-case 8-4-4-4-12), as `uuidString` gives it; nil for anything else.
    package static func provider(for aaguid: String, in providers: AuthenticatorProviders) -> AuthenticatorProvider? {
        guard let parsed = AAGUID(uuidString: aaguid), parsed.uuidString == aaguid else { return nil }
        return providers[parsed]
    }

    /// Where this origin serves the provider's icon, when the list has one.
    package static func iconPath(for aaguid: String, in providers: AuthenticatorProviders) -> String? {
        guard let provider = provider(for: aaguid, in: providers), provider.lightIcon != nil || provider.darkIcon != nil
        else { return nil }
        return "/providers/\(provider.aaguid.uuidString)/icon"
    }

    /// 16 bytes as a lower-case UUID string; nil for any other length or the all-zero AAGUID.
    package static func uuidString(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 16, bytes.contains(where: { $0 != 0 }) else { return nil }
        let hex = Hex.encode(bytes)
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
            hex.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }
}

/// `GET /providers/{aaguid}/icon?theme=light|dark`: a provider's icon, public (the list is public data), from this
/// origin so that pages need no `data:` or third-party image source. An SVG could carry script if opened as a
/// document: the CSP forbids every fetch and script and sandboxes it, and the type is never sniffed.
package struct ProviderIconRoutes {
    package let sesame: ServerCore

    package init(sesame: ServerCore) {
        self.sesame = sesame
    }

    package func register(on router: Router<SesameRequestContext>) {
        router.get("/providers/{aaguid}/icon") { request, context -> Response in
            let text = try context.parameters.require("aaguid")
            guard let provider = ProviderNames.provider(for: text, in: sesame.providers) else {
                throw APIError.notFound
            }
            let icon: ProviderIcon?
            switch request.uri.queryParameters.get("theme") {
            case nil, "light": icon = provider.lightIcon ?? provider.darkIcon
            case "dark": icon = provider.darkIcon ?? provider.lightIcon
            default: throw APIError.invalidField(.invalidTheme, "Use theme=light or theme=dark.")
            }
            guard let icon else { throw APIError.notFound }
            let headers: HTTPFields = [
                .contentType: icon.mediaType.rawValue,
                .xContentTypeOptions: "nosniff",
                .cacheControl: "public, max-age=604800",
                .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; sandbox",
                .init("Cross-Origin-Resource-Policy")!: "same-origin",
            ]
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: icon.bytes)))
        }
    }
}

extension AuthenticatorProviders {
    /// The provider list Sesame ships (`Resources/providers.json`), for tools outside the server (`sesame inspect`).
    public static var sesameBundled: AuthenticatorProviders { ProviderNames.bundled }
}
