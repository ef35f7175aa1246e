import Foundation
import SQLKit

/// Sign-up by invitation, as passkey sign-up sees it. The core declares it; the invitations feature
/// (`SesameInvitations`) implements it and the composition root hands it to `SignUpRoutes`, so sign-up spends an
/// invitation and joins its groups in the account's own transaction without importing the feature that stores
/// invitations.
package protocol SignUpInvitations: Sendable {
    /// Checks the invitation a sign-up starts with, spending nothing: the invitation's id, which the sign-up's
    /// challenge keeps until the account is created. A token that is malformed, unknown, used, revoked or expired
    /// gets one answer (the feature's error), and every try counts against the client address and the
    /// invitation's own budget (a guessable secret).
    func check(token: String, clientAddress: String) async throws -> String

    /// Spends the invitation `id` inside the sign-up transaction whose database is `db`, for the account `userID`
    /// created in it, and joins the invitation's groups there: one answer (the feature's error), and nothing
    /// written by the transaction, when it was used, revoked or expired since it was checked.
    func redeem(id: String, userID: String, username: String, clientAddress: String, at: Date, in db: any SQLDatabase)
        async throws
}

/// No invitations: a server built without the invitations feature (and the store's own tests). Every invitation is
/// refused.
package struct NoSignUpInvitations: SignUpInvitations {
    package init() {}

    package func check(token: String, clientAddress: String) async throws -> String { throw APIError.badRequest }

    package func redeem(
        id: String, userID: String, username: String, clientAddress: String, at: Date, in db: any SQLDatabase
    ) async throws { throw APIError.badRequest }
}
