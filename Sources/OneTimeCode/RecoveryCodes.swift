import Crypto
import SesameBytes

/// Single-use recovery codes: the way back in when the device that makes one-time codes is lost.
///
/// Each code is 16 symbols of Crockford's Base32 alphabet (`0-9`, `A-Z` without `I`, `L`, `O`, `U`), i.e. 80 bits
/// from the system CSPRNG, shown in four groups: `7F3K-M9QD-2XWB-HC4T`. When a code is typed back, case, spaces
/// and dashes are ignored and the look-alikes are folded (`O`→`0`, `I`/`L`→`1`), so confusing them never locks
/// anyone out.
///
/// Only hashes are stored. A hash is SHA-256 over a per-set random salt and the normalised code. A fast hash is
/// enough here, unlike for passwords: a code is 80 uniformly random bits, so recovering one from a stolen hash
/// takes about 2^79 SHA-256 evaluations whatever the hash's cost, and a slow KDF would add only a constant factor
/// to an already infeasible search. (Slow KDFs exist to protect low-entropy, human-chosen secrets.) The salt stops
/// an attacker holding many users' hashes from attacking them all at once (a multi-target search), and keeps equal
/// codes in different sets from having equal hashes.
public struct RecoveryCodeSet: Sendable, Hashable {
    /// Symbols per code; 16 × 5 bits = 80 bits.
    public static let symbolCount = 16
    /// Symbols between dashes when a code is shown.
    public static let groupSize = 4
    static let alphabet: [UInt8] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    static let saltByteCount = 16

    /// Random per-set salt, stored beside the hashes.
    public let salt: [UInt8]
    /// SHA-256 hashes (32 bytes each) of the codes not yet used.
    public private(set) var hashes: [[UInt8]]

    /// Restores a set from storage.
    public init(salt: [UInt8], hashes: [[UInt8]]) throws(OneTimeCodeError) {
        guard salt.count == Self.saltByteCount, hashes.allSatisfy({ $0.count == SHA256.byteCount }) else {
            throw OneTimeCodeError(.invalidRecoveryCode, reason: "stored salt or hash has the wrong length")
        }
        self.salt = salt
        self.hashes = hashes
    }

    /// Makes `count` new codes. Show `codes` to the user once; store only the returned set.
    public static func generate(count: Int = 10) throws(OneTimeCodeError) -> (codes: [String], set: RecoveryCodeSet) {
        guard (1...100).contains(count) else {
            throw OneTimeCodeError(.invalidRecoveryCode, reason: "a set holds 1 to 100 codes")
        }
        let salt = SecureRandom.bytes(saltByteCount)
        var generator = SystemRandomNumberGenerator()
        var codes: [String] = []
        var hashes: [[UInt8]] = []
        while codes.count < count {
            // Each symbol is an independent uniform choice of 32: 5 bits, no modulo bias.
            let symbols = (0..<symbolCount).map { _ in alphabet[Int.random(in: 0..<32, using: &generator)] }
            let hash = Self.hash(salt: salt, normalised: symbols)
            if hashes.contains(hash) { continue }  // 2^-80 per pair; kept so a set never holds duplicates.
            hashes.append(hash)
            codes.append(display(symbols))
        }
        return (codes, try RecoveryCodeSet(salt: salt, hashes: hashes))
    }

    /// Whether `code` is one of the unused codes, checked against every stored hash in constant time.
    /// Returns the index of the matching hash. Does not consume it: see ``redeem(_:)``.
    public func match(_ code: String) -> Int? {
        guard let normalised = Self.normalise(code) else { return nil }
        let candidate = Self.hash(salt: salt, normalised: normalised)
        var found: Int? = nil
        for (index, stored) in hashes.enumerated() where ConstantTime.equal(stored, candidate) {
            found = index
        }
        return found
    }

    /// Checks `code` and, when it matches, removes its hash so it can never be used again. The caller persists
    /// the updated set in the same transaction as the sign-in it authorises.
    public mutating func redeem(_ code: String) -> Bool {
        guard let index = match(code) else { return false }
        hashes.remove(at: index)
        return true
    }

    /// Codes still usable.
    public var remaining: Int { hashes.count }

    /// Upper-cases, removes spaces and dashes, folds look-alikes; `nil` unless exactly 16 alphabet symbols remain.
    static func normalise(_ code: String) -> [UInt8]? {
        guard code.utf8.count <= 64 else { return nil }
        var output: [UInt8] = []
        for var byte in code.utf8 {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-") { continue }
            if byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { byte -= 0x20 }
            switch byte {
            case UInt8(ascii: "O"): byte = UInt8(ascii: "0")
            case UInt8(ascii: "I"), UInt8(ascii: "L"): byte = UInt8(ascii: "1")
            default: break
            }
            guard alphabet.contains(byte) else { return nil }
            output.append(byte)
        }
        return output.count == symbolCount ? output : nil
    }

    static func display(_ symbols: [UInt8]) -> String {
        var output: [UInt8] = []
        for (index, symbol) in symbols.enumerated() {
            if index > 0, index % groupSize == 0 { output.append(UInt8(ascii: "-")) }
            output.append(symbol)
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func hash(salt: [UInt8], normalised: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: Array("sesame recovery code v1\0".utf8))
        hasher.update(data: salt)
        hasher.update(data: normalised)
        return Array(hasher.finalize())
    }
}
