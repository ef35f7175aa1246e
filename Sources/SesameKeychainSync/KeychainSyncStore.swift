import Foundation
import Keychain
import SQLKit
import SesameCore

/// A keychain device enrolled with an account: the person signed in and asked for a device token (`sesame keychain
/// enroll`). The token itself is never stored, only the SHA-256 of its secret half; the server learns the keychain's
/// device ID (random, 16 bytes) when the token is first used for it.
public struct KeychainEnrollment: Sendable, Equatable {
    /// Public identifier (base64url of 16 random bytes), also the first half of the token.
    public var id: String
    public var userID: String
    /// The name the person gave the device when enrolling it (shown on their own device list).
    public var name: String
    /// The keychain device ID this token acts for, once known.
    public var device: [UInt8]?
    public var createdAt: Date
    public var lastUsedAt: Date

    package init(id: String, userID: String, name: String, device: [UInt8]? = nil, createdAt: Date, lastUsedAt: Date) {
        self.id = id
        self.userID = userID
        self.name = name
        self.device = device
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// What a push did.
/// What posting a share offer came to.
public enum KeychainShareOutcome: Sendable, Equatable {
    case offered
    /// The account has `limit` offers out, or the ID is another account's (nothing written).
    case tooMany
    /// The account's keychain would pass its quota (nothing written).
    case overQuota
}

public enum KeychainPushOutcome: Sendable, Equatable {
    /// Stored; the vault is now at `version`. `revokedEnrollments` are the enrollments of devices the push took off
    /// the device list (their tokens stop working in the same transaction).
    case accepted(version: UInt64, revokedEnrollments: Int)
    /// The vault is not at the expected version (nothing written).
    case conflict(current: UInt64)
    /// The account's vault has another ID (nothing written).
    case wrongVault
    /// A record does not move its item's version forward (nothing written).
    case staleRecord
    /// What the account would hold afterwards passes its quota in bytes (nothing written).
    case overQuota
}

/// Keychain sync, the server half of `SyncServerState`'s semantics (docs/keychain.md, "Sync over `sesame serve`"):
/// per account one vault of opaque blobs, with device enrollments, join requests and share offers. The server
/// stores only what the messages carry: sealed records, HPKE messages, random IDs, versions and public keys.
public protocol KeychainSyncStore {
    func createKeychainEnrollment(_ enrollment: KeychainEnrollment, tokenHash: [UInt8]) async throws
    /// The enrollment and its token hash, by ID.
    func keychainEnrollment(id: String) async throws -> (enrollment: KeychainEnrollment, tokenHash: [UInt8])?
    func keychainEnrollments(userID: String) async throws -> [KeychainEnrollment]
    func deleteKeychainEnrollment(userID: String, id: String) async throws -> Bool
    /// Binds the enrollment to a keychain device (and records its use), unless it is bound to another device that
    /// the vault's device list holds; false then. A binding to a device that is not (or no longer) listed moves, so
    /// a join or recovery that was abandoned does not strand the token.
    func bindKeychainEnrollment(id: String, device: [UInt8], at: Date) async throws -> Bool
    /// Records a use of the enrollment without naming a device.
    func touchKeychainEnrollment(id: String, at: Date) async throws

    /// Everything written after vault version `since`, read in one transaction (a consistent snapshot).
    func keychainPull(userID: String, since: UInt64, device: [UInt8]) async throws -> PullResponse
    /// Push-with-expected-version, in one transaction whose first statement is a conditional write on the vault
    /// row (so two nodes cannot both accept a push for the same version).
    func keychainPush(userID: String, _ request: PushRequest, quota: Int64, at: Date) async throws
        -> KeychainPushOutcome

    /// Stores a join request (replacing one with the same ID); false when the account already has
    /// `limit` requests waiting.
    func postKeychainJoinRequest(userID: String, _ request: JoinRequest, limit: Int, at: Date) async throws -> Bool
    func keychainJoinRequests(userID: String) async throws -> [JoinRequest]
    /// Stores the approval of a waiting request (which then stops being listed); false when there is none.
    func postKeychainJoinApproval(userID: String, _ approval: JoinApproval) async throws -> Bool
    /// Deletes a waiting (unapproved) request: an enrolled device refused it; false when there is none.
    func refuseKeychainJoinRequest(userID: String, request: [UInt8]) async throws -> Bool
    /// The request's device and its approval, if any.
    func keychainJoinApproval(userID: String, request: [UInt8]) async throws -> (
        device: [UInt8],
        approval:
            JoinApproval?
    )?

    /// Stores a share offer; false when the ID belongs to another account's offer or this account already has
    /// `limit` offers out.
    func postKeychainShare(userID: String, _ share: ShareMessage, limit: Int, quota: Int64, at: Date) async throws
        -> KeychainShareOutcome
    func keychainShares(recipient: [UInt8]) async throws -> [ShareMessage]
    func keychainShares(userID: String, sender: [UInt8]) async throws -> [ShareMessage]
    func revokeKeychainShare(userID: String, id: [UInt8], sender: [UInt8]) async throws -> Bool
}

extension SQLStore: KeychainSyncStore {
    /// Rows per multi-row statement (5 binds each: well under both engines' limits).
    package static let keychainChunk = 200

    private struct EnrollmentRow: Decodable {
        let id: String
        let userId: String
        let name: String
        let device: Data?
        let createdAt: Int64
        let lastUsedAt: Int64
        let tokenHash: Data

        var enrollment: KeychainEnrollment {
            KeychainEnrollment(
                id: id, userID: userId, name: name, device: device.map { [UInt8]($0) },
                createdAt: Date(milliseconds: createdAt), lastUsedAt: Date(milliseconds: lastUsedAt))
        }
    }

    private static let enrollmentColumns: SQLQueryString =
        "id, user_id, name, device, created_at, last_used_at, token_hash"

    private static func enrollment(_ row: any SQLRow) throws -> EnrollmentRow {
        try row.decode(model: EnrollmentRow.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    public func createKeychainEnrollment(_ e: KeychainEnrollment, tokenHash: [UInt8]) async throws {
        try await insert(
            """
            INSERT INTO keychain_enrollments (id, user_id, name, device, token_hash, created_at, last_used_at)
            VALUES (\(bind: e.id), \(bind: e.userID), \(bind: e.name), \(bind: e.device.map { Data($0) }),
                \(bind: Data(tokenHash)), \(bind: e.createdAt.milliseconds), \(bind: e.lastUsedAt.milliseconds))
            """)
    }

    public func keychainEnrollment(id: String) async throws -> (enrollment: KeychainEnrollment, tokenHash: [UInt8])? {
        guard
            let row = try await db.raw(
                "SELECT \(Self.enrollmentColumns) FROM keychain_enrollments WHERE id = \(bind: id)"
            ).first()
        else { return nil }
        let decoded = try Self.enrollment(row)
        return (decoded.enrollment, [UInt8](decoded.tokenHash))
    }

    public func keychainEnrollments(userID: String) async throws -> [KeychainEnrollment] {
        try await db.raw(
            "SELECT \(Self.enrollmentColumns) FROM keychain_enrollments WHERE user_id = \(bind: userID) ORDER BY created_at, id"
        ).all().map { try Self.enrollment($0).enrollment }
    }

    public func deleteKeychainEnrollment(userID: String, id: String) async throws -> Bool {
        !(try await db.raw(
            "DELETE FROM keychain_enrollments WHERE user_id = \(bind: userID) AND id = \(bind: id) RETURNING id"
        ).all()).isEmpty
    }

    public func bindKeychainEnrollment(id: String, device: [UInt8], at: Date) async throws -> Bool {
        // One statement: the check ("not bound to another listed device") and the write cannot be split by a
        // concurrent push on another node.
        !(try await db.raw(
            """
            UPDATE keychain_enrollments SET device = \(bind: Data(device)), last_used_at = \(bind: at.milliseconds)
            WHERE id = \(bind: id) AND (device IS NULL OR device = \(bind: Data(device)) OR NOT EXISTS (
                SELECT 1 FROM keychain_devices d
                WHERE d.user_id = keychain_enrollments.user_id AND d.id = keychain_enrollments.device))
            RETURNING id
            """
        ).all()).isEmpty
    }

    public func touchKeychainEnrollment(id: String, at: Date) async throws {
        try await db.raw(
            "UPDATE keychain_enrollments SET last_used_at = \(bind: at.milliseconds) WHERE id = \(bind: id)"
        ).run()
    }

    // MARK: Pull and push

    public func keychainPull(userID: String, since: UInt64, device: [UInt8]) async throws -> PullResponse {
        let postgres = engine.kind == .postgres
        return try await engine.withTransaction { db in
            // PostgreSQL: one snapshot for every SELECT below, so a push committed in between cannot mix two
            // versions in one answer. SQLite: the transaction holds the database's write lock, which does the same.
            if postgres { try await db.raw("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").run() }
            guard
                let vault = try await db.raw(
                    "SELECT vault, version, manifest, recovery_epoch, recovery FROM keychain_vaults WHERE user_id = \(bind: userID)"
                ).first()
            else {
                return PullResponse(
                    vault: nil, version: 0, manifest: nil, records: [], wraps: [], recovery: nil, devices: [])
            }
            let version = UInt64(try vault.decode(column: "version", as: Int64.self))
            let records = try await db.raw(
                """
                SELECT id, version, blob FROM keychain_records
                WHERE user_id = \(bind: userID) AND written_at > \(bind: Int64(clamping: since)) ORDER BY id
                """
            ).all().map { row in
                WireRecord(
                    id: [UInt8](try row.decode(column: "id", as: Data.self)),
                    version: UInt64(try row.decode(column: "version", as: Int64.self)),
                    blob: [UInt8](try row.decode(column: "blob", as: Data.self)))
            }
            let wraps = try await db.raw(
                """
                SELECT device, sender, epoch, blob FROM keychain_wraps
                WHERE user_id = \(bind: userID) AND device = \(bind: Data(device)) ORDER BY epoch
                """
            ).all().map { row in
                WireWrap(
                    device: [UInt8](try row.decode(column: "device", as: Data.self)),
                    sender: [UInt8](try row.decode(column: "sender", as: Data.self)),
                    epoch: UInt32(try row.decode(column: "epoch", as: Int64.self)),
                    blob: [UInt8](try row.decode(column: "blob", as: Data.self)))
            }
            let devices = try await db.raw(
                "SELECT id, public_key FROM keychain_devices WHERE user_id = \(bind: userID) ORDER BY position"
            ).all().map { row in
                WireDevice(
                    id: [UInt8](try row.decode(column: "id", as: Data.self)),
                    publicKey: [UInt8](try row.decode(column: "public_key", as: Data.self)))
            }
            return PullResponse(
                vault: [UInt8](try vault.decode(column: "vault", as: Data.self)), version: version,
                manifest: [UInt8](try vault.decode(column: "manifest", as: Data.self)), records: records,
                wraps: wraps,
                recovery: WireRecovery(
                    epoch: UInt32(try vault.decode(column: "recovery_epoch", as: Int64.self)),
                    blob: [UInt8](try vault.decode(column: "recovery", as: Data.self))),
                devices: devices)
        }
    }

    /// Thrown inside the push transaction to roll it back with an outcome.
    private struct PushRefused: Error {
        let outcome: KeychainPushOutcome
    }

    public func keychainPush(userID: String, _ request: PushRequest, quota: Int64, at: Date) async throws
        -> KeychainPushOutcome
    {
        guard request.expectedVersion < UInt64(Int64.max) else { return .conflict(current: 0) }
        let expected = Int64(request.expectedVersion)
        let now = at.milliseconds
        do {
            return try await engine.withTransaction { db in
                // What the account holds before this push, for its quota (step 5).
                let before = try await Self.keychainBytes(db, userID: userID)
                // 1. The conditional write that makes the push atomic across nodes: it succeeds for exactly one of
                //    several pushes expecting the same version (PostgreSQL re-checks the WHERE clause after waiting
                //    for the row lock a concurrent UPDATE holds; a concurrent first INSERT meets the primary key).
                let moved: [any SQLRow]
                if expected == 0 {
                    moved = try await db.raw(
                        """
                        INSERT INTO keychain_vaults (user_id, vault, version, manifest, recovery_epoch, recovery, updated_at)
                        VALUES (\(bind: userID), \(bind: Data(request.vault)), 1, \(bind: Data(request.manifest)),
                            \(bind: Int64(request.recovery.epoch)), \(bind: Data(request.recovery.blob)), \(bind: now))
                        ON CONFLICT (user_id) DO NOTHING RETURNING version
                        """
                    ).all()
                } else {
                    moved = try await db.raw(
                        """
                        UPDATE keychain_vaults SET version = version + 1, manifest = \(bind: Data(request.manifest)),
                            recovery_epoch = \(bind: Int64(request.recovery.epoch)),
                            recovery = \(bind: Data(request.recovery.blob)), updated_at = \(bind: now)
                        WHERE user_id = \(bind: userID) AND version = \(bind: expected) AND vault = \(bind: Data(request.vault))
                        RETURNING version
                        """
                    ).all()
                }
                guard let row = moved.first else {
                    let current = try await db.raw(
                        "SELECT vault, version FROM keychain_vaults WHERE user_id = \(bind: userID)"
                    ).first()
                    guard let current else { throw PushRefused(outcome: .conflict(current: 0)) }
                    if [UInt8](try current.decode(column: "vault", as: Data.self)) != request.vault {
                        throw PushRefused(outcome: .wrongVault)
                    }
                    throw PushRefused(
                        outcome: .conflict(current: UInt64(try current.decode(column: "version", as: Int64.self))))
                }
                let version = try row.decode(column: "version", as: Int64.self)

                // 2. Records: each must move its item's version forward (the conditional upsert returns only
                //    the rows it wrote, so a shortfall is a stale record and rolls everything back).
                for start in stride(from: 0, to: request.records.count, by: Self.keychainChunk) {
                    let chunk = request.records[start..<min(start + Self.keychainChunk, request.records.count)]
                    let values = SQLList(
                        chunk.map { r in
                            SQLQueryString(
                                "(\(bind: userID), \(bind: Data(r.id)), \(bind: Int64(clamping: r.version)), \(bind: Data(r.blob)), \(bind: version))"
                            )
                        }, separator: SQLRaw(", "))
                    let written = try await db.raw(
                        """
                        INSERT INTO keychain_records (user_id, id, version, blob, written_at) VALUES \(values)
                        ON CONFLICT (user_id, id) DO UPDATE SET version = excluded.version, blob = excluded.blob,
                            written_at = excluded.written_at
                        WHERE keychain_records.version < excluded.version
                        RETURNING id
                        """
                    ).all()
                    guard written.count == chunk.count else { throw PushRefused(outcome: .staleRecord) }
                }

                // 3. The device listing replaces the old one; devices taken off it lose their wraps and their
                //    enrollments (a removed device's token stops working with this commit).
                let previous = Set(
                    try await db.raw("SELECT id FROM keychain_devices WHERE user_id = \(bind: userID)").all().map {
                        [UInt8](try $0.decode(column: "id", as: Data.self))
                    })
                try await db.raw("DELETE FROM keychain_devices WHERE user_id = \(bind: userID)").run()
                for (position, device) in request.devices.enumerated() {
                    try await db.raw(
                        """
                        INSERT INTO keychain_devices (user_id, id, public_key, position)
                        VALUES (\(bind: userID), \(bind: Data(device.id)), \(bind: Data(device.publicKey)), \(bind: position))
                        """
                    ).run()
                }
                let listed = Set(request.devices.map(\.id))
                var revoked = 0
                for removed in previous.subtracting(listed) {
                    revoked += try await db.raw(
                        "DELETE FROM keychain_enrollments WHERE user_id = \(bind: userID) AND device = \(bind: Data(removed)) RETURNING id"
                    ).all().count
                }

                // 4. Wraps: the latest per (device, epoch), only for listed devices.
                for wrap in request.wraps where listed.contains(wrap.device) {
                    try await db.raw(
                        """
                        INSERT INTO keychain_wraps (user_id, device, epoch, sender, blob)
                        VALUES (\(bind: userID), \(bind: Data(wrap.device)), \(bind: Int64(wrap.epoch)),
                            \(bind: Data(wrap.sender)), \(bind: Data(wrap.blob)))
                        ON CONFLICT (user_id, device, epoch) DO UPDATE SET sender = excluded.sender, blob = excluded.blob
                        """
                    ).run()
                }
                try await db.raw(
                    """
                    DELETE FROM keychain_wraps WHERE user_id = \(bind: userID) AND device NOT IN (
                        SELECT id FROM keychain_devices WHERE user_id = \(bind: userID))
                    """
                ).run()

                // 5. The account's quota (`keychainQuota`), on what it holds after the push; a push that leaves an
                //    account over a lowered quota with less than before is accepted, so people can make room.
                let after = try await Self.keychainBytes(db, userID: userID)
                if after > quota, after > before { throw PushRefused(outcome: .overQuota) }
                return .accepted(version: UInt64(version), revokedEnrollments: revoked)
            }
        } catch let refused as PushRefused {
            return refused.outcome
        }
    }

    // MARK: Joining

    public func postKeychainJoinRequest(userID: String, _ request: JoinRequest, limit: Int, at: Date) async throws
        -> Bool
    {
        try await engine.withTransaction { db in
            let waiting =
                try await db.raw(
                    """
                    SELECT COUNT(*) AS n FROM keychain_join_requests
                    WHERE user_id = \(bind: userID) AND approval IS NULL AND request <> \(bind: Data(request.request))
                    """
                ).first()?.decode(column: "n", as: Int.self) ?? 0
            guard waiting < limit else { return false }
            try await db.raw(
                """
                INSERT INTO keychain_join_requests (user_id, request, device, public_key, approval, created_at)
                VALUES (\(bind: userID), \(bind: Data(request.request)), \(bind: Data(request.device)),
                    \(bind: Data(request.publicKey)), NULL, \(bind: at.milliseconds))
                ON CONFLICT (user_id, request) DO UPDATE SET device = excluded.device,
                    public_key = excluded.public_key, approval = NULL, created_at = excluded.created_at
                """
            ).run()
            return true
        }
    }

    public func keychainJoinRequests(userID: String) async throws -> [JoinRequest] {
        try await db.raw(
            """
            SELECT request, device, public_key FROM keychain_join_requests
            WHERE user_id = \(bind: userID) AND approval IS NULL ORDER BY created_at, request
            """
        ).all().map { row in
            JoinRequest(
                request: [UInt8](try row.decode(column: "request", as: Data.self)),
                device: [UInt8](try row.decode(column: "device", as: Data.self)),
                publicKey: [UInt8](try row.decode(column: "public_key", as: Data.self)))
        }
    }

    public func postKeychainJoinApproval(userID: String, _ approval: JoinApproval) async throws -> Bool {
        !(try await db.raw(
            """
            UPDATE keychain_join_requests SET approval = \(bind: Data(approval.blob))
            WHERE user_id = \(bind: userID) AND request = \(bind: Data(approval.request)) AND approval IS NULL
            RETURNING request
            """
        ).all()).isEmpty
    }

    public func refuseKeychainJoinRequest(userID: String, request: [UInt8]) async throws -> Bool {
        !(try await db.raw(
            """
            DELETE FROM keychain_join_requests
            WHERE user_id = \(bind: userID) AND request = \(bind: Data(request)) AND approval IS NULL
            RETURNING request
            """
        ).all()).isEmpty
    }

    public func keychainJoinApproval(userID: String, request: [UInt8]) async throws -> (
        device: [UInt8], approval: JoinApproval?
    )? {
        guard
            let row = try await db.raw(
                """
                SELECT device, approval FROM keychain_join_requests
                WHERE user_id = \(bind: userID) AND request = \(bind: Data(request))
                """
            ).first()
        else { return nil }
        let blob = try row.decode(column: "approval", as: Data?.self)
        return (
            [UInt8](try row.decode(column: "device", as: Data.self)),
            blob.map { JoinApproval(request: request, blob: [UInt8]($0)) }
        )
    }

    // MARK: Sharing

    public func postKeychainShare(userID: String, _ share: ShareMessage, limit: Int, quota: Int64, at: Date)
        async throws -> KeychainShareOutcome
    {
        do {
            return try await engine.withTransaction { db in
                let out =
                    try await db.raw(
                        "SELECT COUNT(*) AS n FROM keychain_shares WHERE user_id = \(bind: userID) AND id <> \(bind: Data(share.id))"
                    ).first()?.decode(column: "n", as: Int.self) ?? 0
                guard out < limit else { return .tooMany }
                let before = try await Self.keychainBytes(db, userID: userID)
                let stored =
                    !(try await db.raw(
                        """
                        INSERT INTO keychain_shares (id, user_id, sender, recipient, blob, created_at)
                        VALUES (\(bind: Data(share.id)), \(bind: userID), \(bind: Data(share.sender)), \(bind: Data(share.recipient)),
                            \(bind: Data(share.blob)), \(bind: at.milliseconds))
                        ON CONFLICT (id) DO UPDATE SET sender = excluded.sender, recipient = excluded.recipient,
                            blob = excluded.blob, created_at = excluded.created_at
                        WHERE keychain_shares.user_id = excluded.user_id
                        RETURNING id
                        """
                    ).all()).isEmpty
                guard stored else { return .tooMany }
                let after = try await Self.keychainBytes(db, userID: userID)
                if after > quota, after > before { throw PushRefused(outcome: .overQuota) }
                return .offered
            }
        } catch let refused as PushRefused where refused.outcome == .overQuota {
            return .overQuota
        }
    }

    /// The bytes an account's keychain holds on the server: the vault's manifest and recovery wrap, records, key
    /// wraps and share offers (what `keychainQuota` bounds). Lengths come from the stored values (`length` of a
    /// BLOB or bytea is its size in bytes on both engines), without reading them.
    package static func keychainBytes(_ db: any SQLDatabase, userID: String) async throws -> Int64 {
        try await db.raw(
            """
            SELECT
                COALESCE((SELECT SUM(LENGTH(manifest) + LENGTH(recovery)) FROM keychain_vaults WHERE user_id = \(bind: userID)), 0)
                + COALESCE((SELECT SUM(LENGTH(blob)) FROM keychain_records WHERE user_id = \(bind: userID)), 0)
                + COALESCE((SELECT SUM(LENGTH(blob)) FROM keychain_wraps WHERE user_id = \(bind: userID)), 0)
                + COALESCE((SELECT SUM(LENGTH(blob)) FROM keychain_shares WHERE user_id = \(bind: userID)), 0) AS n
            """
        ).first()?.decode(column: "n", as: Int64.self) ?? 0
    }

    private static func share(_ row: any SQLRow) throws -> ShareMessage {
        ShareMessage(
            id: [UInt8](try row.decode(column: "id", as: Data.self)),
            sender: [UInt8](try row.decode(column: "sender", as: Data.self)),
            recipient: [UInt8](try row.decode(column: "recipient", as: Data.self)),
            blob: [UInt8](try row.decode(column: "blob", as: Data.self)))
    }

    public func keychainShares(recipient: [UInt8]) async throws -> [ShareMessage] {
        try await db.raw(
            "SELECT id, sender, recipient, blob FROM keychain_shares WHERE recipient = \(bind: Data(recipient)) ORDER BY created_at, id"
        ).all().map(Self.share)
    }

    public func keychainShares(userID: String, sender: [UInt8]) async throws -> [ShareMessage] {
        try await db.raw(
            """
            SELECT id, sender, recipient, blob FROM keychain_shares
            WHERE user_id = \(bind: userID) AND sender = \(bind: Data(sender)) ORDER BY created_at, id
            """
        ).all().map(Self.share)
    }

    public func revokeKeychainShare(userID: String, id: [UInt8], sender: [UInt8]) async throws -> Bool {
        !(try await db.raw(
            """
            DELETE FROM keychain_shares
            WHERE id = \(bind: Data(id)) AND user_id = \(bind: userID) AND sender = \(bind: Data(sender))
            RETURNING id
            """
        ).all()).isEmpty
    }
}
