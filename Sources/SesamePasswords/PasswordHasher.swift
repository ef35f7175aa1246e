import CryptoExtras
import Foundation
import SesameCore
import SesameBytes

/// Password hashing with scrypt (RFC 7914) from CryptoExtras.
///
/// Parameters: N = 2^logN (default 2^15), r = 8, p = 1, 16-byte random salt, 32-byte output; about 32 MiB and
/// tens of milliseconds per hash. The parameters are stored with each hash; a sign-in with older parameters
/// re-hashes the password with the current ones. Length rules follow NIST SP 800-63B §3.1.1.2: at least 8
/// characters, at most 256, no composition rules, Unicode normalised (NFKC) before hashing, every character allowed.
public struct PasswordHasher: Sendable {
    public static let minimumLength = 8
    public static let maximumLength = 256
    public let logN: Int
    public let r = 8
    public let p = 1
    package static let outputLength = 32

    public init(logN: Int) {
        self.logN = logN
    }

    public enum Problem: Equatable, Sendable {
        case tooShort
        case tooLong
    }

    /// The NIST length rules; counts Unicode scalar values after normalisation.
    public static func check(_ password: String) -> Problem? {
        let count = normalise(password).unicodeScalars.count
        if count < minimumLength { return .tooShort }
        if count > maximumLength { return .tooLong }
        return nil
    }

    package static func normalise(_ password: String) -> String {
        password.precomposedStringWithCompatibilityMapping
    }

    package static func derive(_ password: String, salt: [UInt8], logN: Int, r: Int, p: Int, length: Int = outputLength)
        throws
        -> [UInt8]
    {
        let bytes = Array(normalise(password).utf8)
        // CryptoExtras needs a non-empty password buffer; the length rules already exclude empty passwords,
        // but the dummy verification path must not depend on that.
        let input = bytes.isEmpty ? [0] : bytes
        let key = try KDF.Scrypt.deriveKey(
            from: input, salt: salt, outputByteCount: length, rounds: 1 << logN, blockSize: r, parallelism: p
        )
        return key.withUnsafeBytes { Array($0) }
    }

    public func hash(_ password: String) throws -> PasswordRecord {
        let salt = Secrets.random(16)
        return PasswordRecord(
            hash: try Self.derive(password, salt: salt, logN: logN, r: r, p: p), salt: salt, logN: logN, r: r, p: p)
    }

    public func verify(_ password: String, against record: PasswordRecord) throws -> Bool {
        guard (1...20).contains(record.logN), (1...32).contains(record.r), (1...16).contains(record.p) else {
            return false
        }
        let derived = try Self.derive(password, salt: record.salt, logN: record.logN, r: record.r, p: record.p)
        return ConstantTime.equal(derived, record.hash)
    }

    /// Spends the same work as a real verification, for unknown users (same timing, same answer).
    public func verifyDummy(_ password: String) throws {
        _ = try Self.derive(password, salt: Array(repeating: 0, count: 16), logN: logN, r: r, p: p)
    }

    public func needsUpgrade(_ record: PasswordRecord) -> Bool {
        record.logN != logN || record.r != r || record.p != p
    }
}
