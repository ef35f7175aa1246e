import Foundation
import SesameCore

/// `sesame admin-tokens create|list|revoke`: the operator's side of admin API tokens, as lines to print. Making and
/// revoking are audit events with client address `cli`; a refusal is an `AdminError` whose message says what to
/// give instead.
package struct AdminTokensAdmin: Sendable {
    package let tokens: AdminTokens

    package init(tokens: AdminTokens) { self.tokens = tokens }

    /// The command line's: the system clock (the rate limiter is never asked from here).
    package init(store: any AdminTokenStore & Store, clock: ServerClock = .system) {
        tokens = AdminTokens(
            store: store, rateLimiter: RateLimiter(store: store, policy: RateLimitPolicy(), clock: clock), clock: clock)
    }

    private static let dateFormat = Date.ISO8601FormatStyle()

    private func refusing<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as APIError { throw AdminError(description: error.message) }
    }

    /// The token on its own line (shown this once), then what it is.
    package func create(name: String, scopes: String, days: Int?) async throws -> [String] {
        try await refusing {
            let created = try await tokens.create(
                name: name, scopes: scopes.split(separator: ",").map(String.init), days: days, by: .commandLine)
            let record = created.record
            return [
                created.token,
                "admin token \(record.id) (\(record.name)), scopes \(record.scopes.map(\.rawValue).joined(separator: ",")), "
                    + "until \(record.expiresAt.formatted(Self.dateFormat)); the token is shown only now",
            ]
        }
    }

    /// One line per token, newest first.
    package func list() async throws -> [String] {
        let now = tokens.clock.now()
        return try await tokens.store.adminTokens().map { token in
            [
                token.id, token.name, token.scopes.map(\.rawValue).joined(separator: ","),
                "created=\(token.createdAt.formatted(Self.dateFormat))",
                "expires=\(token.expiresAt.formatted(Self.dateFormat))",
                "last-used=\(token.lastUsedAt.map { $0.formatted(Self.dateFormat) } ?? "never")",
                "revoked=\(token.revokedAt.map { $0.formatted(Self.dateFormat) } ?? "no")", token.state(at: now),
            ].joined(separator: "  ")
        }
    }

    package func revoke(_ id: String) async throws -> String {
        try await refusing {
            let record = try await tokens.revoke(id: id, by: .commandLine)
            return "admin token \(record.id) (\(record.name)) revoked"
        }
    }
}
