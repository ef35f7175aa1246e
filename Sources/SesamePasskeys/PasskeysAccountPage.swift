import Foundation
import SesameCore

extension AccountSection {
    /// The account's passkeys, adding one, and the offer of one after a password sign-in (its words are
    /// `web.account.upgrade.`; its box is in the header card).
    package static let passkeys = AccountSection(
        name: "passkeys", owner: "SesamePasskeys", position: 400, folder: folder(in: .module),
        scripts: ["account-passkeys.js"], messagePrefixes: ["web.account.passkeys.", "web.account.upgrade."])
}
