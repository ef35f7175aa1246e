import Crypto
import CryptoExtras
import Foundation
import WebAuthn

/// Random values, hashes and comparisons used for tokens, challenges and codes.
enum Secrets {
    /// `count` bytes from the system CSPRNG.
    static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func sha256(_ bytes: some DataProtocol) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    static func sha256(_ string: String) -> [UInt8] {
        sha256(Array(string.utf8))
    }

    static func hmac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// Compares without an early exit, so timing does not reveal how much of a secret matched.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// A new opaque token: 32 random bytes as unpadded base64url (43 characters).
    static func token() -> (token: String, hash: [UInt8]) {
        let token = Base64URL.encode(random(32))
        return (token, sha256(token))
    }
}

/// Usernames: what is accepted, and the case-folded key that is unique.
public enum Usernames {
    public static let maxLength = 64

    /// NFKC, then lower-cased: `Alice`, `ALICE` and `ａｌｉｃｅ` are one account.
    public static func key(_ username: String) -> String {
        username.precomposedStringWithCompatibilityMapping.lowercased()
    }

    /// Trims, checks length (1...64 characters) and refuses control and separator characters.
    public static func validate(_ raw: String) -> String? {
        let username = raw.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard !username.isEmpty, username.count <= maxLength else { return nil }
        for scalar in username.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .unassigned, .privateUse, .surrogate:
                return nil
            default: continue
            }
        }
        return username
    }
}

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
    static let outputLength = 32

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

    static func normalise(_ password: String) -> String {
        password.precomposedStringWithCompatibilityMapping
    }

    static func derive(_ password: String, salt: [UInt8], logN: Int, r: Int, p: Int, length: Int = outputLength) throws -> [UInt8] {
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
        return PasswordRecord(hash: try Self.derive(password, salt: salt, logN: logN, r: r, p: p), salt: salt, logN: logN, r: r, p: p)
    }

    public func verify(_ password: String, against record: PasswordRecord) throws -> Bool {
        guard (1...20).contains(record.logN), (1...32).contains(record.r), (1...16).contains(record.p) else { return false }
        let derived = try Self.derive(password, salt: record.salt, logN: record.logN, r: record.r, p: record.p)
        return Secrets.constantTimeEqual(derived, record.hash)
    }

    /// Spends the same work as a real verification, for unknown users (same timing, same answer).
    public func verifyDummy(_ password: String) throws {
        _ = try Self.derive(password, salt: Array(repeating: 0, count: 16), logN: logN, r: r, p: p)
    }

    public func needsUpgrade(_ record: PasswordRecord) -> Bool {
        record.logN != logN || record.r != r || record.p != p
    }
}
