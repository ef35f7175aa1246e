import SesameAccount
import SesameCore
import SesameEmail
import SesameGroups
import SesameIdentityProvider
import SesamePasskeys
import SesamePasswords
import SesameSecondFactors

extension AccountSection {
    /// Every feature's cards of the account page, in page order (by `position`); a name, script or position two
    /// sections declare stops the process here. `WebRoutes` renders `/account` from them and serves their scripts.
    package static let server: [AccountSection] = joined(
        AccountSection.account + [.email, .passkeys] + AccountSection.secondFactors + [.password, .groups, .apps])
}
