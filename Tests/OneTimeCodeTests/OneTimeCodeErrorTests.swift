import Testing

@testable import OneTimeCode

struct OneTimeCodeErrorTests {
    @Test func equalityIsOnTheCode() {
        let a = OneTimeCodeError(.invalidBase32, reason: "one")
        let b = OneTimeCodeError(.invalidBase32, reason: "two")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != OneTimeCodeError(.invalidKeyURI, reason: "one"))
        #expect(a.description.contains("invalidBase32"))
        #expect(a.file.hasSuffix("OneTimeCodeErrorTests.swift"))
    }

    /// Errors from secret-bearing input never repeat the secret, the code or the recovery code.
    @Test func descriptionsNeverEchoSecrets() throws {
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        var errors: [OneTimeCodeError] = []
        func capture(_ body: () throws -> Void) {
            do { try body() } catch let error as OneTimeCodeError { errors.append(error) } catch {}
        }
        capture { _ = try OTPKeyURI(parsing: "otpauth://totp/x:y?secret=\(secret)&issuer=z") }
        capture { _ = try OTPKeyURI(parsing: "otpauth://totp/x:y?secret=\(secret)1") }
        capture { _ = try OTPKeyURI(parsing: "otpauth://totp/x:y?secret=\(secret)&digits=9") }
        capture { _ = try OTPKeyURI(parsing: "otpauth://totp/x:y?secret=\(secret)&algorithm=\(secret)") }
        capture { _ = try OTPSecret(base32: String(secret.prefix(16))) }
        capture { _ = try OriginBoundMessage(parsing: "@bad_host #987654") }
        capture { _ = try OriginBoundMessage(topLevelHost: "example.com", code: "98 7654") }
        #expect(errors.count == 7)
        for error in errors {
            #expect(!error.description.contains(secret.prefix(8)))
            #expect(!error.description.contains("987654") && !error.description.contains("98 7654"))
        }
    }
}
