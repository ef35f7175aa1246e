import Foundation
import Testing

@testable import OneTimeCode

/// Published test vectors.
struct OneTimePasswordVectorTests {
    /// RFC 4226 Appendix D: secret "12345678901234567890" (ASCII), HOTP-SHA1, 6 digits, counters 0–9.
    @Test(
        arguments: zip(
            0..<10,
            [
                "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489",
            ]))
    func rfc4226AppendixD(counter: Int, expected: String) throws {
        let hotp = try HOTP(secret: OTPSecret(bytes: Array("12345678901234567890".utf8)))
        #expect(hotp.code(counter: UInt64(counter)) == expected)
    }

    /// RFC 6238 Appendix B: 8 digits, 30-second steps, T0 = 0. The seed is the ASCII digits "1234567890"
    /// repeated to the hash's output size: 20 bytes for SHA-1, 32 for SHA-256, 64 for SHA-512 (the reference
    /// implementation's seeds; the table in the RFC's text lists the results).
    @Test(arguments: [
        (Int64(59), OTPAlgorithm.sha1, "94287082"), (59, .sha256, "46119246"), (59, .sha512, "90693936"),
        (1_111_111_109, .sha1, "07081804"), (1_111_111_109, .sha256, "68084774"), (1_111_111_109, .sha512, "25091201"),
        (1_111_111_111, .sha1, "14050471"), (1_111_111_111, .sha256, "67062674"), (1_111_111_111, .sha512, "99943326"),
        (1_234_567_890, .sha1, "89005924"), (1_234_567_890, .sha256, "91819424"), (1_234_567_890, .sha512, "93441116"),
        (2_000_000_000, .sha1, "69279037"), (2_000_000_000, .sha256, "90698825"), (2_000_000_000, .sha512, "38618901"),
        (20_000_000_000, .sha1, "65353130"), (20_000_000_000, .sha256, "77737706"),
        (20_000_000_000, .sha512, "47863826"),
    ])
    func rfc6238AppendixB(time: Int64, algorithm: OTPAlgorithm, expected: String) throws {
        let seedLength =
            switch algorithm {
            case .sha1: 20
            case .sha256: 32
            case .sha512: 64
            }
        let seed = Array(String(repeating: "1234567890", count: 7).utf8.prefix(seedLength))
        let totp = try TOTP(secret: OTPSecret(bytes: seed), algorithm: algorithm, digits: 8)
        #expect(try totp.code(at: Date(timeIntervalSince1970: TimeInterval(time))) == expected)
        #expect(totp.code(step: try totp.step(unixTime: time)) == expected)
    }
}

struct OneTimePasswordTests {
    static let secret = try! OTPSecret(bytes: Array("12345678901234567890".utf8))

    @Test(arguments: [6, 7, 8])
    func codesKeepLeadingZerosAndLength(digits: Int) throws {
        let hotp = try HOTP(secret: Self.secret, digits: digits)
        for counter in UInt64(0)..<200 {
            let code = hotp.code(counter: counter)
            #expect(code.count == digits)
            #expect(code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber))
        }
        // Six-digit codes are the last six of the eight-digit ones (same truncated value, fewer digits).
        let eight = try HOTP(secret: Self.secret, digits: 8)
        #expect(eight.code(counter: 3).suffix(digits) == hotp.code(counter: 3).suffix(digits))
    }

    @Test(arguments: [0, 5, 9, 10, -1])
    func unsupportedDigitsAreRefused(digits: Int) {
        #expect(throws: OneTimeCodeError(.unsupportedDigits)) { try HOTP(secret: Self.secret, digits: digits) }
    }

    @Test(arguments: [0, -30, TOTP.maximumPeriod + 1])
    func invalidPeriodsAreRefused(period: Int) {
        #expect(throws: OneTimeCodeError(.invalidPeriod)) { try TOTP(secret: Self.secret, period: period) }
    }

    @Test func secretSizes() throws {
        #expect(throws: OneTimeCodeError(.secretTooShort)) { try OTPSecret(bytes: [UInt8](repeating: 1, count: 15)) }
        #expect(throws: OneTimeCodeError(.secretTooLong)) {
            try OTPSecret(bytes: [UInt8](repeating: 1, count: OTPSecret.maximumByteCount + 1))
        }
        #expect(try OTPSecret(bytes: [UInt8](repeating: 1, count: 16)).bytes.count == 16)
        #expect(try OTPSecret.random().bytes.count == 20)
        #expect(throws: OneTimeCodeError(.secretTooShort)) { try OTPSecret.random(byteCount: 8) }
        #expect(throws: OneTimeCodeError(.secretTooShort)) { try OTPSecret.random(byteCount: -1) }
        #expect(throws: OneTimeCodeError(.secretTooLong)) { try OTPSecret.random(byteCount: Int.max) }
    }

    @Test func randomSecretsDiffer() throws {
        let secrets = try (0..<64).map { _ in try OTPSecret.random() }
        #expect(Set(secrets).count == secrets.count)
    }

    @Test func secretDescriptionIsRedacted() throws {
        let secret = try OTPSecret(base32: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP")
        for text in [String(describing: secret), String(reflecting: secret), "\(secret)"] {
            #expect(!text.contains("JBSWY3DP"))
            #expect(!text.contains("72, 101"))  // the secret's first bytes, "He"
        }
    }

    @Test(arguments: [1, 15, 30, 60, 90, 3600])
    func stepsAndSecondsRemaining(period: Int) throws {
        let totp = try TOTP(secret: Self.secret, period: period)
        for time in [Int64(0), 1, Int64(period) - 1, Int64(period), 1_700_000_000, 1_700_000_001] {
            let date = Date(timeIntervalSince1970: TimeInterval(time))
            #expect(try totp.step(at: date) == UInt64(time) / UInt64(period))
            let remaining = try totp.secondsRemaining(at: date)
            #expect((1...period).contains(remaining))
            #expect((time + Int64(remaining)) % Int64(period) == 0)
        }
    }

    @Test func timesOutsideTheRangeAreRefused() throws {
        let totp = try TOTP(secret: Self.secret)
        #expect(throws: OneTimeCodeError(.timeOutOfRange)) { try totp.code(at: Date(timeIntervalSince1970: -1)) }
        #expect(throws: OneTimeCodeError(.timeOutOfRange)) {
            try totp.step(at: .distantFuture.addingTimeInterval(1e30))
        }
        #expect(throws: OneTimeCodeError(.timeOutOfRange)) {
            try totp.step(at: Date(timeIntervalSince1970: .infinity))
        }
    }

    @Test func algorithmNames() throws {
        #expect(try OTPAlgorithm(parsing: "sha256") == .sha256)
        #expect(try OTPAlgorithm(parsing: "SHA512") == .sha512)
        #expect(throws: OneTimeCodeError(.unsupportedAlgorithm)) { try OTPAlgorithm(parsing: "MD5") }
        #expect(throws: OneTimeCodeError(.unsupportedAlgorithm)) { try OTPAlgorithm(parsing: "SHA-1") }
    }
}
