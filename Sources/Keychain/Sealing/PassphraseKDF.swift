import Crypto
import CryptoExtras
import Foundation

/// scrypt (RFC 7914) parameters for the key that opens the local vault file.
public struct ScryptParameters: Sendable, Hashable, CustomStringConvertible {
    /// log2 of the cost parameter N.
    public var logN: UInt8
    /// Block size r.
    public var r: UInt32
    /// Parallelism p.
    public var p: UInt32

    public init(logN: UInt8, r: UInt32, p: UInt32) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// New vaults: N = 2^17, r = 8, p = 1 (128 MiB, a few hundred milliseconds).
    public static let `default` = ScryptParameters(logN: 17, r: 8, p: 1)

    /// Bytes of memory scrypt uses: 128 · r · N.
    public var memory: UInt64 { 128 * UInt64(r) << UInt64(logN) }

    public var description: String { "scrypt(N=2^\(logN), r=\(r), p=\(p))" }
}

/// What the client accepts, whatever a file says: the minimum is the client's own, so a planted or edited file
/// cannot make the passphrase cheaper to guess; the maximum keeps a planted file from exhausting memory.
///
/// The policy is a value the calling code chooses (the command line always uses ``standard``); tests pass a
/// weaker one explicitly to keep each unlock fast. Nothing read from a file or the network can change it.
public struct KDFPolicy: Sendable, Hashable {
    public var minimum: ScryptParameters
    public var maximumMemory: UInt64
    public var maximumLogN: UInt8
    public var maximumP: UInt32

    public init(
        minimum: ScryptParameters, maximumMemory: UInt64 = 1 << 30, maximumLogN: UInt8 = 22, maximumP: UInt32 = 16
    ) {
        self.minimum = minimum
        self.maximumMemory = maximumMemory
        self.maximumLogN = maximumLogN
        self.maximumP = maximumP
    }

    /// N ≥ 2^17, r ≥ 8, p ≥ 1; at most 1 GiB, N ≤ 2^22, p ≤ 16.
    public static let standard = KDFPolicy(minimum: .default)

    func check(_ parameters: ScryptParameters) throws(KeychainError) {
        guard parameters.logN >= minimum.logN, parameters.r >= minimum.r, parameters.p >= minimum.p else {
            throw KeychainError(
                .weakKDFParameters, reason: "\(parameters) is below this client's minimum \(minimum)")
        }
        guard parameters.logN <= maximumLogN, parameters.p <= maximumP, parameters.r <= 1024,
            parameters.memory <= maximumMemory
        else {
            throw KeychainError(.kdfParametersTooCostly, reason: "\(parameters) exceeds this client's maximum")
        }
    }
}

/// Passphrases: at least ``minimumLength`` characters, compared after Unicode NFC normalisation (so the same
/// passphrase typed on two keyboards gives the same key).
public enum Passphrase {
    public static let minimumLength = 8
    public static let maximumBytes = 1024

    static func normalised(_ passphrase: String) throws(KeychainError) -> [UInt8] {
        let bytes = Array(passphrase.precomposedStringWithCanonicalMapping.utf8)
        guard bytes.count <= maximumBytes else {
            throw KeychainError(.passphraseTooShort, reason: "a passphrase is at most \(maximumBytes) bytes")
        }
        return bytes
    }

    /// Checks a new passphrase.
    static func checkNew(_ passphrase: String) throws(KeychainError) {
        guard passphrase.count >= minimumLength else {
            throw KeychainError(.passphraseTooShort, reason: "a passphrase has at least \(minimumLength) characters")
        }
    }

    /// The key-encryption key for the vault file.
    static func deriveKey(
        _ passphrase: String, salt: [UInt8], parameters: ScryptParameters, policy: KDFPolicy
    ) throws(KeychainError) -> SymmetricKey {
        try policy.check(parameters)
        let password = try normalised(passphrase)
        do {
            return try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: 32, rounds: 1 << Int(parameters.logN),
                blockSize: Int(parameters.r), parallelism: Int(parameters.p))
        } catch {
            throw KeychainError(.cryptoFailure, reason: "scrypt failed")
        }
    }
}
