import Foundation
import SesameBytes
import SesameCore
import WebAuthn

/// Admin API tokens (docs/console.md, "Admin API tokens"): the rules before the store, and the gate's check
/// (`AdminTokenCheck`).
///
/// A token is `sesame_at_` and 32 random bytes in base64url (53 characters; the prefix lets the gate, secret
/// scanners and people tell it from a session's token). Only its SHA-256 is stored; it is shown once, when made.
/// It holds the scopes it was made with (`AdminScope.all` names every one), lives 1 to 365 days (90 unless asked)
/// and can be revoked. The gate's check counts every try against the client address first
/// (`GuessableSecret.adminToken`; the address is the one the core resolves behind trusted proxies, so a client
/// cannot name its own), then finds the hash and compares it in constant time; unknown, malformed, expired and
/// revoked are one answer, 401 `unauthenticated`, and a right token is given its try back. Over the limit, even a
/// right token gets 429 until the window ends. Making and revoking are audited naming who did it; a use is not (a
/// script would flood the log), though its last use is noted on the token.
package struct AdminTokens: AdminTokenCheck {
    package let store: any AdminTokenStore
    package let rateLimiter: RateLimiter
    package let clock: ServerClock

    package init(store: any AdminTokenStore, rateLimiter: RateLimiter, clock: ServerClock) {
        self.store = store
        self.rateLimiter = rateLimiter
        self.clock = clock
    }

    package static let prefix = "sesame_at_"
    /// Lifetimes in days: 1 to 365, 90 unless asked.
    package static let lifetimes: ClosedRange<Int> = 1...365
    package static let defaultLifetime = 90

    /// A new token and the hash to store.
    package static func newToken() -> (token: String, hash: [UInt8]) {
        let token = prefix + Base64URL.encode(Secrets.random(32))
        return (token, Secrets.sha256(token))
    }

    /// Whether `value` is a well-formed token: the prefix, then 43 base64url characters that decode to 32 bytes.
    package static func wellFormed(_ value: String) -> Bool {
        guard value.hasPrefix(prefix) else { return false }
        let secret = value.dropFirst(prefix.count)
        return secret.utf8.count == 43 && (try? Base64URL.decode(String(secret)))?.count == 32
    }

    package func looksLikeAdminToken(_ value: String) -> Bool { value.hasPrefix(Self.prefix) }

    package func principal(token: String, clientAddress: String) async throws -> AdminPrincipal {
        let limit = rateLimiter.key(.adminToken, address: clientAddress)
        try await rateLimiter.attempt(limit)
        guard Self.wellFormed(token) else { throw APIError.unauthenticated }
        let hash = Secrets.sha256(token)
        let now = clock.now()
        guard let record = try await store.adminToken(hash: hash), ConstantTime.equal(record.tokenHash, hash),
            record.live(at: now)
        else { throw APIError.unauthenticated }
        try await rateLimiter.forgive(limit)
        try await store.noteAdminTokenUse(id: record.id, at: now)
        return AdminPrincipal(via: .token(id: record.id, name: record.name), scopes: Set(record.scopes))
    }

    // MARK: The rules of making and revoking

    package static func checkedName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(trimmed.count),
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError(.badRequest, .invalidAdminTokenName, "A token's name has 1 to 64 characters.")
        }
        return trimmed
    }

    /// The scopes named, each one `AdminScope.all` knows, without repeats, in that list's order.
    package static func checkedScopes(_ words: [String]) throws -> [AdminScope] {
        let asked = words.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let known = Set(AdminScope.all.map(\.rawValue))
        if let unknown = asked.first(where: { !known.contains($0) }) {
            throw APIError(
                .badRequest, .invalidAdminTokenScope,
                "No scope \"\(unknown.prefix(32))\"; the scopes are "
                    + AdminScope.all.map(\.rawValue).joined(separator: ", ") + ".")
        }
        guard !asked.isEmpty else {
            throw APIError(
                .badRequest, .invalidAdminTokenScope,
                "Name at least one scope: " + AdminScope.all.map(\.rawValue).joined(separator: ", ") + ".")
        }
        let chosen = Set(asked)
        return AdminScope.all.filter { chosen.contains($0.rawValue) }
    }

    package static func checkedLifetime(_ days: Int?) throws -> Int {
        let days = days ?? defaultLifetime
        guard lifetimes.contains(days) else {
            throw APIError(.badRequest, .invalidAdminTokenLifetime, "A token lives 1 to 365 days.")
        }
        return days
    }

    package struct Created: Sendable {
        /// The token, shown this once.
        package let token: String
        package let record: AdminTokenRecord
    }

    /// Makes a token. Through the admin API only a person may (a token never mints another).
    package func create(name: String, scopes: [String], days: Int?, by actor: AdminActor) async throws -> Created {
        if case .admin(let principal, _) = actor, case .token = principal.via {
            throw APIError(
                .forbidden, .adminTokenNeedsPerson,
                "A token cannot make tokens; make one at the console or with sesame admin-tokens create.")
        }
        let name = try Self.checkedName(name)
        let scopes = try Self.checkedScopes(scopes)
        let days = try Self.checkedLifetime(days)
        let now = clock.now()
        let (token, hash) = Self.newToken()
        let record = AdminTokenRecord(
            id: Hex.encode(Secrets.random(8)), name: name, tokenHash: hash, scopes: scopes, createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(days) * 86400), createdBy: Self.creator(actor))
        try await store.createAdminToken(
            record,
            audit: actor.event(
                .adminTokenCreated, subject: nil,
                detail: "\(record.id) \(name) scopes=\(scopes.map(\.rawValue).joined(separator: ","))", at: now))
        return Created(token: token, record: record)
    }

    package func revoke(id: String, by actor: AdminActor) async throws -> AdminTokenRecord {
        let now = clock.now()
        guard let record = try await store.adminToken(id: id),
            try await store.revokeAdminToken(
                id: record.id, at: now,
                audit: actor.event(.adminTokenRevoked, subject: nil, detail: "\(record.id) \(record.name)", at: now))
        else {
            throw APIError(.notFound, .adminTokenNotFound, "No live admin token has the id \"\(id.prefix(32))\".")
        }
        return record
    }

    private static func creator(_ actor: AdminActor) -> String {
        switch actor {
        case .commandLine: "cli"
        case .admin(let principal, _): principal.actor
        }
    }
}
