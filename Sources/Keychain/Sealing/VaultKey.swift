import Crypto

/// The key every item of a vault is sealed with: 256 random bits, numbered by its epoch. Removing a device moves
/// the vault to a new epoch with a new key (see ``KeyRotation``).
struct VaultKey: Sendable {
    let epoch: UInt32
    let key: SymmetricKey

    init(epoch: UInt32, bytes: [UInt8]) throws(KeychainError) {
        guard bytes.count == 32 else { throw KeychainError(.malformedRecord, reason: "a vault key is 32 bytes") }
        self.epoch = epoch
        self.key = SymmetricKey(data: bytes)
    }

    static func random(epoch: UInt32) -> VaultKey {
        VaultKey(epoch: epoch, key: SymmetricKey(size: .bits256))
    }

    private init(epoch: UInt32, key: SymmetricKey) {
        self.epoch = epoch
        self.key = key
    }

    var bytes: [UInt8] { key.withUnsafeBytes { Array($0) } }
}
