import Foundation
import SQLKit
import SesameCore
import WebAuthn

public struct SMSRecord: Sendable, Equatable {
    public var phone: String
    public var confirmed: Bool
}

/// SMS phone numbers (sealed at rest, `FieldCipher`) and pending changes of them.
public protocol SMSStore {
    func sms(userID: String) async throws -> SMSRecord?
    func setSMS(userID: String, phone: String, confirmed: Bool, at: Date) async throws
    func deleteSMS(userID: String) async throws -> Bool
    /// Starts a phone-number change: keeps `phone` (sealed) as a pending change in a challenge row with `purpose`
    /// under `challengeID` until `expiresAt`, replacing any earlier pending change of the account, in one
    /// transaction. The confirmed number stays in force.
    func beginPhoneChange(userID: String, phone: String, challengeID: [UInt8], purpose: String, expiresAt: Date)
        async throws
    /// Consumes the pending change stored under `challengeID` and makes its number the confirmed one, in one
    /// transaction; returns it, or nil when there is none (wrong code, expired, or replaced by a later change).
    func completePhoneChange(userID: String, challengeID: [UInt8], purpose: String, now: Date) async throws -> String?
}

extension SQLStore: SMSStore {
    public func sms(userID: String) async throws -> SMSRecord? {
        guard let row = try await db.raw("SELECT phone, confirmed FROM sms WHERE user_id = \(bind: userID)").first()
        else { return nil }
        return SMSRecord(
            phone: try ciphers.cipher(.sms).openText(try row.decode(column: "phone", as: String.self), userID: userID),
            confirmed: try row.decode(column: "confirmed", as: Int64.self) != 0
        )
    }

    package static func smsUpsert(userID: String, sealedPhone: String, confirmed: Bool, at: Date) -> SQLQueryString {
        """
        INSERT INTO sms (user_id, phone, confirmed, created_at) VALUES (\(bind: userID), \(bind: sealedPhone), \(bind: confirmed.column), \(bind: at.milliseconds))
        ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone, confirmed = excluded.confirmed, created_at = excluded.created_at
        """
    }

    public func setSMS(userID: String, phone: String, confirmed: Bool, at: Date) async throws {
        try await db.raw(
            Self.smsUpsert(
                userID: userID, sealedPhone: try ciphers.cipher(.sms).sealText(phone, userID: userID),
                confirmed: confirmed,
                at: at)
        ).run()
    }

    public func deleteSMS(userID: String) async throws -> Bool {
        try await deleteSMS(userID: userID, notice: nil)
    }

    package func deleteSMS(userID: String, notice: AccountNotice?) async throws -> Bool {
        try await engine.withTransaction { db in
            let deleted =
                !(try await db.raw("DELETE FROM sms WHERE user_id = \(bind: userID) RETURNING user_id")
                .all()).isEmpty
            if deleted { try await notice.give(in: db) }
            return deleted
        }
    }

    public func beginPhoneChange(userID: String, phone: String, challengeID: [UInt8], purpose: String, expiresAt: Date)
        async throws
    {
        let sealed = Base64URL.encode(try ciphers.cipher(.sms).seal(Array(phone.utf8), userID: userID))
        try await engine.withTransaction { db in
            try await db.raw("DELETE FROM challenges WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose)")
                .run()
            try await db.raw(
                """
                INSERT INTO challenges (id, purpose, binding, user_id, payload, expires_at) VALUES (\(bind: Data(challengeID)),
                    \(bind: purpose), \(bind: Data()), \(bind: userID), \(bind: sealed), \(bind: expiresAt.milliseconds))
                """
            ).run()
        }
    }

    public func completePhoneChange(userID: String, challengeID: [UInt8], purpose: String, now: Date) async throws
        -> String?
    {
        try await completePhoneChange(userID: userID, challengeID: challengeID, purpose: purpose, now: now, notice: nil)
    }

    package func completePhoneChange(
        userID: String, challengeID: [UInt8], purpose: String, now: Date, notice: AccountNotice?
    ) async throws -> String? {
        try await engine.withTransaction { [self] db in
            guard
                let row = try await db.raw(
                    """
                    DELETE FROM challenges WHERE id = \(bind: Data(challengeID)) AND purpose = \(bind: purpose)
                        AND user_id = \(bind: userID) AND expires_at > \(bind: now.milliseconds)
                    RETURNING payload
                    """
                ).first()
            else { return nil }
            guard let sealed = try? Base64URL.decode(try row.decode(column: "payload", as: String.self)) else {
                throw StoreError.undecryptable(FieldCipher.Purpose.sms.rawValue)
            }
            let phone = String(decoding: try ciphers.cipher(.sms).open(sealed, userID: userID), as: UTF8.self)
            try await db.raw(
                Self.smsUpsert(
                    userID: userID, sealedPhone: try ciphers.cipher(.sms).sealText(phone, userID: userID),
                    confirmed: true,
                    at: now)
            ).run()
            try await notice.give(in: db)
            return phone
        }
    }
}
