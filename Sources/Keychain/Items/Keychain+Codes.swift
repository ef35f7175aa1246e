import Foundation
import OneTimeCode

/// A verification code as `code` shows it.
public struct VerificationCode: Sendable, Hashable {
    public let code: String
    /// Seconds until a TOTP code changes; nil for HOTP.
    public let secondsLeft: Int?
    /// The HOTP counter the code was made with; nil for TOTP.
    public let counter: UInt64?
}

extension Keychain {
    /// The current code of a code generator (RFC 6238 TOTP at the clock's time, or RFC 4226 HOTP at the stored
    /// counter, which then moves on by one: call ``save()`` after, so a counter value is never used twice).
    public func code(for id: ItemID, at time: Date? = nil) throws(KeychainError) -> VerificationCode {
        guard let item = item(id: id) else { throw KeychainError(.itemNotFound, reason: "no such item") }
        guard case .codeGenerator(let generator) = item.content else {
            throw KeychainError(.notACodeGenerator, reason: "the item is not a verification-code generator")
        }
        switch generator.key.generator {
        case .totp(let totp):
            do {
                let now = time ?? clock.now
                return VerificationCode(
                    code: try totp.code(at: now), secondsLeft: try totp.secondsRemaining(at: now), counter: nil)
            } catch {
                throw KeychainError(.invalidItem, reason: "the clock is outside the TOTP range (\(error.code))")
            }
        case .hotp(let hotp, let counter):
            guard counter < UInt64.max else {
                throw KeychainError(.invalidItem, reason: "the HOTP counter is exhausted")
            }
            var next = item
            next.content = .codeGenerator(
                CodeGenerator(key: Merge.withCounter(generator.key, counter + 1), sites: generator.sites))
            try update(next)
            return VerificationCode(code: hotp.code(counter: counter), secondsLeft: nil, counter: counter)
        }
    }
}
