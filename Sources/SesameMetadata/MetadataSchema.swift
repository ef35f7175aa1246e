import SesameCore

/// The FIDO metadata BLOBs the operator imports, this feature's part of the one database (migration 10). They
/// belong to no account.
package enum MetadataSchema {
    package static let part = SchemaPart(
        name: "metadata",
        migrations: [
            Migration(
                version: 10,
                name: "FIDO metadata BLOBs imported by the operator",
                statements: [
                    """
                    CREATE TABLE metadata_blobs (
                        number BIGINT PRIMARY KEY,
                        jwt TEXT NOT NULL,
                        roots TEXT NOT NULL,
                        verified_at BIGINT NOT NULL,
                        imported_at BIGINT NOT NULL
                    )
                    """
                ]
            )
        ],
        accountTables: [])
}
