import Foundation
import SQLKit

/// The first account made by sign-up on a server with no accounts becomes an administrator (`firstSignUpAdmin`,
/// off by default). Passkey sign-up calls it inside the account's own transaction; the groups feature implements it
/// (it owns the administrators' group), and the composition root hands it over only when the setting is on.
package protocol SignUpFirstAdmin: Sendable {
    /// Inside the sign-up's transaction `db`, after the account's row is written: when no other account exists,
    /// puts `user` into the administrators' group (created when missing) with its audit events, and answers true;
    /// false, writing nothing, otherwise. Of two sign-ups racing on an empty server exactly one wins.
    func claim(user: User, clientAddress: String, at: Date, in db: any SQLDatabase) async throws -> Bool
}
