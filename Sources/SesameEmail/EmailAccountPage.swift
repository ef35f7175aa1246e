import Foundation
import SesameCore

extension AccountSection {
    /// The email address: adding, confirming, changing, removing (hidden on a server without addresses).
    package static let email = AccountSection(
        name: "email", owner: "SesameEmail", position: 300, folder: folder(in: .module),
        scripts: ["account-email.js"], messagePrefixes: ["web.account.email."])
}
