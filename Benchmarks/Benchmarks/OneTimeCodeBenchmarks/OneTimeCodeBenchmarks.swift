import Benchmark
import Foundation
import OneTimeCode

/// The operations a sign-in server repeats: checking a TOTP code, and drawing the QR code of a setup link.
/// `run-otp-vs-pyotp.sh` runs the same operations in pyotp (and segno for QR) for comparison.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )

    // RFC 6238's SHA-1 seed; a fixed time so every run does the same work.
    let secret = try! OTPSecret(bytes: Array("12345678901234567890".utf8))
    let totp = try! TOTP(secret: secret)
    let verifier = try! OTPVerifier(window: 1)
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let valid = try! totp.code(at: now)
    // A code that matches no step in the window: all three HMACs are computed (the worst and commonest attack case).
    let invalid = (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.first {
        (try? verifier.verify($0, totp: totp, lastAcceptedStep: nil, at: now)) == .refused(.noMatch)
    }!

    Benchmark("TOTP verify, wrong code (SHA-1, window ±1)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try verifier.verify(invalid, totp: totp, lastAcceptedStep: nil, at: now))
        }
    }

    Benchmark("TOTP verify, right code (SHA-1, window ±1)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try verifier.verify(valid, totp: totp, lastAcceptedStep: nil, at: now))
        }
    }

    let uri = try! OTPKeyURI(
        generator: .totp(totp), issuer: "example.com", account: "alice@example.com"
    ).otpauthURI

    Benchmark("QR encode otpauth URI (level M)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QRCode(encoding: uri, errorCorrection: .medium))
        }
    }

    Benchmark("QR encode otpauth URI (level M) + PNG") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QRCode(encoding: uri, errorCorrection: .medium).png(scale: 8))
        }
    }
}
