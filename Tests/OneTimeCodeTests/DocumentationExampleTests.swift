import Foundation
import Testing

@testable import OneTimeCode

/// The snippets of docs/one-time-codes.md, compiled and run. Keep both in step.
struct DocumentationExampleTests {
    struct Account { var lastAcceptedStep: UInt64? }

    @Test func settingUpAGenerator() throws {
        let secret = try OTPSecret.random()
        let totp = try TOTP(secret: secret)
        let key = try OTPKeyURI(generator: .totp(totp), issuer: "example.com", account: "alice@example.com")

        let link = key.otpauthURI
        let appleLink = try key.appleOtpauthURI()
        let png = try QRCode(encoding: link, errorCorrection: .medium).png(scale: 8)

        #expect(try OTPKeyURI(parsing: link) == key)
        #expect(appleLink == "apple-" + link)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func verifyingACode() throws {
        let totp = try TOTP(secret: OTPSecret.random())
        var account = Account(lastAcceptedStep: nil)
        let typedCode = try totp.code(at: Date())

        let verifier = try OTPVerifier()
        let result = try verifier.verify(
            typedCode, totp: totp, lastAcceptedStep: account.lastAcceptedStep, clock: SystemOneTimeCodeClock())
        switch result {
        case .accepted(let step):
            account.lastAcceptedStep = step
        case .refused:
            break
        }

        #expect(account.lastAcceptedStep != nil)
        // The same code a second time is a replay.
        let again = try verifier.verify(
            typedCode, totp: totp, lastAcceptedStep: account.lastAcceptedStep, clock: SystemOneTimeCodeClock())
        #expect(again == .refused(.replayed))
    }

    @Test func readingKeyURIs() throws {
        let parsed = try OTPKeyURI(
            parsing:
                "otpauth://totp/Example:alice@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Example")
        #expect(parsed.issuer == "Example" && parsed.account == "alice@example.com")
        guard case .totp(let totp) = parsed.generator else {
            Issue.record("expected TOTP")
            return
        }
        #expect(totp.algorithm == .sha1 && totp.digits == 6 && totp.period == 30)
    }

    @Test func domainBoundSMS() throws {
        let sms = try OriginBoundMessage(topLevelHost: "example.com", code: "123456")
        let text = sms.message(text: "Your Example code is 123456.")
        #expect(text == "Your Example code is 123456.\n\n@example.com #123456")
        let received = try OriginBoundMessage(parsing: text)
        #expect(received.topLevelHost == "example.com" && received.code == "123456")
    }

    @Test func recoveryCodes() throws {
        let (codes, set) = try RecoveryCodeSet.generate(count: 10)
        var stored = set
        // The documentation's example input is not one of the random codes: it must not match.
        let ok = stored.redeem("abcd efgh jkmn pqrs")
        #expect(!ok)
        // A real code typed the friendly way does.
        let typed = codes[3].lowercased().replacingOccurrences(of: "-", with: " ")
        let redeemed = stored.redeem(typed)
        #expect(redeemed)
        #expect(stored.remaining == 9)
    }
}
