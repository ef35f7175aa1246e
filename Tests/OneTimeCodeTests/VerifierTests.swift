import Foundation
import Synchronization
import Testing

@testable import OneTimeCode

/// A clock that counts how often it is read.
final class CountingClock: OneTimeCodeClock {
    let instant: Date
    let reads = Atomic<Int>(0)
    init(_ instant: Date) { self.instant = instant }
    func now() -> Date {
        reads.add(1, ordering: .relaxed)
        return instant
    }
}

struct VerifierTests {
    static let totp = try! TOTP(
        secret: OTPSecret(bytes: Array("12345678901234567890".utf8)), algorithm: .sha1, digits: 6, period: 30)
    /// An instant in the middle of step 56_666_666.
    static let now = Date(timeIntervalSince1970: 1_699_999_995)
    static let currentStep: UInt64 = 1_699_999_995 / 30

    func code(offset: Int64) -> String {
        Self.totp.code(step: UInt64(Int64(Self.currentStep) + offset))
    }

    @Test(arguments: [
        (0, -1, false), (0, 0, true), (0, 1, false),
        (1, -2, false), (1, -1, true), (1, 0, true), (1, 1, true), (1, 2, false),
        (2, -3, false), (2, -2, true), (2, 2, true), (2, 3, false),
    ])
    func window(window: Int, offset: Int64, accepted: Bool) throws {
        let verifier = try OTPVerifier(window: window)
        let result = try verifier.verify(code(offset: offset), totp: Self.totp, lastAcceptedStep: nil, at: Self.now)
        if accepted {
            #expect(result == .accepted(step: UInt64(Int64(Self.currentStep) + offset)))
        } else {
            #expect(result == .refused(.noMatch))
        }
    }

    @Test func defaultWindowIsOneStep() throws {
        #expect(try OTPVerifier().window == 1)
    }

    @Test(arguments: [-1, OTPVerifier.maximumWindow + 1])
    func invalidWindows(window: Int) {
        #expect(throws: OneTimeCodeError(.invalidWindow)) { try OTPVerifier(window: window) }
    }

    /// RFC 6238 §5.2: once a step is accepted, its code and codes of earlier steps are refused.
    @Test func replayRule() throws {
        let verifier = try OTPVerifier()
        let first = try verifier.verify(code(offset: 0), totp: Self.totp, lastAcceptedStep: nil, at: Self.now)
        let step = try #require(first.acceptedStep)
        #expect(step == Self.currentStep)
        // The same code again is a replay.
        #expect(
            try verifier.verify(code(offset: 0), totp: Self.totp, lastAcceptedStep: step, at: Self.now)
                == .refused(.replayed))
        // So is the previous step's code, still inside the window.
        #expect(
            try verifier.verify(code(offset: -1), totp: Self.totp, lastAcceptedStep: step, at: Self.now)
                == .refused(.replayed))
        // The next step's code is fresh.
        #expect(
            try verifier.verify(code(offset: 1), totp: Self.totp, lastAcceptedStep: step, at: Self.now)
                == .accepted(step: step + 1))
        // A stored step from the past does not block the current code.
        #expect(
            try verifier.verify(code(offset: 0), totp: Self.totp, lastAcceptedStep: step - 1, at: Self.now)
                == .accepted(step: step))
        // A future step was accepted (clock skew): codes up to it are refused.
        #expect(
            try verifier.verify(code(offset: 0), totp: Self.totp, lastAcceptedStep: step + 1, at: Self.now)
                == .refused(.replayed))
    }

    @Test(arguments: [
        "", "12345", "1234567", "12345a", " 123456", "123456 ", "12 456", "-12345", "+12345",
        "\u{FF11}\u{FF12}\u{FF13}\u{FF14}\u{FF15}\u{FF16}",  // full-width digits
        "\u{0661}\u{0662}\u{0663}\u{0664}\u{0665}\u{0666}",  // Arabic-Indic digits
        String(repeating: "1", count: 100_000),
    ])
    func malformedCodesAreRefusedEarly(code: String) throws {
        let verifier = try OTPVerifier()
        #expect(
            try verifier.verify(code, totp: Self.totp, lastAcceptedStep: nil, at: Self.now) == .refused(.malformed))
    }

    @Test func wrongCodeOfRightShape() throws {
        let verifier = try OTPVerifier()
        let valid = Set((-1...1).map { code(offset: Int64($0)) })
        let wrong = (0..<1000).lazy.map { String(format: "%06d", $0) }.first { !valid.contains($0) }!
        #expect(try verifier.verify(wrong, totp: Self.totp, lastAcceptedStep: nil, at: Self.now) == .refused(.noMatch))
    }

    /// Near the epoch the window is clipped at step 0 instead of wrapping around.
    @Test func windowAtTheEpoch() throws {
        let verifier = try OTPVerifier(window: 2)
        let atZero = Date(timeIntervalSince1970: 5)
        #expect(
            try verifier.verify(Self.totp.code(step: 0), totp: Self.totp, lastAcceptedStep: nil, at: atZero)
                == .accepted(step: 0))
        #expect(
            try verifier.verify(Self.totp.code(step: 2), totp: Self.totp, lastAcceptedStep: nil, at: atZero)
                == .accepted(step: 2))
        #expect(throws: OneTimeCodeError(.timeOutOfRange)) {
            try verifier.verify("123456", totp: Self.totp, lastAcceptedStep: nil, at: Date(timeIntervalSince1970: -60))
        }
    }

    /// The clock is read once per verification, and not when the verifier is made.
    @Test func clockIsReadAtVerification() throws {
        let clock = CountingClock(Self.now)
        let verifier = try OTPVerifier()
        #expect(clock.reads.load(ordering: .relaxed) == 0)
        let result = try verifier.verify(code(offset: 0), totp: Self.totp, lastAcceptedStep: nil, clock: clock)
        #expect(result == .accepted(step: Self.currentStep))
        #expect(clock.reads.load(ordering: .relaxed) == 1)
        let later = FixedOneTimeCodeClock(Self.now.addingTimeInterval(120))
        #expect(
            try verifier.verify(code(offset: 0), totp: Self.totp, lastAcceptedStep: nil, clock: later)
                == .refused(.noMatch))
    }

    @Test(arguments: [OTPAlgorithm.sha1, .sha256, .sha512], [6, 7, 8])
    func everyAlgorithmAndLength(algorithm: OTPAlgorithm, digits: Int) throws {
        let totp = try TOTP(secret: OTPSecret.random(byteCount: 32), algorithm: algorithm, digits: digits, period: 45)
        let verifier = try OTPVerifier()
        let code = try totp.code(at: Self.now)
        #expect(code.count == digits)
        #expect(
            try verifier.verify(code, totp: totp, lastAcceptedStep: nil, at: Self.now)
                == .accepted(step: try totp.step(at: Self.now)))
    }

    @Test func hotpLookAheadAndReplay() throws {
        let hotp = Self.totp.hotp
        let verifier = try OTPVerifier(window: 3)
        #expect(
            verifier.verify(hotp.code(counter: 12), hotp: hotp, expectedCounter: 10, lastAcceptedCounter: 9)
                == .accepted(step: 12))
        #expect(
            verifier.verify(hotp.code(counter: 14), hotp: hotp, expectedCounter: 10, lastAcceptedCounter: 9)
                == .refused(.noMatch))
        // Look-ahead only: a counter below the expected one is not a candidate.
        #expect(
            verifier.verify(hotp.code(counter: 9), hotp: hotp, expectedCounter: 10, lastAcceptedCounter: nil)
                == .refused(.noMatch))
        #expect(
            verifier.verify(hotp.code(counter: 12), hotp: hotp, expectedCounter: 10, lastAcceptedCounter: 12)
                == .refused(.replayed))
        // The counter range stops at UInt64.max instead of overflowing.
        #expect(
            verifier.verify(hotp.code(counter: .max), hotp: hotp, expectedCounter: .max - 1, lastAcceptedCounter: nil)
                == .accepted(step: .max))
    }

    /// Two steps of one window can share a code (one chance in 10^digits per pair). The later step is the one
    /// accepted, so storing it refuses both afterwards; a collision with an already used step does not hide a fresh
    /// match; and every step is evaluated even after a match.
    @Test(arguments: [
        ([UInt64(10), 11], nil as UInt64?, OTPVerification.accepted(step: 11)),
        ([10, 11], 10, .accepted(step: 11)),
        ([9, 11], 9, .accepted(step: 11)),
        ([9, 10], 10, .refused(.replayed)),
        ([], nil, .refused(.noMatch)),
    ])
    func collidingSteps(matching: [UInt64], lastAccepted: UInt64?, expected: OTPVerification) {
        var evaluated: [UInt64] = []
        let result = OTPVerifier.match(123_456, steps: 9...11, lastAcceptedStep: lastAccepted) { step in
            evaluated.append(step)
            return matching.contains(step) ? 123_456 : 654_321
        }
        #expect(result == expected)
        #expect(evaluated == [9, 10, 11])
    }
}
