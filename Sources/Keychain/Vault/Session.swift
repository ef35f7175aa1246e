import Crypto
import Foundation

/// An unlocked session: what `sesame keychain unlock` leaves behind so later commands need no passphrase until
/// the vault has been idle for the configured time.
///
/// A command-line tool has no long-lived process to hold a key, so the session is a file: `session` in the vault
/// directory, mode 0600, holding the vault file's file key, when the vault was unlocked, when it was last used,
/// the idle time and the user-verification window. Every command that uses it checks the time first (from an
/// injected clock) and removes the file when the idle time has passed; a use moves "last used" forward. `lock`
/// removes it at once. What this does not protect against: someone who can read the user's files while the
/// session is live (they could also read the vault and watch the passphrase being typed), and a session file left
/// behind after its idle time until the next `sesame keychain` command or `lock` removes it.
///
/// Field layout (big-endian):
/// ```
/// offset  size  field
///   0       8   magic              "SESAMEKS"
///   8       1   format             1
///   9      16   file ID            the vault file this session opens
///  25      32   file key
///  57       8   unlocked at        Unix time, milliseconds (signed)
///  65       8   last used          Unix time, milliseconds (signed)
///  73       4   idle seconds       the session ends this long after its last use
///  77       4   verify seconds     user verification holds this long after the unlock (not extended by use)
///  81           end of file
/// ```
struct Session: Sendable {
    static let magic = Array("SESAMEKS".utf8)
    static let size = 81

    let fileId: [UInt8]
    let fileKey: SymmetricKey
    let unlockedAt: Date
    var lastUsed: Date
    let idle: UInt32
    let verifyWindow: UInt32

    init(fileId: [UInt8], fileKey: SymmetricKey, unlockedAt: Date, idle: UInt32, verifyWindow: UInt32) {
        self.fileId = fileId
        self.fileKey = fileKey
        self.unlockedAt = ItemTime.truncate(unlockedAt)
        self.lastUsed = self.unlockedAt
        self.idle = idle
        self.verifyWindow = verifyWindow
    }

    init(bytes: [UInt8]) throws(KeychainError) {
        guard bytes.count == Self.size else {
            throw KeychainError(.sessionInvalid, reason: "session file has the wrong size")
        }
        var r = BinaryReader(bytes, shortCode: .sessionInvalid, what: "session file")
        guard try r.read(8) == Self.magic, try r.readUInt8() == 1 else {
            throw KeychainError(.sessionInvalid, reason: "not a session file of this format")
        }
        fileId = try r.read(16)
        fileKey = SymmetricKey(data: try r.read(32))
        guard let unlockedAt = ItemTime.date(checkedMilliseconds: Int64(bitPattern: try r.readUInt64())),
            let lastUsed = ItemTime.date(checkedMilliseconds: Int64(bitPattern: try r.readUInt64()))
        else { throw KeychainError(.sessionInvalid, reason: "session times out of range") }
        self.unlockedAt = unlockedAt
        self.lastUsed = lastUsed
        idle = try r.readUInt32()
        verifyWindow = try r.readUInt32()
    }

    var bytes: [UInt8] {
        var w = BinaryWriter()
        w.write(Self.magic)
        w.write(UInt8(1))
        w.write(fileId)
        w.write(fileKey.withUnsafeBytes { Array($0) })
        w.write(UInt64(bitPattern: ItemTime.milliseconds(unlockedAt)))
        w.write(UInt64(bitPattern: ItemTime.milliseconds(lastUsed)))
        w.write(idle)
        w.write(verifyWindow)
        return w.bytes
    }

    /// Live at `now`: used within the idle time, and not from the future (a clock set back by more than a minute
    /// ends the session rather than extending it).
    func isLive(at now: Date) -> Bool {
        now.timeIntervalSince(lastUsed) <= Double(idle) && now.timeIntervalSince(lastUsed) >= -60
            && now.timeIntervalSince(unlockedAt) >= -60
    }

    /// When the session ends if unused.
    var expires: Date { lastUsed.addingTimeInterval(Double(idle)) }

    /// Whether the passphrase was entered recently enough to count as user verification at `now`.
    func verifiesUser(at now: Date) -> Bool {
        let age = now.timeIntervalSince(unlockedAt)
        return age >= -60 && age <= Double(verifyWindow)
    }
}
