/// Domain-separation labels: every key derivation, HPKE `info` and AEAD associated data starts with one of these,
/// so a value made for one purpose can never be accepted for another (an item for a manifest, a device wrap for
/// a recovery wrap, a vault's record for another vault's).
enum Domain {
    static let record = "sesame-keychain/record/v1"
    static let fileKeyWrap = "sesame-keychain/file-key/v1"
    static let fileBody = "sesame-keychain/file-body/v1"
    static let deviceWrap = "sesame-keychain/device-wrap/v1"
    static let joinWrap = "sesame-keychain/join-wrap/v1"
    static let joinPSK = "sesame-keychain/join-psk/v1"
    static let recoveryWrap = "sesame-keychain/recovery-wrap/v1"
    static let recoveryDerive = "sesame-keychain/recovery-key/v1"
    static let recoveryChecksum = "sesame-keychain/recovery-checksum/v1"
    static let share = "sesame-keychain/share/v1"
    static let fingerprint = "sesame-keychain/fingerprint/v1"
    static let pairing = "sesame-keychain/pairing/v1"

    static func bytes(_ label: String) -> [UInt8] { Array(label.utf8) }
}
