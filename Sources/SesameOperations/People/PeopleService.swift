import Foundation
import SQLKit
import SesameCore
import SesameEmail
import SesameGroups
import SesameIdentityProvider
import SesamePasskeys
import SesameSecondFactors
import WebAuthn

/// The rules of operators' changes to people's accounts, once for the command line (`sesame users`, through
/// `Admin`) and the admin API (`PeopleAdminRoutes`): find the account, refuse what must not happen with a typed
/// `APIError`, and make each change in one transaction with its audit event naming the operator or admin and the
/// last-administrator rule (`AccountGroups.keepingAnAdministrator`: nobody can lock everyone out).
package struct PeopleService: Sendable {
    package let store: SQLStore
    package let groups: any AccountGroups
    package let administrators: AdministratorRule
    package let clock: ServerClock

    package init(store: SQLStore, groups: any AccountGroups, adminGroup: String, clock: ServerClock = .system) {
        self.store = store
        self.groups = groups
        self.administrators = AdministratorRule(groups: groups, adminGroup: adminGroup)
        self.clock = clock
    }

    /// The longest prefix searched for, in characters.
    package static let longestPrefix = 128
    /// The largest page.
    package static let largestPage = 100

    /// A page of the search and the cursor of the next one (nil on the last page).
    package struct Page: Sendable {
        package let people: [PersonRow]
        package let next: String?
    }

    /// Accounts whose username, display name or email starts with `prefix` (any case), `limit` at a time after
    /// `cursor` (the `next` of the page before: opaque to the caller).
    package func search(_ prefix: String, cursor: String?, limit: Int) async throws -> Page {
        let prefix = prefix.trimmingCharacters(in: .whitespacesAndNewlines)
        guard prefix.count <= Self.longestPrefix,
            !prefix.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError(
                .badRequest, .badRequest, "Search for at most \(Self.longestPrefix) characters, with no control ones.")
        }
        guard (1...Self.largestPage).contains(limit) else {
            throw APIError(.badRequest, .badRequest, "A page holds 1 to \(Self.largestPage) people.")
        }
        var after: String?
        if let cursor, !cursor.isEmpty {
            guard let bytes = try? Base64URL.decode(cursor), bytes.count <= 1024,
                let key = String(validating: bytes, as: UTF8.self),
                !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { throw APIError(.badRequest, .badRequest, "That page cursor is not one this server gave.") }
            after = key
        }
        // One more than asked says whether a next page exists.
        let rows = try await store.searchPeople(prefix: prefix, after: after, limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let next = rows.count > limit ? page.last.map { Base64URL.encode(Array($0.usernameKey.utf8)) } : nil
        return Page(people: page, next: next)
    }

    /// An account by id or username (any case), or 404 `account_not_found`.
    package func account(_ reference: String) async throws -> User {
        if let user = try await store.user(id: reference) { return user }
        if reference.count <= 64, let user = try await store.user(usernameKey: Usernames.key(reference)) { return user }
        throw APIError(.notFound, .accountNotFound, "No account \"\(reference.prefix(64))\".")
    }

    /// `body` (false: nothing changed) with its audit event and the rule, in one transaction.
    private func change(
        _ user: User, _ kind: AuditKind, by actor: AdminActor, detail: String = "",
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Bool
    ) async throws -> Bool {
        try await store.peopleChange(
            rule: administrators, audit: actor.event(kind, subject: user, detail: detail, at: clock.now())
        ) { db in try await body(db) ? true : nil } ?? false
    }

    /// Disables the account: its sessions end and its apps' grants are revoked in the same transaction; then the
    /// apps that registered for back-channel logout are told (found first, while their grants are live).
    @discardableResult
    package func disable(_ reference: String, by actor: AdminActor, logout: BackChannelLogout?) async throws
        -> (user: User, appsTold: Int)
    {
        var user = try await account(reference)
        let clients = try await logout?.clients(of: user.id) ?? []
        let store = self.store
        let id = user.id
        let now = clock.now()
        guard
            try await change(
                user, .adminDisabled, by: actor,
                { db in
                    try await store.setDisabled(userID: id, true, at: now, in: db)
                })
        else { throw APIError(.notFound, .accountNotFound, "No account \"\(reference.prefix(64))\".") }
        if let logout { await logout.deliver(to: clients, userID: user.id) }
        user.disabled = true
        return (user, clients.count)
    }

    @discardableResult
    package func enable(_ reference: String, by actor: AdminActor) async throws -> User {
        var user = try await account(reference)
        let store = self.store
        let id = user.id
        let now = clock.now()
        guard
            try await change(
                user, .adminEnabled, by: actor,
                { db in
                    try await store.setDisabled(userID: id, false, at: now, in: db)
                })
        else { throw APIError(.notFound, .accountNotFound, "No account \"\(reference.prefix(64))\".") }
        user.disabled = false
        return user
    }

    /// Ends every session of the account and its apps' grants; how many sessions ended.
    package func signOutEverywhere(_ reference: String, by actor: AdminActor) async throws -> Int {
        let user = try await account(reference)
        let store = self.store
        let id = user.id
        let now = clock.now()
        return try await store.peopleChange(
            rule: administrators, audit: actor.event(.adminSignedOut, subject: user, detail: "", at: now)
        ) { db in try await store.signOutEverywhere(userID: id, at: now, in: db) } ?? 0
    }

    /// Removes one passkey (`credentialID` as base64url). 404 `unknown_credential` when the account has no such
    /// passkey; 409 `last_administrator` when it is the last passkey of the last administrator.
    package func removePasskey(_ reference: String, credentialID: String, by actor: AdminActor) async throws {
        let user = try await account(reference)
        guard let credential = try? Base64URL.decode(credentialID), !credential.isEmpty, credential.count <= 1023 else {
            throw APIError(.notFound, .unknownCredential, "This account has no such passkey.")
        }
        let store = self.store
        let id = user.id
        guard
            try await change(
                user, .adminPasskeyRemoved, by: actor, detail: credentialID,
                { db in
                    try await store.deleteCredential(userID: id, id: credential, in: db)
                })
        else { throw APIError(.notFound, .unknownCredential, "This account has no such passkey.") }
    }

    /// Removes a second factor (a declared `Factor`, e.g. `totp`). 400 `invalid_factor` for another word, 404
    /// `factor_not_enabled` when the account has not set it up.
    package func removeFactor(_ reference: String, factor name: String, by actor: AdminActor) async throws {
        let user = try await account(reference)
        guard let factor = Factor.secondFactors.first(where: { $0.rawValue == name }) else {
            throw APIError(
                .badRequest, .invalidFactor,
                "Second factors are \(Factor.secondFactors.map(\.rawValue).joined(separator: ", ")).")
        }
        let store = self.store
        let id = user.id
        guard
            try await change(
                user, .adminFactorRemoved, by: actor, detail: factor.rawValue,
                { db in
                    try await store.deleteFactor(factor, userID: id, in: db)
                })
        else { throw APIError(.notFound, .factorNotEnabled, "This account has not set up \(factor.rawValue).") }
    }

    /// Deletes the account and everything that belongs to it. `confirm` is the username typed again (nil: the
    /// command line's `--yes` said so); 400 `confirmation_mismatch` when it is not the account's.
    package func delete(_ reference: String, confirm: String?, by actor: AdminActor) async throws -> User {
        let user = try await account(reference)
        if let confirm, confirm != user.username {
            throw APIError(
                .badRequest, .confirmationMismatch, "Type the account's username exactly to delete it.")
        }
        let store = self.store
        let id = user.id
        guard try await change(user, .adminDeleted, by: actor, { db in try await store.deleteUser(id: id, in: db) })
        else { throw APIError(.notFound, .accountNotFound, "No account \"\(reference.prefix(64))\".") }
        return user
    }
}
