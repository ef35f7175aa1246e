import SQLKit
import SesameCore

/// The people search's part of the one database (migration 24): indexes only, so the console's search by
/// username, display name or email prefix reads an index range on both engines at any number of accounts.
///
/// The search compares bytes (`PeopleStore.searchPeople`): on PostgreSQL under `COLLATE "C"`, whatever the
/// database's collation, so a prefix is one contiguous range of the index; SQLite compares bytes already
/// (`BINARY`), so its existing unique indexes on `users.username_key` and `email_addresses.address_key` serve, and
/// only the lower-cased display name needs one. Indexes alone: nodes of earlier versions keep working
/// (`SchemaChange.expand`).
package enum PeopleSchema {
    package static let part = SchemaPart(
        name: "people",
        migrations: [
            Migration(
                version: 24, name: "indexes for the people search: username, display name and email prefixes",
                statements: [],
                transform: { db, _ in
                    let statements: [SQLQueryString] =
                        db.dialect.name == "postgresql"
                        ? [
                            #"CREATE INDEX users_username_key_c ON users (username_key COLLATE "C")"#,
                            #"CREATE INDEX users_display_name_c ON users ((lower(display_name)) COLLATE "C")"#,
                            #"CREATE INDEX email_addresses_key_c ON email_addresses (address_key COLLATE "C")"#,
                        ]
                        : ["CREATE INDEX users_display_name_lower ON users (lower(display_name))"]
                    for statement in statements { try await db.raw(statement).run() }
                })
        ],
        accountTables: [])
}
