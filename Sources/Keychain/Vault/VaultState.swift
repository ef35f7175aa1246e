import Foundation

/// Everything inside the local vault file's encrypted body: this device's identity and, once it belongs to a
/// vault, the vault's keys, device list, items and sync bookkeeping. ``VaultBody`` reads and writes it.
struct VaultState: Sendable {
    var device: LocalDevice
    /// Present once the device holds the vault key (after `init`, an approved `join`, or `recover`).
    var vault: VaultMembership?
    /// Present while a `join` waits for approval.
    var join: PendingJoin?
}

/// This device: its identifier, its own X25519 key pair (made here, never sent anywhere but its public half) and
/// the name people see in the device list.
struct LocalDevice: Sendable {
    let id: [UInt8]
    let key: DeviceKey
    var name: String

    static func make(name: String) -> LocalDevice {
        LocalDevice(id: SecureRandom.bytes(16), key: .generate(), name: name)
    }
}

/// A device as the vault's authenticated device list (the roster, inside the sealed manifest) records it. Only
/// keys in this list are ever trusted; the server's own list of devices is never used to choose a key.
public struct RosterEntry: Sendable, Hashable {
    public let id: [UInt8]
    public let publicKey: [UInt8]
    public var name: String
    public let added: Date

    public var fingerprint: KeyFingerprint { KeyFingerprint(publicKey: publicKey) }
}

/// A join waiting for approval: the request's identifier and the pairing secret shown in the code.
struct PendingJoin: Sendable {
    let requestId: [UInt8]
    let secret: [UInt8]
    let created: Date
}

/// The vault as this device holds it.
struct VaultMembership: Sendable {
    let vaultId: [UInt8]
    var key: VaultKey
    var roster: [RosterEntry]
    var recovery: RecoveryPublicInfo
    /// The keychain's sharing identity, the same on every device of the vault.
    var sharingKey: DeviceKey
    var entries: [ItemID: ItemEntry]
    /// The vault version of the last manifest applied or pushed (0: never synced).
    var syncedVersion: UInt64
    /// The highest vault version this device has seen; a server offering less is rolling back.
    var highestSeenVersion: UInt64
    /// Digest of the manifest at ``syncedVersion``; the same version must always come with the same manifest.
    var manifestDigest: [UInt8]?
    /// Device-list changes made here and not yet pushed.
    var rosterChanges: RosterChanges
    var sentShares: [SentShare]
    var acceptedShares: Set<[UInt8]>
    /// When this device last synced with the server successfully (pulled, checked and, if it had changes, pushed);
    /// nil: never. Shown by `status` and the window; not used by any rule.
    var lastSynced: Date? = nil

    /// The items as they are now on this device: synced content with local changes applied.
    var items: [KeychainItem] {
        entries.values.compactMap(\.current).sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    }

    var hasPendingChanges: Bool {
        syncedVersion == 0 || !rosterChanges.isEmpty || entries.values.contains { $0.pending != nil }
    }
}

/// Devices added (approved here) or removed here, waiting for the next push. A removal rotates the vault key
/// at that push.
struct RosterChanges: Sendable, Hashable {
    var added: [RosterEntry] = []
    var removed: [[UInt8]] = []

    var isEmpty: Bool { added.isEmpty && removed.isEmpty }
}

/// One item's history as far as this device knows it.
struct ItemEntry: Sendable, Hashable {
    /// The record last agreed with the server.
    var synced: SyncedRecord?
    /// A local change not yet pushed.
    var pending: PendingChange?

    var current: KeychainItem? {
        switch pending {
        case .put(let item): item
        case .delete: nil
        case nil: synced?.item
        }
    }
}

/// An item record as the server holds it: its version, the digest of its sealed bytes, and its content (nil for
/// a tombstone).
struct SyncedRecord: Sendable, Hashable {
    let version: UInt64
    let digest: [UInt8]
    let item: KeychainItem?
    let deletedAt: Date?
}

enum PendingChange: Sendable, Hashable {
    case put(KeychainItem)
    case delete(Date)
}

/// A share this keychain sent, so the sender can list and revoke it.
public struct SentShare: Sendable, Hashable {
    public let id: [UInt8]
    public let recipientKey: [UInt8]
    public let itemId: ItemID
    public let itemTitle: String
    public let created: Date

    public var recipientFingerprint: KeyFingerprint { KeyFingerprint(publicKey: recipientKey) }
}
