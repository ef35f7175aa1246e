import SesameCore

/// The passwords' part of the one database: the `passwords` table came with migration 1, the first schema, which
/// stays whole in the core's list as it landed; this part deletes an account's row with it.
package enum PasswordsSchema {
    package static let part = SchemaPart(name: "passwords", migrations: [], accountTables: ["passwords"])
}
