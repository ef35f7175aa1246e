import Foundation
import Hummingbird
import WebAuthn

/// Signed-in passkey management: list, rename, delete, and the Signal API payloads a page sends after changes
/// (`PublicKeyCredential.signalAllAcceptedCredentials` / `signalCurrentUserDetails`).
struct PasskeyManagementRoutes {
    let sesame: Sesame

    struct PasskeyBody: Codable, Sendable {
        /// Credential ID, base64url.
        let id: String
        let name: String
        /// Provider name from the AAGUID when known (e.g. "Google Password Manager").
        let provider: String?
        /// Same-origin path of the provider's icon (`/providers/{aaguid}/icon`, add `?theme=dark` for dark
        /// backgrounds); absent when the provider or its icon is unknown.
        let providerIcon: String?
        let aaguid: String?
        let createdAt: Date
        let lastUsedAt: Date?
        /// BE flag: the credential may be synced.
        let backupEligible: Bool
        /// BS flag: the credential is synced (backed up).
        let backedUp: Bool
        let transports: [String]

        init(_ c: StoredCredential, providers: AuthenticatorProviders) {
            id = Base64URL.encode(c.id)
            name = c.name
            aaguid = c.aaguid.flatMap(ProviderNames.uuidString)
            provider = aaguid.flatMap { ProviderNames.provider(for: $0, in: providers)?.name }
            providerIcon = aaguid.flatMap { ProviderNames.iconPath(for: $0, in: providers) }
            createdAt = c.createdAt
            lastUsedAt = c.lastUsedAt
            backupEligible = c.backupEligible
            backedUp = c.backedUp
            transports = c.transports
        }
    }

    struct RenameBody: Decodable, Sendable { let name: String }

    /// What the page passes to the Signal API (WebAuthn Level 3 §5.1.10), with the user ID in base64url.
    struct SignalsBody: Codable, Sendable {
        struct AllAccepted: Codable, Sendable {
            let rpId: String
            let userId: String
            let allAcceptedCredentialIds: [String]
        }
        struct CurrentUser: Codable, Sendable {
            let rpId: String
            let userId: String
            let name: String
            let displayName: String
        }
        let allAcceptedCredentials: AllAccepted
        let currentUserDetails: CurrentUser
    }

    struct Status: Codable, Sendable { let status: String }

    func register(on router: Router<SesameRequestContext>) {
        router.get("/api/account/passkeys") { _, context -> JSONResponse<[PasskeyBody]> in
            let auth = try context.requireAuthentication()
            return JSONResponse(try await sesame.store.credentials(userID: auth.user.id).map { PasskeyBody($0, providers: sesame.providers) })
        }

        router.patch("/api/account/passkeys/{id}") { request, context -> JSONResponse<Status> in
            let auth = try context.requireAuthentication()
            let id = try credentialID(context)
            let body = try await JSONBody.decode(RenameBody.self, from: request, context: context)
            guard let name = PasskeyRoutes.shownName(body.name) else {
                throw APIError.invalidField("name", "Give a name of 1 to 64 characters.")
            }
            guard try await sesame.store.renameCredential(userID: auth.user.id, id: id, name: name) else { throw APIError.notFound }
            await sesame.audit("passkey.renamed", "success", user: auth.user, context: context)
            return JSONResponse(Status(status: "renamed"))
        }

        router.delete("/api/account/passkeys/{id}") { _, context -> JSONResponse<Status> in
            let auth = try context.requireRecentAuthentication(sesame)
            let id = try credentialID(context)
            switch try await sesame.store.deleteCredential(userID: auth.user.id, id: id) {
            case .removed:
                await sesame.audit("passkey.removed", "success", user: auth.user, context: context)
                return JSONResponse(Status(status: "removed"))
            case .notFound: throw APIError.notFound
            case .lastWayIn: throw APIError.lastWayIn
            }
        }

        // Provider icons, public (the list is public data), from this origin so that pages need no `data:` or
        // third-party image source. An SVG could carry script if opened as a document: the CSP forbids every
        // fetch and script and sandboxes it, and the type is never sniffed.
        router.get("/providers/{aaguid}/icon") { request, context -> Response in
            let text = try context.parameters.require("aaguid")
            guard let provider = ProviderNames.provider(for: text, in: sesame.providers) else { throw APIError.notFound }
            let icon: ProviderIcon?
            switch request.uri.queryParameters.get("theme") {
            case nil, "light": icon = provider.lightIcon ?? provider.darkIcon
            case "dark": icon = provider.darkIcon ?? provider.lightIcon
            default: throw APIError.invalidField("theme", "Use theme=light or theme=dark.")
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

        router.get("/api/account/signals") { _, context -> JSONResponse<SignalsBody> in
            let auth = try context.requireAuthentication()
            let user = auth.user
            let ids = try await sesame.store.credentials(userID: user.id).map { Base64URL.encode($0.id) }
            let userID = Base64URL.encode(user.userHandle)
            let rp = sesame.configuration.rpID
            return JSONResponse(
                SignalsBody(
                    allAcceptedCredentials: .init(rpId: rp, userId: userID, allAcceptedCredentialIds: ids),
                    currentUserDetails: .init(rpId: rp, userId: userID, name: user.username, displayName: user.displayName)
                )
            )
        }
    }

    private func credentialID(_ context: SesameRequestContext) throws -> [UInt8] {
        let text = try context.parameters.require("id")
        guard text.utf8.count <= 1400, let id = try? Base64URL.decode(text), !id.isEmpty else {
            throw APIError.invalidField("credential_id", "The credential ID is not base64url.")
        }
        return id
    }
}

/// Passkey providers by AAGUID: names and icons, read with the WebAuthn library's `AuthenticatorProviders`, which
/// keeps only icons that are safe to serve. By default the list is `Resources/providers.json`: provider names by
/// AAGUID (facts, with their source in NOTICE) and no icons; `providerListFile` replaces it with a deployment's own
/// list, icons included (for example the community list, whose files carry no license and so are not shipped).
enum ProviderNames {
    /// The bundled list.
    static let bundled: AuthenticatorProviders = {
        guard let url = Bundle.module.url(forResource: "providers", withExtension: "json", subdirectory: "Resources"),
            let data = try? Data(contentsOf: url), let table = try? AuthenticatorProviders(json: [UInt8](data))
        else { return AuthenticatorProviders() }
        return table
    }()

    /// The list a deployment names, or the bundled one. A file that cannot be read or is not a provider list
    /// stops the start with a message naming the file (its content is not echoed).
    static func load(_ path: String?) throws(ConfigurationError) -> AuthenticatorProviders {
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
    static func provider(for aaguid: String, in providers: AuthenticatorProviders) -> AuthenticatorProvider? {
        guard let parsed = AAGUID(uuidString: aaguid), parsed.uuidString == aaguid else { return nil }
        return providers[parsed]
    }

    /// Where this origin serves the provider's icon, when the list has one.
    static func iconPath(for aaguid: String, in providers: AuthenticatorProviders) -> String? {
        guard let provider = provider(for: aaguid, in: providers), provider.lightIcon != nil || provider.darkIcon != nil else { return nil }
        return "/providers/\(provider.aaguid.uuidString)/icon"
    }

    /// 16 bytes as a lower-case UUID string; nil for any other length or the all-zero AAGUID.
    static func uuidString(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 16, bytes.contains(where: { $0 != 0 }) else { return nil }
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}
