import Foundation
import SQLKit

/// Whether sign-up asks for an email address: the address feature's `email` setting as the sign-up sees it.
package enum SignUpAddressRequest: String, Sendable {
    /// No field; an address sent anyway is ignored.
    case off
    /// A field that may be left empty.
    case optional
    /// A field that must be filled: no account is made without an address to verify.
    case required
}

/// An email address given at sign-up. The core declares it, the address feature (`SesameEmail`) implements it and
/// the composition root hands it to the core, so the passkey sign-up never imports the feature that mails: the
/// address is checked (and its mail counted) before the passkey is made, and kept pending with its verification mail
/// in the transaction that creates the account, so an account never exists without it, nor a mail without the
/// account.
package protocol SignUpAddresses: Sendable {
    var request: SignUpAddressRequest { get }

    /// The address to keep for a sign-up that gave `raw` (nil or empty: none): nil when none is kept (none given
    /// while optional, or addresses off). Throws the address feature's errors: none given while required, not an
    /// address, or too many mails from this client address or to this address. `account` names the account to
    /// come (its username key) for the rate limit.
    func check(_ raw: String?, account: String, clientAddress: String) async throws -> String?

    /// Keeps `address` pending for the new account and writes its verification mail (or, when another account
    /// verified it, the notice to that account's holder), with the audit event `email.added`, in the transaction
    /// whose database is `db`. `language` is the sign-up request's (the mail's language).
    func begin(
        _ address: String, user: User, clientAddress: String, at: Date, language: String, in db: any SQLDatabase
    ) async throws
}

/// No addresses: a server built without the address feature (and the store's own tests).
package struct NoSignUpAddresses: SignUpAddresses {
    package init() {}
    package var request: SignUpAddressRequest { .off }
    package func check(_ raw: String?, account: String, clientAddress: String) async throws -> String? { nil }
    package func begin(
        _ address: String, user: User, clientAddress: String, at: Date, language: String, in db: any SQLDatabase
    )
        async throws
    {}
}
