import Foundation
import Hummingbird
import NIOCore
import SesameCore

/// `/health`, `/metrics`, `/openapi.yaml` and the well-known files.
package struct OperationalRoutes {
    package let sesame: ServerCore
    /// The outbox `/health` and `/metrics` report on.
    package let outbox: any OutboxStore
    /// Mail older than this, still not sent, makes `/health` say `mail: delayed`.
    package let mailDelayedAfter: TimeInterval
    /// The API document served at `/openapi.yaml`, assembled by the composition root from every part
    /// (`APIDocument.server`).
    package let apiDocument: String

    package init(sesame: ServerCore, outbox: any OutboxStore, mailDelayedAfter: TimeInterval, apiDocument: String) {
        self.sesame = sesame
        self.outbox = outbox
        self.mailDelayedAfter = mailDelayedAfter
        self.apiDocument = apiDocument
    }

    package func register(on router: Router<SesameRequestContext>) {
        // PostgreSQL: within a deadline of its own, shorter than a request's, so a silent database (not one that
        // refuses connections) cannot hold the probe until it returns. SQLite is a local file: its waits are its
        // busy timeout's, and a slow answer there means a busy machine, not an unreachable database.
        var healthLimit: TimeAmount? = nil
        if case .postgres = try? DatabaseLocation(parsing: sesame.configuration.database) {
            healthLimit = DatabaseDeadline(seconds: sesame.configuration.databaseTimeout).healthLimit
        }
        let outbox = self.outbox
        let delayedAfter = mailDelayedAfter
        router.get("/health") { [healthLimit] _, _ -> EditedResponse<Health> in
            do {
                let store = sesame.store
                let now = sesame.clock.now()
                let state: OutboxState
                if let healthLimit {
                    state = try await DatabaseDeadline.first(within: healthLimit, stage: .check) {
                        try await store.ping()
                        return try await outbox.outboxState(now: now)
                    }
                } else {
                    try await store.ping()
                    state = try await outbox.outboxState(now: now)
                }
                // Mail waiting long (the relay down or refusing with 4xx) is reported, but the node still serves:
                // 200, status `degraded`, so a liveness probe does not restart it for a relay's fault.
                let age = state.oldest.map { max(0, now.timeIntervalSince($0)) } ?? 0
                let mail = MailHealth(
                    status: age > delayedAfter ? "delayed" : "ok", depth: state.depth, oldestSeconds: Int(age))
                // A full disk: reads work, writes answer 503 storage_full until space returns.
                if sesame.store.storageFull {
                    return EditedResponse(response: Health(status: "degraded", database: "full", mail: mail))
                }
                return EditedResponse(
                    response: Health(status: mail.status == "ok" ? "ok" : "degraded", database: "ok", mail: mail))
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
                    return try await MetricsEndpoint.response(
                        to: request, address: context.clientAddress, now: sesame.clock.now(), metrics: sesame.metrics,
                        token: token, guesses: sesame.metricsGuesses, outbox: outbox)
                } catch var error as APIError {
                    error.wwwAuthenticate = "Bearer"
                    throw error
                }
            }
        }

        let document = ByteBuffer(string: apiDocument)
        router.get("/openapi.yaml") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: document))
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
    /// Absent when the database is unreachable.
    package var mail: MailHealth? = nil
}

/// The outbox in `GET /health`: `delayed` once the oldest mail not yet sent is older than the threshold.
package struct MailHealth: Codable, Sendable {
    package let status: String
    /// Mails neither sent nor given up, on every node.
    package let depth: Int
    /// Age of the oldest of them, 0 when there is none.
    package let oldestSeconds: Int

    enum CodingKeys: String, CodingKey {
        case status, depth
        case oldestSeconds = "oldest_seconds"
    }
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
