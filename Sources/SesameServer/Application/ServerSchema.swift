import SesameCore
import SesameKeychainSync
import SesameMetadata

/// The one database: the core's part and each feature's that owns its tables, in one numbered sequence
/// (`DatabaseSchema` refuses a number used twice).
package enum ServerSchema {
    package static let full = DatabaseSchema([Migrations.core, KeychainSyncSchema.part, MetadataSchema.part])
}
