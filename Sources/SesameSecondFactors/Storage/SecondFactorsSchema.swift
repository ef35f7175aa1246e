import Foundation
import SQLKit
import SesameCore

/// The second factors' part of the one database. Their tables (`totp`, `sms`, `recovery_code_sets`,
/// `recovery_codes`) came with migration 1, the first schema, which stays whole in the core's list as it landed;
/// this part brings migration 2, which sealed the stored TOTP secrets and phone numbers, and owns what the core does
/// to these tables: an account's rows deleted with it, the two sealed columns (`sesame seal-keys`).
/// What the second factors keep: authenticator-app secrets, phone numbers and recovery codes.
package typealias SecondFactorStore = RecoveryCodeStore & SMSStore & TOTPStore & NoticedSecondFactorChanges & Sendable

package enum SecondFactorsSchema {
    package static let part = SchemaPart(
        name: "second factors",
        migrations: [
            Migration(
                version: 2,
                name: "encrypt TOTP secrets and SMS phone numbers at rest",
                statements: [],
                transform: { db, now in try await SecondFactorsSchema.sealStoredSecrets(db, now: now) }
            )
        ],
        accountTables: ["totp", "recovery_codes", "recovery_code_sets", "sms"],
        sealedColumns: [
            SealedColumn(purpose: .totp, table: "totp", column: "secret"),
            SealedColumn(purpose: .sms, table: "sms", column: "phone", text: true),
        ]
    )

    /// Migration 2: every TOTP secret and phone number stored in clear by migration 1's code is sealed with
    /// `FieldCipher` (keys from the server secret, generated here if this database never had one).
    private static func sealStoredSecrets(_ db: any SQLDatabase, now: Date) async throws {
        let secret = try await SQLStore.loadServerSecret(
            db, named: ServerSecret.name, generate: ServerSecret.generate, now: now)
        let ciphers = FieldCiphers(serverSecret: secret)
        for row in try await db.raw("SELECT user_id, secret FROM totp").all() {
            let userID = try row.decode(column: "user_id", as: String.self)
            let plain = [UInt8](try row.decode(column: "secret", as: Data.self))
            let sealed = try ciphers.cipher(.totp).seal(plain, userID: userID)
            try await db.raw("UPDATE totp SET secret = \(bind: Data(sealed)) WHERE user_id = \(bind: userID)").run()
        }
        for row in try await db.raw("SELECT user_id, phone FROM sms").all() {
            let userID = try row.decode(column: "user_id", as: String.self)
            let phone = try row.decode(column: "phone", as: String.self)
            let sealed = try ciphers.cipher(.sms).sealText(phone, userID: userID)
            try await db.raw("UPDATE sms SET phone = \(bind: sealed) WHERE user_id = \(bind: userID)").run()
        }
    }
}

extension FieldCipher.Purpose {
    /// Authenticator-app (TOTP) secrets.
    package static let totp = Self(rawValue: "totp")
    /// SMS phone numbers (sealed bytes stored as base64url text).
    package static let sms = Self(rawValue: "sms")
}
