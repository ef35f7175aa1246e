import SesameAccount
import SesameAdminTokens
import SesameConsole
import SesameCore
import SesameEmail
import SesameGroups
import SesameIdentityProvider
import SesameInvitations
import SesameKeychainSync
import SesameMetadata
import SesameOperations
import SesamePasskeys
import SesamePasswords
import SesameSecondFactors

/// The one database: the core's part and each feature's that owns its tables, in one numbered sequence
/// (`DatabaseSchema` refuses a number used twice).
package enum ServerSchema {
    package static let full = DatabaseSchema([
        Migrations.core, PasskeysSchema.part, PasswordsSchema.part, SecondFactorsSchema.part,
        IdentityProviderSchema.part,
        KeychainSyncSchema.part, MetadataSchema.part, EmailSchema.part, GroupsSchema.part, InvitationsSchema.part,
        ConsoleSchema.part, AdminTokensSchema.part, PeopleSchema.part, AccountSchema.part,
    ])
}
