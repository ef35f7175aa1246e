import SesameCore

/// The passkeys' part of the one database: the `credentials` table came with migration 1, the first schema, which
/// stays whole in the core's list as it landed; this part deletes an account's passkeys with it.
package enum PasskeysSchema {
    package static let part = SchemaPart(
        name: "passkeys", migrations: [], accountTables: ["credentials"],
        sqliteOnOpen: SQLStore.sqliteSignInStatements)
}

/// What the passkey feature reads and writes: accounts, sessions and challenges from the core's store, and passkeys.
package typealias PasskeyStorage = CredentialStore & NoticedCredentialChanges & Store
