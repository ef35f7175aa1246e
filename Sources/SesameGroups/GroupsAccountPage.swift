import Foundation
import SesameCore

extension AccountSection {
    /// The groups the person is in and the apps open to them (read-only; the apps as the apps card reads them).
    package static let groups = AccountSection(
        name: "groups", owner: "SesameGroups", position: 900, folder: folder(in: .module),
        scripts: ["account-groups.js"], messagePrefixes: ["web.account.groups."])
}
