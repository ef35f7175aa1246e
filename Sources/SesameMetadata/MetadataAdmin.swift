import Foundation
import WebAuthn
import X509
import SesameCore

/// `sesame metadata import` and `sesame metadata show`: the operator brings a FIDO metadata BLOB they downloaded
/// (Sesame fetches nothing); it is verified here, then stored for every node to load.
public struct MetadataAdmin: Sendable {
    package let store: any AuditStore & MetadataStore

    package init(store: any AuditStore & MetadataStore) { self.store = store }

    public struct MetadataImport: Sendable {
        public var jwt: String
        /// PEM roots to verify against instead of the bundled FIDO root (the conformance tools sign with their own).
        public var rootsPEM: [String] = []
        /// PEM CRLs to check the signer's chain against.
        public var crlsPEM: [String] = []
        public var time = Date()
        /// Import a BLOB whose `nextUpdate` has passed (for test BLOBs; a production BLOB that old is out of date).
        public var allowStale = false

        public init(jwt: String) { self.jwt = jwt }
    }

    /// What an import came to.
    package struct Imported: Sendable {
        package let number: Int
        package let entries: Int
        package let nextUpdate: String
    }

    public func importMetadata(_ request: MetadataImport) async throws -> [String] {
        let imported = try await importBLOB(request, by: .commandLine)
        return [
            "metadata BLOB \(imported.number) imported: \(imported.entries) entries, next update \(imported.nextUpdate)",
            "running servers load it within a minute",
        ]
    }

    /// Verifies a BLOB (signature, chain to the roots, CRLs, `nextUpdate`, newer than the one held) and stores it
    /// with the audit event naming `actor`, in one transaction; a refusal is an `AdminError` and stores nothing.
    package func importBLOB(_ request: MetadataImport, by actor: AdminActor) async throws -> Imported {
        var roots: [Certificate] = []
        var rootsPEM = request.rootsPEM.joined(separator: "\n")
        do {
            if request.rootsPEM.isEmpty {
                roots = try TrustAnchors.bundled().metadataRoots
                rootsPEM = try roots.map { try $0.serializeAsPEM().pemString }.joined(separator: "\n")
            } else {
                roots = try AttestationTrust.certificates(fromPEM: rootsPEM)
            }
        } catch {
            throw AdminError(description: "metadata roots: \(error)")
        }
        var crls: [CertificateRevocationList] = []
        for pem in request.crlsPEM {
            do { crls += try CertificateRevocationList.lists(fromPEM: pem) } catch {
                throw AdminError(description: "metadata CRL: \(error.detail)")
            }
        }
        let held = try await store.latestMetadataNumber()
        let blob: MetadataBLOB
        let index: MetadataIndex
        do {
            blob = try await MetadataBLOB.verify(
                request.jwt, roots: roots, crls: crls, time: request.time, enforceNextUpdate: !request.allowStale,
                newerThan: held)
            index = try MetadataIndex(blob)
        } catch {
            throw AdminError(description: "the metadata BLOB is refused: \(error)")
        }
        let now = Date()
        do {
            try await store.addMetadataBLOB(
                StoredMetadataBLOB(
                    number: blob.number, jwt: request.jwt, rootsPEM: rootsPEM, verifiedAt: request.time,
                    importedAt: now),
                audit: actor.event(.metadataImported, subject: nil, detail: "\(blob.number)", at: now))
        } catch StoreError.conflict {
            throw AdminError(description: "a metadata BLOB numbered \(blob.number) is already imported")
        }
        return Imported(number: blob.number, entries: index.entries.count, nextUpdate: "\(blob.nextUpdate)")
    }

    public func showMetadata() async throws -> [String] {
        guard let stored = try await store.latestMetadataBLOB() else { return ["no metadata imported"] }
        let index: MetadataIndex
        do { index = try await MetadataService.index(stored) } catch {
            throw AdminError(description: "the stored metadata BLOB \(stored.number) no longer verifies: \(error)")
        }
        let dates = Date.ISO8601FormatStyle()
        return [
            "number: \(stored.number)", "next update: \(index.nextUpdate)", "entries: \(index.entries.count)",
            "verified at: \(stored.verifiedAt.formatted(dates))", "imported at: \(stored.importedAt.formatted(dates))",
        ]
    }
}
