import Foundation
import SQLKit
import SesameCore

/// A FIDO metadata BLOB as the operator imported it: the JWT, the roots it was verified against (PEM), and when.
public struct StoredMetadataBLOB: Sendable, Equatable {
    /// The BLOB's serial number (`no`); each import must be newer than the last.
    public var number: Int
    public var jwt: String
    public var rootsPEM: String
    /// The time its signature chain was verified at (certificates are checked against it again when a server loads
    /// it, so an import stays usable after its signer's certificate expires).
    public var verifiedAt: Date
    public var importedAt: Date

    package init(number: Int, jwt: String, rootsPEM: String, verifiedAt: Date, importedAt: Date) {
        self.number = number
        self.jwt = jwt
        self.rootsPEM = rootsPEM
        self.verifiedAt = verifiedAt
        self.importedAt = importedAt
    }
}

/// Imported metadata BLOBs; the newest is the one in force on every node.
public protocol MetadataStore: Sendable {
    /// Stores a BLOB; `StoreError.conflict` when one with the same number is stored.
    func addMetadataBLOB(_ blob: StoredMetadataBLOB, audit: AuditEvent?) async throws
    func latestMetadataBLOB() async throws -> StoredMetadataBLOB?
    /// The number of the newest BLOB, cheaply (servers poll it to reload without a restart).
    func latestMetadataNumber() async throws -> Int?
}

extension SQLStore: MetadataStore {
    public func addMetadataBLOB(_ b: StoredMetadataBLOB, audit: AuditEvent?) async throws {
        do {
            try await engine.withTransaction { db in
                try await db.raw(
                    """
                    INSERT INTO metadata_blobs (number, jwt, roots, verified_at, imported_at) VALUES (\(bind: Int64(b.number)),
                        \(bind: b.jwt), \(bind: b.rootsPEM), \(bind: b.verifiedAt.milliseconds), \(bind: b.importedAt.milliseconds))
                    """
                ).run()
                if let audit { try await db.raw(Self.auditInsert(audit)).run() }
            }
        } catch  where Self.isUniqueViolation(error) {
            throw StoreError.conflict
        }
    }

    public func latestMetadataBLOB() async throws -> StoredMetadataBLOB? {
        try await db.raw(
            "SELECT number, jwt, roots, verified_at, imported_at FROM metadata_blobs ORDER BY number DESC LIMIT 1"
        ).first().map { row in
            StoredMetadataBLOB(
                number: Int(try row.decode(column: "number", as: Int64.self)),
                jwt: try row.decode(column: "jwt", as: String.self),
                rootsPEM: try row.decode(column: "roots", as: String.self),
                verifiedAt: Date(milliseconds: try row.decode(column: "verified_at", as: Int64.self)),
                importedAt: Date(milliseconds: try row.decode(column: "imported_at", as: Int64.self)))
        }
    }

    public func latestMetadataNumber() async throws -> Int? {
        try await db.raw("SELECT MAX(number) AS number FROM metadata_blobs").first()
            .flatMap { try $0.decode(column: "number", as: Int64?.self) }.map(Int.init)
    }
}
