import Foundation
import Hummingbird
import NIOCore
import SesameCore

/// `/health`, `/metrics`, `/openapi.yaml` and the well-known files.
package struct OperationalRoutes {
    package let sesame: ServerCore

    package init(sesame: ServerCore) {
        self.sesame = sesame
    }

    package func register(on router: Router<SesameRequestContext>) {
        // PostgreSQL: within a deadline of its own, shorter than a request's, so a silent database (not one that
        // refuses connections) cannot hold the probe until it returns. SQLite is a local file: its waits are its
        // busy timeout's, and a slow answer there means a busy machine, not an unreachable database.
        var healthLimit: TimeAmount? = nil
        if case .postgres = try? DatabaseLocation(parsing: sesame.configuration.database) {
            healthLimit = DatabaseDeadline(seconds: sesame.configuration.databaseTimeout).healthLimit
        }
        router.get("/health") { [healthLimit] _, _ -> EditedResponse<Health> in
            do {
                let store = sesame.store
                if let healthLimit {
                    try await DatabaseDeadline.first(within: healthLimit, stage: .check) { try await store.ping() }
                } else {
                    try await store.ping()
                }
                // A full disk: reads work, writes answer 503 storage_full until space returns.
                if sesame.store.storageFull {
                    return EditedResponse(response: Health(status: "degraded", database: "full"))
                }
                return EditedResponse(response: Health(status: "ok", database: "ok"))
            } catch {
                sesame.logger.warning("health check: database unreachable")
                return EditedResponse(
                    status: .serviceUnavailable, response: Health(status: "unavailable", database: "unreachable"))
            }
        }

        // Metrics are served here only behind their token (see `MetricsEndpoint`).
        if let token = sesame.configuration.metricsToken {
            router.get("/metrics") { request, context -> Response in
                do {
                    return try MetricsEndpoint.response(
                        to: request, address: context.clientAddress, now: sesame.clock.now(), metrics: sesame.metrics,
                        token: token, guesses: sesame.metricsGuesses)
                } catch var error as APIError {
                    error.wwwAuthenticate = "Bearer"
                    throw error
                }
            }
        }

        router.get("/openapi.yaml") { _, _ -> Response in
            guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml", subdirectory: "Resources"),
                let data = try? Data(contentsOf: url)
            else { throw APIError.notFound }
            return Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: data))
            )
        }

        let configuration = sesame.configuration
        router.get("/.well-known/apple-app-site-association") { _, _ in
            wellKnown(AppleAppSiteAssociation(webcredentials: .init(apps: configuration.appleAppIDs)))
        }
        router.get("/.well-known/assetlinks.json") { _, _ in
            wellKnown(configuration.androidApps.map(AssetLink.init))
        }
        router.get("/.well-known/passkey-endpoints") { _, _ in
            wellKnown([
                "enroll": configuration.origin + "/account#passkeys",
                "manage": configuration.origin + "/account#passkeys",
            ])
        }
        router.get("/.well-known/webauthn") { _, _ in
            wellKnown(["origins": [configuration.origin] + configuration.relatedOrigins])
        }
        router.get("/.well-known/change-password") { _, _ -> Response in
            Response(status: .found, headers: [.location: "/account#password"])
        }
    }

    /// Well-known files are public and cacheable for an hour.
    private func wellKnown<Value: Encodable & Sendable>(_ value: Value) -> EditedResponse<JSONBody<Value>> {
        EditedResponse(headers: [.cacheControl: "public, max-age=3600"], response: JSONBody(value))
    }
}

/// `GET /health`.
package struct Health: ResponseEncodable, Sendable {
    package let status: String
    package let database: String
}

/// `/.well-known/apple-app-site-association`: the webcredentials section only.
package struct AppleAppSiteAssociation: Codable, Sendable {
    package struct Apps: Codable, Sendable { package let apps: [String] }
    package let webcredentials: Apps
}

/// One Digital Asset Links statement per Android app: passkeys/passwords sharing and app links.
package struct AssetLink: Codable, Sendable {
    package struct Target: Codable, Sendable {
        package let namespace: String
        package let package_name: String
        package let sha256_cert_fingerprints: [String]
    }
    package let relation: [String]
    package let target: Target

    package init(_ app: ServerConfiguration.AndroidApp) {
        relation = ["delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls"]
        target = Target(
            namespace: "android_app", package_name: app.packageName,
            sha256_cert_fingerprints: app.sha256CertFingerprints)
    }
}
