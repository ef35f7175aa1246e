import Foundation
import SesameCore

extension AccountSection {
    /// The first card: who is signed in, the display name, signing out, and the page's live region (the box of the
    /// passkey offer after a password sign-in is in it too; passkeys' script drives it).
    package static let header = AccountSection(
        name: "header", owner: "SesameAccount", position: 100, folder: folder(in: .module),
        scripts: ["account-header.js"],
        messagePrefixes: ["web.account.heading", "web.account.who", "web.account.name.", "web.account.sign-out"])
    /// The saved choice of the pages' language (`PUT /api/account/language`).
    package static let language = AccountSection(
        name: "language", owner: "SesameAccount", position: 200, folder: folder(in: .module),
        scripts: ["account-language.js"], messagePrefixes: ["web.account.language."])
    /// "Download my data" (`GET /api/account/export`): a link, no script.
    package static let yourData = AccountSection(
        name: "your-data", owner: "SesameAccount", position: 1100, folder: folder(in: .module), scripts: [],
        messagePrefixes: ["web.account.data."])
    /// Where the account is signed in, and signing one or all out.
    package static let sessions = AccountSection(
        name: "sessions", owner: "SesameAccount", position: 1200, folder: folder(in: .module),
        scripts: ["account-sessions.js"], messagePrefixes: ["web.account.sessions.", "web.account.sign-out"])

    /// The account feature's sections of the account page.
    package static let account: [AccountSection] = [.header, .language, .yourData, .sessions]
}
