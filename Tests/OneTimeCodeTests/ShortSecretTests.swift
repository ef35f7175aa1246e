import Testing

@testable import OneTimeCode

/// The storing side (a password manager) may accept secrets shorter than the 128 bits Sesame issues and
/// verifies with; the default stays 128.
@Suite struct ShortSecretTests {
    static let eightyBits = "JBSWY3DPEHPK3PXP"

    @Test func defaultMinimumIs128Bits() {
        #expect(throws: OneTimeCodeError(.secretTooShort)) { try OTPSecret(base32: Self.eightyBits) }
        #expect(throws: OneTimeCodeError(.secretTooShort)) {
            try OTPKeyURI(parsing: "otpauth://totp/x?secret=\(Self.eightyBits)")
        }
    }

    @Test func aLowerMinimumIsHonouredAndBounded() throws {
        #expect(try OTPSecret(base32: Self.eightyBits, minimumByteCount: 10).bytes.count == 10)
        let key = try OTPKeyURI(parsing: "otpauth://totp/x?secret=\(Self.eightyBits)", minimumSecretByteCount: 10)
        #expect(key.secret.bytes.count == 10)
        #expect(throws: OneTimeCodeError(.secretTooShort)) { try OTPSecret(base32: "JBSWY3DP", minimumByteCount: 10) }
        #expect(throws: OneTimeCodeError(.secretTooShort)) { try OTPSecret(bytes: [], minimumByteCount: 0) }
    }
}
