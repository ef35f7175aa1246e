#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a verifier reads the time. Injected so that tests, replays of logged requests and servers with their own
/// time source all verify against the time they mean; the verifier reads it once per verification, never earlier.
public protocol OneTimeCodeClock: Sendable {
    func now() -> Date
}

/// The system's wall clock.
public struct SystemOneTimeCodeClock: OneTimeCodeClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock stopped at one instant (tests, command-line `--at`).
public struct FixedOneTimeCodeClock: OneTimeCodeClock {
    public let instant: Date
    public init(_ instant: Date) { self.instant = instant }
    public func now() -> Date { instant }
}

/// The outcome of checking a one-time code.
public enum OTPVerification: Sendable, Hashable {
    /// The code matched `step` (a TOTP time step or an HOTP counter). Store `step` as the new last accepted step
    /// so that this code, and every code for an earlier step, is refused from now on.
    case accepted(step: UInt64)
    /// The code was refused.
    case refused(Refusal)

    public enum Refusal: Sendable, Hashable {
        /// Wrong length or not all ASCII digits; refused before any HMAC was computed.
        case malformed
        /// No step in the window produces this code.
        case noMatch
        /// The code matches a step at or before the last accepted one (RFC 6238 §5.2): a replay.
        /// Callers should answer exactly as for ``noMatch``; the distinction is for logs and metrics.
        case replayed
    }

    /// The matched step, when accepted.
    public var acceptedStep: UInt64? {
        if case .accepted(let step) = self { step } else { nil }
    }
}

/// Checks TOTP and HOTP codes against a window of steps, with the RFC 6238 §5.2 replay rule.
///
/// The verifier holds only policy (the window). The time comes from a clock passed to each call, and the last
/// accepted step comes from the caller's store; the caller saves the step returned in
/// ``OTPVerification/accepted(step:)`` atomically with the sign-in it authorises.
///
/// Every candidate step in the window is computed and compared in constant time, whether or not an earlier one
/// matched, so timing reveals neither which step matched nor how many leading digits were right.
public struct OTPVerifier: Sendable, Hashable {
    /// Largest window accepted: ±10 steps. RFC 6238 §5.2 recommends at most one step of network delay.
    public static let maximumWindow = 10

    /// Steps accepted on each side of the current one (TOTP), or after the expected counter (HOTP).
    public let window: Int

    public init(window: Int = 1) throws(OneTimeCodeError) {
        guard (0...Self.maximumWindow).contains(window) else {
            throw OneTimeCodeError(.invalidWindow, reason: "window must be 0 to \(Self.maximumWindow) steps")
        }
        self.window = window
    }

    /// Verifies a TOTP code at the time `clock` gives now.
    ///
    /// - Parameters:
    ///   - code: what the user typed. Surrounding spaces are not trimmed here; the caller decides what to accept.
    ///   - totp: the secret and its parameters.
    ///   - lastAcceptedStep: the step stored after the previous successful verification, or `nil` if none.
    ///   - clock: read exactly once.
    public func verify(
        _ code: String,
        totp: TOTP,
        lastAcceptedStep: UInt64?,
        clock: some OneTimeCodeClock
    ) throws(OneTimeCodeError) -> OTPVerification {
        try verify(code, totp: totp, lastAcceptedStep: lastAcceptedStep, at: clock.now())
    }

    /// Verifies a TOTP code at a given instant.
    public func verify(
        _ code: String,
        totp: TOTP,
        lastAcceptedStep: UInt64?,
        at date: Date
    ) throws(OneTimeCodeError) -> OTPVerification {
        guard let typed = Self.wellFormed(code, digits: totp.digits) else { return .refused(.malformed) }
        let current = try totp.step(at: date)
        let window = UInt64(window)
        let first = current >= window ? current - window : 0
        let last = current.addingReportingOverflow(window)
        let upper = last.overflow ? UInt64.max : last.partialValue
        return Self.match(typed, hotp: totp.hotp, steps: first...upper, lastAcceptedStep: lastAcceptedStep)
    }

    /// Verifies an HOTP code against counters `expectedCounter ... expectedCounter + window` (look-ahead only,
    /// RFC 4226 §7.4). Store the returned counter; the next expected counter is that plus one.
    public func verify(
        _ code: String,
        hotp: HOTP,
        expectedCounter: UInt64,
        lastAcceptedCounter: UInt64?
    ) -> OTPVerification {
        guard let typed = Self.wellFormed(code, digits: hotp.digits) else { return .refused(.malformed) }
        let last = expectedCounter.addingReportingOverflow(UInt64(window))
        let upper = last.overflow ? UInt64.max : last.partialValue
        return Self.match(typed, hotp: hotp, steps: expectedCounter...upper, lastAcceptedStep: lastAcceptedCounter)
    }

    /// The code's value when it is exactly `digits` ASCII digits.
    static func wellFormed(_ code: String, digits: Int) -> UInt32? {
        guard code.utf8.count == digits else { return nil }
        var value: UInt32 = 0
        for byte in code.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + UInt32(byte - UInt8(ascii: "0"))  // at most 99,999,999: no overflow
        }
        return value
    }

    static func match(
        _ typed: UInt32,
        hotp: HOTP,
        steps: ClosedRange<UInt64>,
        lastAcceptedStep: UInt64?
    ) -> OTPVerification {
        let mac = hotp.algorithm.keyed(hotp.secret.key)
        return match(typed, steps: steps, lastAcceptedStep: lastAcceptedStep) { hotp.codeValue(counter: $0, mac: mac) }
    }

    /// The window rule on its own, given each step's code value (separate so tests can make two steps collide).
    static func match(
        _ typed: UInt32,
        steps: ClosedRange<UInt64>,
        lastAcceptedStep: UInt64?,
        codeValue: (UInt64) -> UInt32
    ) -> OTPVerification {
        var accepted: UInt64? = nil
        var replayed = false
        // No early exit: every step in the window costs the same whether or not it matches. The comparison is a
        // single integer XOR, which takes the same time whatever the values (no digit-by-digit early exit).
        for step in steps {
            let matches = (codeValue(step) ^ typed) == 0
            let fresh = lastAcceptedStep.map { step > $0 } ?? true
            if matches && fresh {
                // The latest matching step wins: storing it burns every earlier step in the window too.
                accepted = step
            } else if matches {
                replayed = true
            }
        }
        if let accepted { return .accepted(step: accepted) }
        return .refused(replayed ? .replayed : .noMatch)
    }
}
