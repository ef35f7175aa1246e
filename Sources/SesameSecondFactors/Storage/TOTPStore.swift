import Foundation
import SQLKit
import SesameCore

public struct TOTPRecord: Sendable, Equatable {
    public var secret: [UInt8]
    /// Last accepted time step; a code for this step or an earlier one is refused (replay).
    public var lastStep: Int64
    public var confirmed: Bool
    /// The stored (sealed) form of the secret: it changes whenever a new secret is set, so a confirmation can be
    /// made conditional on the secret it checked (`confirmTOTP`).
    public var revision: [UInt8] = []
}

/// TOTP secrets (sealed at rest, `FieldCipher`) and the last accepted step.
public protocol TOTPStore {
    func totp(userID: String) async throws -> TOTPRecord?
    /// Stores a new unconfirmed secret; a confirmed one is never replaced (it must be deleted first).
    func setPendingTOTP(userID: String, secret: [UInt8], at: Date) async throws
    /// Records `step` as accepted for a confirmed secret, only if it is later than the last accepted step.
    /// Returns false when the step was already used (replay) or there is no confirmed TOTP secret.
    func acceptTOTPStep(userID: String, step: Int64) async throws -> Bool
    /// Confirms the pending secret whose stored form is `revision` and records `step` as accepted; false when the
    /// secret was replaced meanwhile (another setup started), is confirmed already, or the step is not later.
    func confirmTOTP(userID: String, step: Int64, revision: [UInt8]) async throws -> Bool
    func deleteTOTP(userID: String) async throws -> Bool
}

extension SQLStore: TOTPStore {
    package struct TOTPRow: Decodable {
        /// Column names spelled out: a key strategy converts every name again for every row (a few per cent of a sign-in).
        package enum CodingKeys: String, CodingKey {
            case secret, lastStep = "last_step", confirmed
        }

        package let secret: Data
        package let lastStep: Int64
        package let confirmed: Int64
    }

    public func totp(userID: String) async throws -> TOTPRecord? {
        guard
            let row = try await db.raw("SELECT secret, last_step, confirmed FROM totp WHERE user_id = \(bind: userID)")
                .first()
        else {
            return nil
        }
        let r = try row.decode(model: TOTPRow.self)
        let sealed = [UInt8](r.secret)
        return TOTPRecord(
            secret: try ciphers.cipher(.totp).open(sealed, userID: userID), lastStep: r.lastStep,
            confirmed: r.confirmed != 0,
            revision: sealed)
    }

    public func setPendingTOTP(userID: String, secret: [UInt8], at: Date) async throws {
        // Replacing a confirmed secret needs it disabled first; only an unconfirmed one is overwritten.
        try await db.raw(
            """
            INSERT INTO totp (user_id, secret, last_step, confirmed, created_at)
            VALUES (\(bind: userID), \(bind: Data(try ciphers.cipher(.totp).seal(secret, userID: userID))), -1, 0, \(bind: at.milliseconds))
            ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, last_step = -1, created_at = excluded.created_at
                WHERE totp.confirmed = 0
            """
        ).run()
    }

    public func acceptTOTPStep(userID: String, step: Int64) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE totp SET last_step = \(bind: step)
            WHERE user_id = \(bind: userID) AND last_step < \(bind: step) AND confirmed = 1 RETURNING user_id
            """
        ).all()).isEmpty
    }

    public func confirmTOTP(userID: String, step: Int64, revision: [UInt8]) async throws -> Bool {
        try await confirmTOTP(userID: userID, step: step, revision: revision, notice: nil)
    }

    public func deleteTOTP(userID: String) async throws -> Bool {
        try await deleteTOTP(userID: userID, notice: nil)
    }
}

extension SQLStore {
    package func confirmTOTP(userID: String, step: Int64, revision: [UInt8], notice: AccountNotice?) async throws
        -> Bool
    {
        try await engine.withTransaction { db in
            // The secret column must still hold the sealed bytes the code was checked against: a setup started
            // meanwhile (a new random secret, sealed under a new nonce) makes this update change nothing.
            let confirmed =
                !(try await db.raw(
                    """
                    UPDATE totp SET last_step = \(bind: step), confirmed = 1
                    WHERE user_id = \(bind: userID) AND confirmed = 0 AND secret = \(bind: Data(revision)) AND last_step < \(bind: step)
                    RETURNING user_id
                    """
                ).all()).isEmpty
            if confirmed { try await notice.give(in: db) }
            return confirmed
        }
    }

    package func deleteTOTP(userID: String, notice: AccountNotice?) async throws -> Bool {
        try await engine.withTransaction { db in
            let deleted =
                !(try await db.raw("DELETE FROM totp WHERE user_id = \(bind: userID) RETURNING user_id")
                .all()).isEmpty
            if deleted { try await notice.give(in: db) }
            return deleted
        }
    }
}
