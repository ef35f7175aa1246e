import Foundation
import SQLKit
import SesameCore

/// The second-factor changes the account's owner is told about by mail: each gives its notice (`AccountNotice`) in
/// the change's own transaction, and only when the change took effect, so a refused or rolled-back change mails
/// nothing. Each is its `TOTPStore`, `SMSStore` or `RecoveryCodeStore` namesake with the notice beside it.
package protocol NoticedSecondFactorChanges {
    func confirmTOTP(userID: String, step: Int64, revision: [UInt8], notice: AccountNotice?) async throws -> Bool
    func deleteTOTP(userID: String, notice: AccountNotice?) async throws -> Bool
    func deleteSMS(userID: String, notice: AccountNotice?) async throws -> Bool
    func completePhoneChange(
        userID: String, challengeID: [UInt8], purpose: String, now: Date, notice: AccountNotice?
    ) async throws -> String?
    func replaceRecoveryCodes(userID: String, salt: [UInt8], hashes: [[UInt8]], at: Date, notice: AccountNotice?)
        async throws
    func useRecoveryCode(userID: String, hash: [UInt8], at: Date, notice: AccountNotice?) async throws -> Bool
}

extension SQLStore: NoticedSecondFactorChanges {}

extension SQLStore {
    /// Removes a second factor of the account inside the caller's transaction `db` (an operator's change, with its
    /// audit event): TOTP, the phone, or every recovery code. False when it was not set up.
    package func deleteFactor(_ factor: Factor, userID: String, in db: any SQLDatabase) async throws -> Bool {
        let table: String
        switch factor {
        case .totp: table = "totp"
        case .sms: table = "sms"
        case .recovery: table = "recovery_codes"
        default: return false
        }
        return
            !(try await db.raw("DELETE FROM \(ident: table) WHERE user_id = \(bind: userID) RETURNING user_id")
            .all()).isEmpty
    }
}
