import Foundation
import SQLKit
import SesameCore

/// The language each person chose on their account page, this feature's part of the one database (migration 25):
/// one row per account that saved a choice (a tag of the catalog's shipped languages), none for "the browser's
/// choice". Deleting the account removes it.
package enum AccountSchema {
    package static let part = SchemaPart(
        name: "account",
        migrations: [
            Migration(
                version: 25,
                name: "account: the language each person saved",
                statements: [
                    """
                    CREATE TABLE account_languages (
                        user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                        tag TEXT NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """
                ]
            )
        ],
        accountTables: ["account_languages"])
}

/// The saved language choices.
package protocol AccountLanguageStore: Sendable {
    /// The tag `userID` saved, or nil.
    func savedLanguage(userID: String) async throws -> String?
    /// Saves `tag` for `userID`, or removes the choice when nil; false when the account does not exist.
    func setLanguage(userID: String, _ tag: String?, at: Date) async throws -> Bool
}

extension SQLStore: AccountLanguageStore {
    package func savedLanguage(userID: String) async throws -> String? {
        try await db.raw("SELECT tag FROM account_languages WHERE user_id = \(bind: userID)").first()
            .map { try $0.decode(column: "tag", as: String.self) }
    }

    package func setLanguage(userID: String, _ tag: String?, at: Date) async throws -> Bool {
        try await engine.withTransaction { db in
            guard
                !(try await db.raw("SELECT id FROM users WHERE id = \(bind: userID)").all()).isEmpty
            else { return false }
            if let tag {
                try await db.raw(
                    """
                    INSERT INTO account_languages (user_id, tag, updated_at)
                    VALUES (\(bind: userID), \(bind: tag), \(bind: at.milliseconds))
                    ON CONFLICT (user_id) DO UPDATE SET tag = excluded.tag, updated_at = excluded.updated_at
                    """
                ).run()
            } else {
                try await db.raw("DELETE FROM account_languages WHERE user_id = \(bind: userID)").run()
            }
            return true
        }
    }
}

/// The saved choices as the core reads them (`ServerCore.languages`: pages, mails, the `locale` claim).
package struct StoredLanguagePreferences: LanguagePreferences {
    package let store: any AccountLanguageStore

    package init(store: any AccountLanguageStore) { self.store = store }

    package func savedLanguage(of userID: String) async throws -> String? {
        try await store.savedLanguage(userID: userID)
    }
}
