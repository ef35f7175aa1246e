import Foundation
import SesameCore

extension AccountSection {
    /// Verification codes from an authenticator app (`Factor.totp`).
    package static let totp = AccountSection(
        name: "totp", owner: "SesameSecondFactors", position: 500, folder: folder(in: .module),
        scripts: ["account-totp.js"], messagePrefixes: ["web.account.totp."])
    /// Recovery codes (`Factor.recovery`).
    package static let recoveryCodes = AccountSection(
        name: "recovery", owner: "SesameSecondFactors", position: 600, folder: folder(in: .module),
        scripts: ["account-recovery.js"], messagePrefixes: ["web.account.recovery."])
    /// Codes by text message (`Factor.sms`); its script checks the phone with `FactorVerifier.phonePattern`.
    package static let sms = AccountSection(
        name: "sms", owner: "SesameSecondFactors", position: 700, folder: folder(in: .module),
        scripts: ["account-sms.js"], messagePrefixes: ["web.account.sms."])

    /// The second factors' sections of the account page, one per factor.
    package static let secondFactors: [AccountSection] = [.totp, .recoveryCodes, .sms]
}
