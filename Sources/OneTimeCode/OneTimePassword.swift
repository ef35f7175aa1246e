import Crypto
import SesameBytes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The HMAC hash a one-time password generator uses (RFC 6238 §1.2 allows SHA-1, SHA-256 and SHA-512).
///
/// The raw values are the spellings of the key URI `algorithm` parameter.
public enum OTPAlgorithm: String, Sendable, Hashable, CaseIterable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
    case sha512 = "SHA512"

    /// Parses the key URI spelling, ignoring case (`SHA1`, `sha256`, ...).
    public init(parsing text: String) throws(OneTimeCodeError) {
        guard let algorithm = OTPAlgorithm(rawValue: text.uppercased()) else {
            throw OneTimeCodeError(.unsupportedAlgorithm, reason: "algorithm must be SHA1, SHA256 or SHA512")
        }
        self = algorithm
    }

    /// An HMAC keyed once, whose copies each compute one MAC: the key's padding and the first block of each of
    /// the two hashes are done once per verification instead of once per candidate step.
    func keyed(_ key: SymmetricKey) -> KeyedMAC {
        switch self {
        case .sha1: .sha1(HMAC<Insecure.SHA1>(key: key))
        case .sha256: .sha256(HMAC<SHA256>(key: key))
        case .sha512: .sha512(HMAC<SHA512>(key: key))
        }
    }
}

enum KeyedMAC {
    case sha1(HMAC<Insecure.SHA1>)
    case sha256(HMAC<SHA256>)
    case sha512(HMAC<SHA512>)

    /// RFC 4226 §5.3 dynamic truncation of HMAC(counter): 31 bits from the offset the last nibble names.
    func truncatedMAC(counter: UInt64) -> UInt32 {
        withUnsafeBytes(of: counter.bigEndian) { message in
            switch self {
            case .sha1(var hmac):
                hmac.update(data: message)
                return hmac.finalize().withUnsafeBytes(Self.truncate)
            case .sha256(var hmac):
                hmac.update(data: message)
                return hmac.finalize().withUnsafeBytes(Self.truncate)
            case .sha512(var hmac):
                hmac.update(data: message)
                return hmac.finalize().withUnsafeBytes(Self.truncate)
            }
        }
    }

    private static func truncate(_ mac: UnsafeRawBufferPointer) -> UInt32 {
        // Every MAC here is at least 20 bytes, so offset + 3 ≤ 18 is in range.
        let offset = Int(mac[mac.count - 1] & 0x0F)
        return (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
    }
}

/// A shared secret for HOTP/TOTP: at least 128 bits (RFC 4226 §4, requirement 6).
///
/// Its `description` is redacted so that a secret never reaches a log by accident; read ``bytes`` or ``base32``
/// on purpose when it must be shown or stored.
public struct OTPSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The smallest secret accepted, in bytes (128 bits).
    public static let minimumByteCount = 16
    /// The size of generated secrets unless asked otherwise, in bytes (160 bits, RFC 4226 §4's recommendation).
    public static let defaultByteCount = 20
    /// The largest secret accepted, in bytes; bounds the work an untrusted key URI can cause.
    public static let maximumByteCount = 1024

    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(OneTimeCodeError) {
        try self.init(bytes: bytes, minimumByteCount: Self.minimumByteCount)
    }

    /// A secret with a smaller minimum, for the side that stores secrets a service issued (an authenticator app
    /// or password manager), which must keep working with services that still issue 80-bit secrets. Issuing and
    /// verifying use ``init(bytes:)`` and its 128-bit minimum.
    public init(bytes: [UInt8], minimumByteCount: Int) throws(OneTimeCodeError) {
        guard bytes.count >= max(1, minimumByteCount) else {
            throw OneTimeCodeError(
                .secretTooShort,
                reason: "secret has \(bytes.count * 8) bits, at least \(max(1, minimumByteCount) * 8) needed")
        }
        guard bytes.count <= Self.maximumByteCount else {
            throw OneTimeCodeError(.secretTooLong, reason: "secret longer than \(Self.maximumByteCount) bytes")
        }
        self.bytes = bytes
    }

    /// Decodes a Base32 secret (see ``Base32`` for what is tolerated).
    public init(base32: some StringProtocol) throws(OneTimeCodeError) {
        try self.init(bytes: Base32.decode(base32))
    }

    /// Decodes a Base32 secret with a smaller minimum (see ``init(bytes:minimumByteCount:)``).
    public init(base32: some StringProtocol, minimumByteCount: Int) throws(OneTimeCodeError) {
        try self.init(bytes: Base32.decode(base32), minimumByteCount: minimumByteCount)
    }

    /// A fresh secret from the system's cryptographically secure generator.
    public static func random(byteCount: Int = defaultByteCount) throws(OneTimeCodeError) -> OTPSecret {
        // Checked before generating, so an absurd size is refused without allocating it.
        guard byteCount >= minimumByteCount else {
            throw OneTimeCodeError(.secretTooShort, reason: "secret of \(byteCount) bytes, at least 16 needed")
        }
        guard byteCount <= maximumByteCount else {
            throw OneTimeCodeError(.secretTooLong, reason: "secret longer than \(maximumByteCount) bytes")
        }
        let bytes = SecureRandom.bytes(byteCount)
        return try OTPSecret(bytes: bytes)
    }

    /// Unpadded upper-case Base32, as key URIs carry it.
    public var base32: String { Base32.encode(bytes) }

    public var description: String { "OTPSecret(\(bytes.count * 8) bits, redacted)" }
    public var debugDescription: String { description }

    var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// Constant-time, so comparing secrets (say, to detect reuse) leaks nothing about their bytes.
    public static func == (lhs: OTPSecret, rhs: OTPSecret) -> Bool {
        ConstantTime.equal(lhs.bytes, rhs.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }
}

/// An HOTP generator (RFC 4226): a secret, a hash and a code length.
public struct HOTP: Sendable, Hashable {
    public static let supportedDigits = 6...8

    public let secret: OTPSecret
    public let algorithm: OTPAlgorithm
    public let digits: Int

    public init(secret: OTPSecret, algorithm: OTPAlgorithm = .sha1, digits: Int = 6) throws(OneTimeCodeError) {
        guard Self.supportedDigits.contains(digits) else {
            throw OneTimeCodeError(.unsupportedDigits, reason: "codes have 6 to 8 digits")
        }
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
    }

    /// The code for a counter value: HMAC, dynamic truncation (RFC 4226 §5.3), then the low `digits` decimal
    /// digits, left-padded with zeros.
    public func code(counter: UInt64) -> String {
        var value = codeValue(counter: counter, mac: algorithm.keyed(secret.key))
        var output = [UInt8](repeating: UInt8(ascii: "0"), count: digits)
        for index in stride(from: digits - 1, through: 0, by: -1) {
            output[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The code as a number (below 10^digits), with a MAC keyed once for a whole verification window.
    func codeValue(counter: UInt64, mac: KeyedMAC) -> UInt32 {
        mac.truncatedMAC(counter: counter) % Self.modulus[digits - Self.supportedDigits.lowerBound]
    }

    private static let modulus: [UInt32] = [1_000_000, 10_000_000, 100_000_000]
}

/// A TOTP generator (RFC 6238): an HOTP generator whose counter is the number of `period`-second steps since the
/// Unix epoch (T0 = 0).
public struct TOTP: Sendable, Hashable {
    public static let defaultPeriod = 30
    /// Longest period accepted: one year. Longer periods make codes that are no longer "one-time" in any sense.
    public static let maximumPeriod = 366 * 24 * 3600

    public let hotp: HOTP
    /// Step length in seconds.
    public let period: Int

    public init(
        secret: OTPSecret,
        algorithm: OTPAlgorithm = .sha1,
        digits: Int = 6,
        period: Int = defaultPeriod
    ) throws(OneTimeCodeError) {
        guard (1...Self.maximumPeriod).contains(period) else {
            throw OneTimeCodeError(.invalidPeriod, reason: "period must be 1 to \(Self.maximumPeriod) seconds")
        }
        self.hotp = try HOTP(secret: secret, algorithm: algorithm, digits: digits)
        self.period = period
    }

    public var secret: OTPSecret { hotp.secret }
    public var algorithm: OTPAlgorithm { hotp.algorithm }
    public var digits: Int { hotp.digits }

    /// The step that contains `unixTime` (whole seconds since the epoch).
    public func step(unixTime: Int64) throws(OneTimeCodeError) -> UInt64 {
        guard unixTime >= 0 else {
            throw OneTimeCodeError(.timeOutOfRange, reason: "time before the Unix epoch")
        }
        return UInt64(unixTime) / UInt64(period)
    }

    /// The step that contains `date`.
    public func step(at date: Date) throws(OneTimeCodeError) -> UInt64 {
        try step(unixTime: Self.unixSeconds(date))
    }

    /// The code for the step containing `date`.
    public func code(at date: Date) throws(OneTimeCodeError) -> String {
        hotp.code(counter: try step(at: date))
    }

    /// The code for a given step.
    public func code(step: UInt64) -> String { hotp.code(counter: step) }

    /// Seconds until the step containing `date` ends (1...period).
    public func secondsRemaining(at date: Date) throws(OneTimeCodeError) -> Int {
        let seconds = try Self.unixSeconds(date)
        guard seconds >= 0 else {
            throw OneTimeCodeError(.timeOutOfRange, reason: "time before the Unix epoch")
        }
        return period - Int(seconds % Int64(period))
    }

    static func unixSeconds(_ date: Date) throws(OneTimeCodeError) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // ±2^62 s keeps every later multiplication and addition far from overflow.
        guard seconds.isFinite, abs(seconds) < 4.6e18 else {
            throw OneTimeCodeError(.timeOutOfRange, reason: "time is not representable in whole seconds")
        }
        return Int64(seconds)
    }
}
