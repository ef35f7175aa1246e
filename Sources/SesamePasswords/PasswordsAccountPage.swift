import Foundation
import SesameCore

extension AccountSection {
    /// Setting, changing and removing the password.
    package static let password = AccountSection(
        name: "password", owner: "SesamePasswords", position: 800, folder: folder(in: .module),
        scripts: ["account-password.js"], messagePrefixes: ["web.account.password."])
}
