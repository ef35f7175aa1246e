import Foundation
import Keychain
import SesameCore

/// The server half of keychain sync (docs/keychain.md, "Sync over `sesame serve`"): device enrollment and its
/// tokens, and the rules the sync routes apply before the store (`KeychainSyncStore`) writes. The server never
/// opens anything it stores; every message is parsed with the keychain's own strict parsers (`SyncMessages.swift`)
/// and stored as the bytes it carried.
package struct KeychainSync: Sendable {
    /// The core's store (accounts, rate limits) with this feature's own part (`KeychainSyncStore`).
    package let store: any Store & KeychainSyncStore
    package let clock: ServerClock
    package let audit: AuditLog
    package let rateLimits: RateLimitPolicy
    /// `keychainQuota`: what one account's keychain may hold on the server, in MiB and in bytes.
    package let quotaMiB: Int
    package var quotaBytes: Int64 { Int64(quotaMiB) * 1024 * 1024 }

    /// The largest sync message the routes read (a push of a whole vault of 10,000 passkeys is about 6 MiB).
    package static let maximumMessageBytes = 64 * 1024 * 1024
    /// Join requests an account may have waiting at once.
    package static let waitingJoinRequests = 10
    /// Share offers an account may have out at once.
    package static let openShares = 1000

    package init(sesame: ServerCore, store: any Store & KeychainSyncStore) {
        self.store = store
        clock = sesame.clock
        audit = sesame.audit
        rateLimits = sesame.rateLimiter.policy
        quotaMiB = sesame.configuration.keychainQuota
    }

    // MARK: Device tokens

    /// Bad device tokens from one client address share one bucket with the address limit of the other guessable
    /// secrets' policy (`perAddress` per window). Past it, every token from that address, right or wrong, is
    /// answered 429 until the window ends, so the answer never tells a guess that was right.
    package static func bucket(address: String) -> String { "keychain_token:" + RateLimiter.bucket(address: address) }

    /// The device the `Authorization` header's token names, or nil without a bearer header. A malformed, unknown,
    /// revoked or wrong token is 401 `keychain_device_unknown` and counts against the address; a disabled account
    /// is 403 `account_disabled`.
    package func authenticate(authorization: String?, address: String) async throws -> KeychainDevice? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let now = clock.now()
        let bucket = Self.bucket(address: address)
        let window = rateLimits.window
        let counted = try await store.failures(bucket: bucket, now: now, window: window)
        if counted.count >= rateLimits.perAddress {
            let retry = counted.windowStart.addingTimeInterval(window).timeIntervalSince(now)
            throw APIError.tooManyAttempts(retryAfter: Int(retry.rounded(.up)))
        }
        guard let token = KeychainDeviceToken(String(parts[1])),
            let found = try await store.keychainEnrollment(id: token.id),
            token.matches(storedHash: found.tokenHash)
        else {
            _ = try await store.recordFailure(bucket: bucket, now: now, window: window)
            throw APIError.keychainDeviceUnknown
        }
        let enrollment = found.enrollment
        guard let user = try await store.user(id: enrollment.userID) else { throw APIError.keychainDeviceUnknown }
        guard !user.disabled else { throw APIError.accountDisabled }
        return KeychainDevice(enrollment: enrollment, user: user)
    }

    /// Enrolls a device for the signed-in account: a new token, shown once.
    package func enroll(user: User, name: String, context: some ClientContext) async throws -> (
        token: String, enrollment: KeychainEnrollment
    ) {
        let issued = KeychainDeviceToken.issue()
        let now = clock.now()
        let enrollment = KeychainEnrollment(
            id: issued.id, userID: user.id, name: name, device: nil, createdAt: now, lastUsedAt: now)
        try await store.createKeychainEnrollment(enrollment, tokenHash: issued.hash)
        await audit.record(.keychainDeviceEnrolled, .success, user: user, context: context)
        return (issued.token, enrollment)
    }

    /// Makes the token act for `device` (see `KeychainSyncStore.bindKeychainEnrollment`); 403
    /// `keychain_device_mismatch` when it already acts for another device of the vault.
    package func bind(_ device: KeychainDevice, to id: [UInt8]) async throws {
        guard try await store.bindKeychainEnrollment(id: device.enrollment.id, device: id, at: clock.now()) else {
            throw APIError.keychainDeviceMismatch
        }
    }

    // MARK: Sync

    /// Pull-since-version for the device the token acts for.
    package func pull(_ device: KeychainDevice, since: UInt64, for id: [UInt8]) async throws -> PullResponse {
        try await bind(device, to: id)
        return try await store.keychainPull(userID: device.user.id, since: since, device: id)
    }

    /// Push-with-expected-version. The token must already act for a device (it pulled first, as every sync
    /// does), and that device must stay on the device list it pushes: a device cannot push itself out, and a
    /// device taken off the list by another loses its token in the same transaction.
    package func push(_ device: KeychainDevice, _ request: PushRequest, context: some ClientContext) async throws
        -> PushResponse
    {
        guard let me = device.enrollment.device, request.devices.contains(where: { $0.id == me }) else {
            throw APIError.keychainDeviceMismatch
        }
        guard Set(request.records.map(\.id)).count == request.records.count,
            Set(request.devices.map(\.id)).count == request.devices.count
        else { throw APIError.keychainInvalidMessage("A record or device is listed twice.") }
        switch try await store.keychainPush(userID: device.user.id, request, quota: quotaBytes, at: clock.now()) {
        case .accepted(let version, let revoked):
            try await store.touchKeychainEnrollment(id: device.enrollment.id, at: clock.now())
            if revoked > 0 {
                await audit.record(
                    .keychainDeviceRemoved, .success, user: device.user, context: context,
                    detail: "\(revoked) device tokens revoked")
            }
            return PushResponse(version: version)
        case .conflict(let current):
            throw APIError.keychainVersionConflict(current: current)
        case .wrongVault:
            throw APIError.keychainWrongVault
        case .staleRecord:
            throw APIError.keychainInvalidMessage("A record does not move its item's version forward.")
        case .overQuota:
            throw APIError.keychainQuotaReached(quotaMiB)
        }
    }
}

extension KeychainSync {
    /// Parses a sync message with the keychain's strict parser; a message that is not the documented shape is 400
    /// `keychain_invalid_message` (the reason names the message, never its bytes).
    package static func parse<T>(_ what: String, _ body: () throws(KeychainError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw APIError.keychainInvalidMessage("The \(what) is not the documented JSON (\(error.code)).")
        }
    }
}
