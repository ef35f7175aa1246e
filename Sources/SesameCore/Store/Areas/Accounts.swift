import Foundation
import SQLKit

/// A user account. `usernameKey` (see `Usernames.key`) is the case-folded form that is unique.
public struct User: Sendable, Equatable, Codable {
    public var id: String
    public var username: String
    public var displayName: String
    /// WebAuthn user handle: 64 random bytes, never derived from the username.
    public var userHandle: [UInt8]
    public var disabled: Bool
    public var createdAt: Date

    public init(id: String, username: String, displayName: String, userHandle: [UInt8], disabled: Bool, createdAt: Date)
    {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.userHandle = userHandle
        self.disabled = disabled
        self.createdAt = createdAt
    }
}

/// Accounts: created with their first way in, found by id or username, disabled, renamed, deleted.
public protocol AccountStore {
    /// Creates an account alone (no way in yet); `StoreError.conflict` when the username is taken.
    func createUser(_ user: User) async throws
    func user(id: String) async throws -> User?
    func user(usernameKey: String) async throws -> User?
    func users() async throws -> [User]
    /// Disabling also ends every session and revokes every OAuth grant of the account, in the same transaction.
    /// False when there is no such user.
    func setDisabled(userID: String, _ disabled: Bool, at: Date) async throws -> Bool
    /// False when there is no such user.
    /// Sets the display name and when the profile changed (`updated_at`, the identity provider's `updated_at` claim).
    func setDisplayName(userID: String, _ displayName: String, at: Date) async throws -> Bool
    /// The account and everything that belongs to it, in one transaction. False when there is no such user.
    func deleteUser(id: String) async throws -> Bool
}

extension SQLStore: AccountStore {
    package static let userColumns: SQLQueryString = "id, username, display_name, user_handle, disabled, created_at"

    /// A `users` row (column names as in `userColumns`).
    package struct UserRow: Decodable {
        /// Column names spelled out: a key strategy converts every name again for every row (a few per cent of a sign-in).
        package enum CodingKeys: String, CodingKey {
            case id, username, displayName = "display_name", userHandle = "user_handle", disabled,
                createdAt = "created_at"
        }

        package let id: String
        package let username: String
        package let displayName: String
        package let userHandle: Data
        package let disabled: Int64
        package let createdAt: Int64

        package var user: User {
            User(
                id: id, username: username, displayName: displayName, userHandle: [UInt8](userHandle),
                disabled: disabled != 0,
                createdAt: Date(milliseconds: createdAt))
        }
    }

    package static func user(_ row: any SQLRow, prefix: String? = nil) throws -> User {
        try row.decode(model: UserRow.self, prefix: prefix).user
    }

    package static func userInsert(_ user: User) -> SQLQueryString {
        """
        INSERT INTO users (id, username, username_key, display_name, user_handle, disabled, created_at)
        VALUES (\(bind: user.id), \(bind: user.username), \(bind: Usernames.key(user.username)), \(bind: user.displayName),
                \(bind: Data(user.userHandle)), \(bind: user.disabled.column), \(bind: user.createdAt.milliseconds))
        """
    }

    public func createUser(_ user: User) async throws {
        try await insert(Self.userInsert(user))
    }

    public func user(id: String) async throws -> User? {
        try await db.raw("SELECT \(Self.userColumns) FROM users WHERE id = \(bind: id)").first().map {
            try Self.user($0)
        }
    }

    public func user(usernameKey: String) async throws -> User? {
        // Stored keys come from validated usernames, which never hold control characters; PostgreSQL refuses
        // NUL in text outright, so such a lookup answers "no such user" without asking the database.
        guard !usernameKey.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return nil
        }
        return try await db.raw("SELECT \(Self.userColumns) FROM users WHERE username_key = \(bind: usernameKey)")
            .first().map { try Self.user($0) }
    }

    public func users() async throws -> [User] {
        try await db.raw("SELECT \(Self.userColumns) FROM users ORDER BY username_key").all().map { try Self.user($0) }
    }

    public func setDisabled(userID: String, _ disabled: Bool, at: Date) async throws -> Bool {
        try await engine.withTransaction { [self] db in try await setDisabled(userID: userID, disabled, at: at, in: db)
        }
    }

    /// As `setDisabled(userID:_:at:)`, inside the caller's transaction `db` (an operator's change with its audit
    /// event and its checks).
    package func setDisabled(userID: String, _ disabled: Bool, at: Date, in db: any SQLDatabase) async throws -> Bool {
        let rows = try await db.raw(
            "UPDATE users SET disabled = \(bind: disabled.column) WHERE id = \(bind: userID) RETURNING id"
        ).all()
        if disabled, !rows.isEmpty {
            try await db.raw("DELETE FROM sessions WHERE user_id = \(bind: userID)").run()
            try await schema.sessionsEnded(userID: userID, db, at: at)
        }
        return !rows.isEmpty
    }

    public func setDisplayName(userID: String, _ displayName: String, at: Date) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE users SET display_name = \(bind: displayName), updated_at = \(bind: at.milliseconds)
            WHERE id = \(bind: userID) RETURNING id
            """
        ).all()).isEmpty
    }

    public func deleteUser(id: String) async throws -> Bool {
        try await engine.withTransaction { [self] db in try await deleteUser(id: id, in: db) }
    }

    /// As `deleteUser(id:)`, inside the caller's transaction `db`.
    package func deleteUser(id: String, in db: any SQLDatabase) async throws -> Bool {
        // Children first: SQLite enforces ON DELETE CASCADE only with foreign_keys on, which is per connection.
        for table in schema.accountTables {
            try await db.raw("DELETE FROM \(ident: table) WHERE user_id = \(bind: id)").run()
        }
        return !(try await db.raw("DELETE FROM users WHERE id = \(bind: id) RETURNING id").all()).isEmpty
    }
}
