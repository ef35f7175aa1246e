import Foundation
import SesameCore

extension AccountSection {
    /// The apps with access to the account (the identity provider's grants), and taking access back.
    package static let apps = AccountSection(
        name: "apps", owner: "SesameIdentityProvider", position: 1000, folder: folder(in: .module),
        scripts: ["account-apps.js"], messagePrefixes: ["web.account.apps."])
}
