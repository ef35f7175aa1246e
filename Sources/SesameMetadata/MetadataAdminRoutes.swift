import Foundation
import Hummingbird
import SesameCore
import WebAuthn

/// Which roots a BLOB given to the admin API is verified against: the bundled FIDO root unless `rootsPEM` names
/// others (tests give the example BLOB's root), whether a passed `nextUpdate` is let by, and the time to verify at
/// (test BLOBs only).
package struct MetadataTrust: Sendable {
    package var rootsPEM: [String] = []
    package var allowStale = false
    /// Verify as of this time instead of now (a test BLOB's certificates are valid in their own past).
    package var time: Date?

    package init(rootsPEM: [String] = [], allowStale: Bool = false, time: Date? = nil) {
        self.rootsPEM = rootsPEM
        self.allowStale = allowStale
        self.time = time
    }

    /// The bundled FIDO root, `nextUpdate` enforced.
    package static let bundled = MetadataTrust()
}

/// The admin JSON API for FIDO metadata (`/api/admin/metadata`, scope `metadata`), in the OpenAPI document; the
/// console's Metadata page calls it. An upload is verified by `MetadataAdmin`, as `sesame metadata import` does, and
/// stored with its audit event (naming the admin) in one transaction; a BLOB that fails any check is
/// `metadata_refused` and nothing is stored.
package struct MetadataAdminRoutes: Sendable {
    package let sesame: ServerCore
    package let admin: MetadataAdmin
    package let trust: MetadataTrust

    package init(sesame: ServerCore, store: any AuditStore & MetadataStore, trust: MetadataTrust = .bundled) {
        self.sesame = sesame
        self.admin = MetadataAdmin(store: store)
        self.trust = trust
    }

    package static let scope = AdminScope("metadata")
    /// A BLOB is a few megabytes (MDS3's was about 5 MB in 2025); the upload route reads up to this.
    package static let maxBLOBBytes = 32 * 1024 * 1024

    package struct BLOBBody: ResponseEncodable, Sendable {
        package let number: Int
        package let nextUpdate: String
        package let entries: Int
        package let verifiedAt: Date
        package let importedAt: Date
    }

    package struct MetadataBody: ResponseEncodable, Sendable {
        /// The BLOB in force; nil when none was imported.
        package let blob: BLOBBody?
    }

    package struct Upload: Decodable, Sendable { package let blob: String }

    private func current() async throws -> MetadataBody {
        guard let stored = try await admin.store.latestMetadataBLOB() else { return MetadataBody(blob: nil) }
        let index = try await MetadataService.index(stored)
        return MetadataBody(
            blob: BLOBBody(
                number: stored.number, nextUpdate: index.nextUpdate, entries: index.entries.count,
                verifiedAt: stored.verifiedAt, importedAt: stored.importedAt))
    }

    /// Registers the routes on the admin API's group (`/api/admin`, behind `AdminMiddleware`).
    package func register(admin group: RouterGroup<AdminRequestContext>) {
        group.get("metadata") { _, context in
            try context.admin.require(Self.scope)
            return try await current()
        }
        group.post("metadata") { request, context in
            try context.admin.require(Self.scope)
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: Self.maxBLOBBytes) } catch {
                throw APIError(.contentTooLarge, .metadataRefused, "A metadata BLOB is at most 32 MB.")
            }
            guard let upload = try? JSONDecoder().decode(Upload.self, from: Data(buffer.readableBytesView)) else {
                throw APIError(.badRequest, .metadataRefused, "Send {\"blob\": \"<the BLOB's JWT>\"}.")
            }
            var importing = MetadataAdmin.MetadataImport(
                jwt: upload.blob.trimmingCharacters(in: .whitespacesAndNewlines))
            importing.rootsPEM = trust.rootsPEM
            importing.allowStale = trust.allowStale
            importing.time = trust.time ?? sesame.now
            do {
                _ = try await admin.importBLOB(importing, by: context.actor)
            } catch let error as AdminError {
                throw APIError(.badRequest, .metadataRefused, error.message)
            }
            return EditedResponse(status: .created, response: try await current())
        }
    }
}
