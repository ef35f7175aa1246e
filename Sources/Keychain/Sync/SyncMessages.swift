import Foundation

// The sync protocol's messages. Each is JSON with binary values in unpadded base64url; docs/keychain.md has the
// endpoint table. The server stores and relays these values; every blob is opaque to it (sealed records, HPKE
// messages), and every identifier it sees is random.

/// A sealed record as the server stores it: the item (or manifest-listed tombstone) ID, its version and the
/// sealed bytes (``SealedRecord``).
/// ```json
/// {"id": "<16 bytes>", "version": 3, "blob": "<sealed record>"}
/// ```
public struct WireRecord: Sendable, Hashable, Decodable {
    public let id: [UInt8]
    public let version: UInt64
    public let blob: [UInt8]

    public init(id: [UInt8], version: UInt64, blob: [UInt8]) {
        self.id = id
        self.version = version
        self.blob = blob
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["id", "version", "blob"], in: "record")
        id = try c.bytes("id", count: 16...16)
        version = try c.uint64("version")
        blob = try c.bytes("blob", count: SealedRecord.overhead...SealedRecord.maximumSize)
    }

    var object: [String: Any] { ["id": b64(id), "version": version, "blob": b64(blob)] }
}

/// A vault key wrapped by one device (`sender`) for another (`device`) when the key rotates or a device is added
/// (``HPKEBox`` in auth mode).
/// ```json
/// {"device": "<16 bytes>", "sender": "<16 bytes>", "epoch": 2, "blob": "<HPKE message>"}
/// ```
public struct WireWrap: Sendable, Hashable, Decodable {
    public let device: [UInt8]
    public let sender: [UInt8]
    public let epoch: UInt32
    public let blob: [UInt8]

    public init(device: [UInt8], sender: [UInt8], epoch: UInt32, blob: [UInt8]) {
        self.device = device
        self.sender = sender
        self.epoch = epoch
        self.blob = blob
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["device", "sender", "epoch", "blob"], in: "key wrap")
        device = try c.bytes("device", count: 16...16)
        sender = try c.bytes("sender", count: 16...16)
        epoch = try c.uint32("epoch")
        blob = try c.bytes("blob", count: 36...4096)
    }

    var object: [String: Any] { ["device": b64(device), "sender": b64(sender), "epoch": epoch, "blob": b64(blob)] }
}

/// The vault key wrapped for the recovery key (``HPKEBox`` in psk mode).
/// ```json
/// {"epoch": 2, "blob": "<HPKE message>"}
/// ```
public struct WireRecovery: Sendable, Hashable, Decodable {
    public let epoch: UInt32
    public let blob: [UInt8]

    public init(epoch: UInt32, blob: [UInt8]) {
        self.epoch = epoch
        self.blob = blob
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["epoch", "blob"], in: "recovery wrap")
        epoch = try c.uint32("epoch")
        blob = try c.bytes("blob", count: 36...4096)
    }

    var object: [String: Any] { ["epoch": epoch, "blob": b64(blob)] }
}

/// A device as the server lists it: what it needs to route wraps and show a device count. Never trusted by
/// clients, which use the sealed device list in the manifest.
/// ```json
/// {"id": "<16 bytes>", "publicKey": "<32 bytes>"}
/// ```
public struct WireDevice: Sendable, Hashable, Decodable {
    public let id: [UInt8]
    public let publicKey: [UInt8]

    public init(id: [UInt8], publicKey: [UInt8]) {
        self.id = id
        self.publicKey = publicKey
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["id", "publicKey"], in: "device")
        id = try c.bytes("id", count: 16...16)
        publicKey = try c.bytes("publicKey", count: 32...32)
    }

    var object: [String: Any] { ["id": b64(id), "publicKey": b64(publicKey)] }
}

/// `GET /keychain/sync?since=N&device=ID` answer: the vault's current version and manifest, every record
/// written after version `since`, the key wraps addressed to `device`, the recovery wrap and the device listing.
/// An account without a vault answers `{"format": 1, "vault": null, "version": 0, ...}` with empty lists.
/// ```json
/// {"format": 1, "vault": "<16 bytes>" | null, "version": 42, "manifest": "<sealed record>" | null,
///  "records": [record...], "wraps": [wrap...], "recovery": recovery | null, "devices": [device...]}
/// ```
public struct PullResponse: Sendable, Hashable, Decodable {
    public var vault: [UInt8]?
    public var version: UInt64
    public var manifest: [UInt8]?
    public var records: [WireRecord]
    public var wraps: [WireWrap]
    public var recovery: WireRecovery?
    public var devices: [WireDevice]

    public init(
        vault: [UInt8]?, version: UInt64, manifest: [UInt8]?, records: [WireRecord], wraps: [WireWrap],
        recovery: WireRecovery?, devices: [WireDevice]
    ) {
        self.vault = vault
        self.version = version
        self.manifest = manifest
        self.records = records
        self.wraps = wraps
        self.recovery = recovery
        self.devices = devices
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "vault", "version", "manifest", "records", "wraps", "recovery", "devices"], in: "pull")
        try c.format(in: "pull")
        vault = try c.optionalBytes("vault", count: 16...16)
        version = try c.uint64("version")
        manifest = try c.optionalBytes("manifest", count: SealedRecord.overhead...SealedRecord.maximumSize)
        records = try c.array("records", of: WireRecord.self, maximum: 1_000_000)
        wraps = try c.array("wraps", of: WireWrap.self, maximum: 10_000)
        recovery = try c.decodeIfPresent(WireRecovery.self, forKey: .init("recovery"))
        devices = try c.array("devices", of: WireDevice.self, maximum: 10_000)
    }

    public init(json: [UInt8]) throws(KeychainError) { self = try WireJSON.decode(Self.self, json) }

    public var json: [UInt8] {
        WireJSON.encode([
            "format": WireJSON.format, "vault": vault.map(b64) ?? NSNull(), "version": version,
            "manifest": manifest.map(b64) ?? NSNull(), "records": records.map(\.object), "wraps": wraps.map(\.object),
            "recovery": recovery?.object ?? NSNull(), "devices": devices.map(\.object),
        ])
    }
}

/// `POST /keychain/sync` body: the records this device changed, the manifest of the new version, and when the
/// key rotated or a device was added, the new wraps; the full device listing; the recovery wrap. The server
/// accepts it only if its version is still `expectedVersion` (then the vault is at `expectedVersion + 1`),
/// else answers 409 `{"error": "keychain_version_conflict", "version": "<current, decimal>", "message": …}`.
/// ```json
/// {"format": 1, "vault": "<16 bytes>", "expectedVersion": 41, "manifest": "<sealed record>",
///  "records": [record...], "wraps": [wrap...], "recovery": recovery, "devices": [device...]}
/// ```
public struct PushRequest: Sendable, Hashable, Decodable {
    public var vault: [UInt8]
    public var expectedVersion: UInt64
    public var manifest: [UInt8]
    public var records: [WireRecord]
    public var wraps: [WireWrap]
    public var recovery: WireRecovery
    public var devices: [WireDevice]

    public init(
        vault: [UInt8], expectedVersion: UInt64, manifest: [UInt8], records: [WireRecord], wraps: [WireWrap],
        recovery: WireRecovery, devices: [WireDevice]
    ) {
        self.vault = vault
        self.expectedVersion = expectedVersion
        self.manifest = manifest
        self.records = records
        self.wraps = wraps
        self.recovery = recovery
        self.devices = devices
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(
            ["format", "vault", "expectedVersion", "manifest", "records", "wraps", "recovery", "devices"], in: "push")
        try c.format(in: "push")
        vault = try c.bytes("vault", count: 16...16)
        expectedVersion = try c.uint64("expectedVersion")
        manifest = try c.bytes("manifest", count: SealedRecord.overhead...SealedRecord.maximumSize)
        records = try c.array("records", of: WireRecord.self, maximum: 1_000_000)
        wraps = try c.array("wraps", of: WireWrap.self, maximum: 10_000)
        recovery = try c.decode(WireRecovery.self, forKey: .init("recovery"))
        devices = try c.array("devices", of: WireDevice.self, maximum: 10_000)
    }

    public init(json: [UInt8]) throws(KeychainError) { self = try WireJSON.decode(Self.self, json) }

    public var json: [UInt8] {
        WireJSON.encode([
            "format": WireJSON.format, "vault": b64(vault), "expectedVersion": expectedVersion,
            "manifest": b64(manifest), "records": records.map(\.object), "wraps": wraps.map(\.object),
            "recovery": recovery.object, "devices": devices.map(\.object),
        ])
    }
}

/// The answer to an accepted push: `{"format": 1, "version": 42}`.
public struct PushResponse: Sendable, Hashable, Decodable {
    public let version: UInt64

    public init(version: UInt64) { self.version = version }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "version"], in: "push response")
        try c.format(in: "push response")
        version = try c.uint64("version")
    }

    public init(json: [UInt8]) throws(KeychainError) { self = try WireJSON.decode(Self.self, json) }
    public var json: [UInt8] { WireJSON.encode(["format": WireJSON.format, "version": version]) }
}

/// A new device asking to join (`POST /keychain/join`): its own random request and device IDs and its public
/// key. The server keeps it until an enrolled device approves it.
/// ```json
/// {"format": 1, "request": "<16 bytes>", "device": "<16 bytes>", "publicKey": "<32 bytes>"}
/// ```
public struct JoinRequest: Sendable, Hashable, Decodable {
    public let request: [UInt8]
    public let device: [UInt8]
    public let publicKey: [UInt8]

    public init(request: [UInt8], device: [UInt8], publicKey: [UInt8]) {
        self.request = request
        self.device = device
        self.publicKey = publicKey
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "request", "device", "publicKey"], in: "join request")
        try c.format(in: "join request")
        request = try c.bytes("request", count: 16...16)
        device = try c.bytes("device", count: 16...16)
        publicKey = try c.bytes("publicKey", count: 32...32)
    }

    public init(json: [UInt8]) throws(KeychainError) { self = try WireJSON.decode(Self.self, json) }
    public var json: [UInt8] {
        WireJSON.encode([
            "format": WireJSON.format, "request": b64(request), "device": b64(device), "publicKey": b64(publicKey),
        ])
    }
}

/// An enrolled device's approval of a join (`POST /keychain/join/{request}/approval`): the vault key sealed to the
/// new device's key with the pairing code's secret as HPKE pre-shared key.
/// ```json
/// {"format": 1, "request": "<16 bytes>", "blob": "<HPKE message>"}
/// ```
public struct JoinApproval: Sendable, Hashable, Decodable {
    public let request: [UInt8]
    public let blob: [UInt8]

    public init(request: [UInt8], blob: [UInt8]) {
        self.request = request
        self.blob = blob
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "request", "blob"], in: "join approval")
        try c.format(in: "join approval")
        request = try c.bytes("request", count: 16...16)
        blob = try c.bytes("blob", count: 36...4096)
    }

    public init(json: [UInt8]) throws(KeychainError) { self = try WireJSON.decode(Self.self, json) }
    public var json: [UInt8] {
        WireJSON.encode(["format": WireJSON.format, "request": b64(request), "blob": b64(blob)])
    }
}

/// An item offered to another keychain (`POST /keychain/shares`), sealed from the sender's sharing key to the
/// recipient's (``HPKEBox`` in auth mode).
/// ```json
/// {"format": 1, "id": "<16 bytes>", "sender": "<32-byte key>", "recipient": "<32-byte key>", "blob": "<HPKE message>"}
/// ```
public struct ShareMessage: Sendable, Hashable, Decodable {
    public let id: [UInt8]
    public let sender: [UInt8]
    public let recipient: [UInt8]
    public let blob: [UInt8]

    public init(id: [UInt8], sender: [UInt8], recipient: [UInt8], blob: [UInt8]) {
        self.id = id
        self.sender = sender
        self.recipient = recipient
        self.blob = blob
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: WireJSON.Key.self)
        try c.only(["format", "id", "sender", "recipient", "blob"], in: "share")
        try c.format(in: "share")
        id = try c.bytes("id", count: 16...16)
        sender = try c.bytes("sender", count: 32...32)
        recipient = try c.bytes("recipient", count: 32...32)
        blob = try c.bytes("blob", count: 36...HPKEBox.maximumSize)
    }

    public init(json: [UInt8]) throws(KeychainError) { self = try WireJSON.decode(Self.self, json) }
    public var json: [UInt8] {
        WireJSON.encode([
            "format": WireJSON.format, "id": b64(id), "sender": b64(sender), "recipient": b64(recipient),
            "blob": b64(blob),
        ])
    }
}
