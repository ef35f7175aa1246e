import Foundation
import SQLKit
import SesameCore

/// A device authorization request (RFC 8628 §3.1–3.2) as stored: under the hash of its device code (the device's
/// polling secret) and of its user code (what the person types on Sesame's page).
public struct DeviceAuthorization: Sendable, Equatable {
    public enum Status: String, Sendable {
        /// Waiting for the person.
        case pending
        /// The person allowed it; the grant waits for the device's next poll.
        case approved
        /// The person refused it.
        case denied
        /// The device collected its tokens: the device code is spent.
        case redeemed
    }

    public var clientID: String
    public var scope: String
    public var status: Status
    /// Seconds the device must wait between polls; grows by 5 each time it polls too soon (§3.5 `slow_down`).
    public var interval: Int
    public var createdAt: Date
    public var expiresAt: Date

    package init(clientID: String, scope: String, status: Status, interval: Int, createdAt: Date, expiresAt: Date) {
        self.clientID = clientID
        self.scope = scope
        self.status = status
        self.interval = interval
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// What a device's poll at the token endpoint finds (RFC 8628 §3.5).
public enum DevicePoll: Sendable, Equatable {
    case pending
    /// Polled before its interval passed; the interval is now 5 seconds longer.
    case slowDown
    /// Allowed: the grant's tokens go to the device, once.
    case approved(OAuthGrant)
    case denied
    case expired
    /// No such device code for this client, or its tokens were already collected.
    case invalid
}

/// Device authorization requests of the OpenID Connect provider.
public protocol DeviceCodeStore {
    /// Stores a new request; `StoreError.conflict` if the user code is taken (the caller draws another).
    func createDeviceAuthorization(deviceCodeHash: [UInt8], userCodeHash: [UInt8], _ request: DeviceAuthorization)
        async throws
    /// The request a person's typed code names, while it is pending and unexpired.
    func pendingDeviceAuthorization(userCodeHash: [UInt8], now: Date) async throws -> DeviceAuthorization?
    /// Records the person's answer: with a grant, the grant is created and the request approved; without, denied.
    /// False (and nothing written) unless the request is still pending and unexpired.
    func decideDeviceAuthorization(userCodeHash: [UInt8], grant: OAuthGrant?, now: Date) async throws -> Bool
    /// A device's poll; spends the device code when it returns `.approved`.
    func pollDeviceAuthorization(deviceCodeHash: [UInt8], clientID: String, now: Date) async throws -> DevicePoll
}

extension SQLStore: DeviceCodeStore {
    public func createDeviceAuthorization(
        deviceCodeHash: [UInt8], userCodeHash: [UInt8], _ d: DeviceAuthorization
    ) async throws {
        try await insert(
            """
            INSERT INTO oauth_device_codes (device_code_hash, user_code_hash, client_id, scope, status, interval_seconds,
                next_poll_at, grant_id, created_at, expires_at)
            VALUES (\(bind: Data(deviceCodeHash)), \(bind: Data(userCodeHash)), \(bind: d.clientID), \(bind: d.scope),
                \(bind: d.status.rawValue), \(bind: Int64(d.interval)), \(bind: d.createdAt.milliseconds), NULL,
                \(bind: d.createdAt.milliseconds), \(bind: d.expiresAt.milliseconds))
            """
        )
    }

    package static func deviceAuthorization(_ row: any SQLRow) throws -> DeviceAuthorization {
        DeviceAuthorization(
            clientID: try row.decode(column: "client_id", as: String.self),
            scope: try row.decode(column: "scope", as: String.self),
            status: DeviceAuthorization.Status(rawValue: try row.decode(column: "status", as: String.self)) ?? .denied,
            interval: try row.decode(column: "interval_seconds", as: Int.self),
            createdAt: Date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(milliseconds: try row.decode(column: "expires_at", as: Int64.self)))
    }

    public func pendingDeviceAuthorization(userCodeHash: [UInt8], now: Date) async throws -> DeviceAuthorization? {
        try await db.raw(
            """
            SELECT client_id, scope, status, interval_seconds, created_at, expires_at FROM oauth_device_codes
            WHERE user_code_hash = \(bind: Data(userCodeHash)) AND status = 'pending' AND expires_at > \(bind: now.milliseconds)
            """
        ).first().map(Self.deviceAuthorization)
    }

    public func decideDeviceAuthorization(userCodeHash: [UInt8], grant: OAuthGrant?, now: Date) async throws -> Bool {
        try await engine.withTransaction { db in
            if let g = grant {
                try await db.raw(
                    """
                    INSERT INTO oauth_grants (\(Self.grantColumns))
                    VALUES (\(bind: g.id), \(bind: g.clientID), \(bind: g.userID), \(bind: g.scope), NULL,
                        \(bind: g.authTime.milliseconds), \(bind: g.method), \(bind: g.createdAt.milliseconds),
                        \(bind: g.expiresAt.milliseconds), NULL, \(bind: g.passkeyBackupEligible?.column),
                        \(bind: g.sessionID))
                    """
                ).run()
            }
            let decided = try await db.raw(
                """
                UPDATE oauth_device_codes SET status = \(bind: grant == nil ? "denied" : "approved"), grant_id = \(bind: grant?.id)
                WHERE user_code_hash = \(bind: Data(userCodeHash)) AND status = 'pending' AND expires_at > \(bind: now.milliseconds)
                RETURNING client_id
                """
            ).first()
            guard let decided else {
                // Decided meanwhile or expired: the grant made above must not outlive this transaction's answer.
                if let g = grant { try await db.raw("DELETE FROM oauth_grants WHERE id = \(bind: g.id)").run() }
                return false
            }
            if let g = grant, try decided.decode(column: "client_id", as: String.self) != g.clientID {
                throw StoreError.conflict
            }
            return true
        }
    }

    public func pollDeviceAuthorization(deviceCodeHash: [UInt8], clientID: String, now: Date) async throws
        -> DevicePoll
    {
        let hash = Data(deviceCodeHash)
        let nowMs = now.milliseconds
        return try await engine.withTransaction { db in
            // Collecting is one conditional update: two polls racing for the same tokens, one wins.
            if let row = try await db.raw(
                """
                UPDATE oauth_device_codes SET status = 'redeemed'
                WHERE device_code_hash = \(bind: hash) AND client_id = \(bind: clientID) AND status = 'approved'
                AND expires_at > \(bind: nowMs)
                RETURNING grant_id
                """
            ).first() {
                guard let grant = try await Self.grant(id: try row.decode(column: "grant_id", as: String.self), db),
                    grant.revokedAt == nil
                else { return .invalid }
                return .approved(grant)
            }
            guard
                let row = try await db.raw(
                    """
                    SELECT status, interval_seconds, next_poll_at, expires_at FROM oauth_device_codes
                    WHERE device_code_hash = \(bind: hash) AND client_id = \(bind: clientID)
                    """
                ).first()
            else { return .invalid }
            let status = DeviceAuthorization.Status(rawValue: try row.decode(column: "status", as: String.self))
            if try row.decode(column: "expires_at", as: Int64.self) <= nowMs { return .expired }
            switch status {
            case .denied?: return .denied
            case .pending?:
                let interval = try row.decode(column: "interval_seconds", as: Int64.self)
                let tooSoon = try row.decode(column: "next_poll_at", as: Int64.self) > nowMs
                let next = tooSoon ? interval + 5 : interval
                try await db.raw(
                    """
                    UPDATE oauth_device_codes SET interval_seconds = \(bind: next), next_poll_at = \(bind: nowMs + next * 1000)
                    WHERE device_code_hash = \(bind: hash)
                    """
                ).run()
                return tooSoon ? .slowDown : .pending
            default: return .invalid
            }
        }
    }
}
