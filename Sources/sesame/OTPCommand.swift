import ArgumentParser
import OneTimeCode

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sesame otp`: make, show and check one-time codes, and format domain-bound SMS messages.
///
/// Exit status: 0 success (for `verify`: accepted), 1 code refused (`verify`), 2 bad input (an invalid secret,
/// key URI, time, code option...). Argument syntax errors caught by the parser exit with its usage status (64).
struct OTPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "otp",
        abstract: "TOTP/HOTP secrets, setup links and QR codes, codes, and domain-bound SMS messages.",
        subcommands: [OTPNewCommand.self, OTPCodeCommand.self, OTPVerifyCommand.self, OTPSMSCommand.self]
    )
}

/// What every `otp` subcommand does with a library error: say what was wrong on standard error, exit 2.
/// Library errors never contain the secret or the code, so printing them is safe.
func failUsage(_ message: String) -> ExitCode {
    var standardError = StandardError()
    print("error: \(message)", to: &standardError)
    return ExitCode(2)
}

func runReportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as OneTimeCodeError {
        throw failUsage("\(error.code): \(error.reason)")
    }
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        let bytes = Array(string.utf8)
        #if canImport(Glibc)
            _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        #else
            _ = bytes.withUnsafeBytes { Darwin.write(2, $0.baseAddress, $0.count) }
        #endif
    }
}

/// Options shared by `code` and `verify`: the key, given as a key URI or a Base32 secret with its parameters.
struct OTPKeyOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "An otpauth:// or apple-otpauth:// URI, or a Base32 secret. Use - to read it from standard input "
                + "(keeps it out of the process list and shell history).",
            valueName: "uri-or-secret"))
    var key: String

    @Option(help: "Hash for a bare secret: SHA1, SHA256 or SHA512 (default SHA1).")
    var algorithm: String?

    @Option(help: "Code length for a bare secret: 6 to 8 (default 6).")
    var digits: Int?

    @Option(help: "Step length in seconds for a bare secret (default 30).")
    var period: Int?

    @Option(help: "Use HOTP with this counter instead of TOTP (bare secret only).")
    var counter: UInt64?

    /// TOTP or HOTP (with its counter), from the URI or the secret and options.
    func generator() throws -> OTPKeyURI.Generator {
        var text = key
        if text == "-" {
            guard let line = readLine(strippingNewline: true) else {
                throw failUsage("nothing on standard input")
            }
            text = line
        }
        let lowered = text.prefix(20).lowercased()
        if lowered.hasPrefix("otpauth:") || lowered.hasPrefix("apple-otpauth:") {
            guard algorithm == nil, digits == nil, period == nil, counter == nil else {
                throw failUsage("--algorithm, --digits, --period and --counter apply to a bare secret, not a URI")
            }
            return try OTPKeyURI(parsing: text).generator
        }
        let secret = try OTPSecret(base32: text)
        let algorithm = try algorithm.map { (name) throws(OneTimeCodeError) in try OTPAlgorithm(parsing: name) }
        if let counter {
            guard period == nil else { throw failUsage("--period does not apply to HOTP (--counter)") }
            return .hotp(try HOTP(secret: secret, algorithm: algorithm ?? .sha1, digits: digits ?? 6), counter: counter)
        }
        return .totp(
            try TOTP(
                secret: secret, algorithm: algorithm ?? .sha1, digits: digits ?? 6,
                period: period ?? TOTP.defaultPeriod))
    }
}

/// `--at`: ISO 8601 (`2026-01-01T12:00:00Z`) or Unix seconds.
func parseTime(_ text: String?) throws -> Date {
    guard let text else { return Date() }
    if let seconds = Int64(text) {
        guard seconds >= 0 else { throw failUsage("--at must not be before 1970") }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
    do {
        return try Date(text, strategy: .iso8601)
    } catch {
        throw failUsage("--at takes ISO 8601 (2026-01-01T12:00:00Z) or Unix seconds")
    }
}

struct OTPNewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Make a new TOTP secret; print it with its otpauth: and apple-otpauth: links, optionally a QR code.",
        discussion: """
            The output contains the secret: show it only to the account's owner. The QR file is created readable \
            by its owner only, for the same reason.
            """
    )

    @Option(help: "The service, ideally its domain (example.com); password managers match it to saved logins.")
    var issuer: String

    @Option(help: "The user's account name (alice@example.com).")
    var account: String

    @Option(help: "SHA1, SHA256 or SHA512. Many authenticator apps only support SHA1.")
    var algorithm: String = "SHA1"

    @Option(help: "Code length, 6 to 8.")
    var digits: Int = 6

    @Option(help: "Seconds per code.")
    var period: Int = TOTP.defaultPeriod

    @Option(help: "Secret size in bits, a multiple of 8, at least 128.")
    var secretBits: Int = OTPSecret.defaultByteCount * 8

    @Option(help: "Write a QR code of the otpauth: link to this .png or .svg file.")
    var qr: String?

    @Option(help: "QR error correction: L, M, Q or H.")
    var qrLevel: String = "M"

    @Option(help: "QR image pixels per module.")
    var qrScale: Int = 8

    func run() async throws {
        try runReportingErrors {
            guard secretBits % 8 == 0 else { throw failUsage("--secret-bits must be a multiple of 8") }
            let secret = try OTPSecret.random(byteCount: secretBits / 8)
            let totp = try TOTP(
                secret: secret, algorithm: try OTPAlgorithm(parsing: algorithm), digits: digits, period: period)
            let key = try OTPKeyURI(generator: .totp(totp), issuer: issuer, account: account)
            var qrSummary: String? = nil
            if let qr {
                guard let level = QRCode.ErrorCorrection(rawValue: qrLevel.uppercased()) else {
                    throw failUsage("--qr-level takes L, M, Q or H")
                }
                let code = try QRCode(encoding: key.otpauthURI, errorCorrection: level)
                let bytes: [UInt8]
                switch qr.split(separator: ".").last?.lowercased() {
                case "png": bytes = try code.png(scale: qrScale)
                case "svg": bytes = Array(try code.svg(scale: qrScale).utf8)
                default: throw failUsage("--qr needs a file name ending in .png or .svg")
                }
                try writeOwnerOnly(bytes, to: qr)
                qrSummary = "\(qr) (version \(code.version), level \(level.rawValue), mask \(code.mask))"
            }
            print("Secret:        \(secret.base32)")
            print("otpauth link:  \(key.otpauthURI)")
            if let apple = try? key.appleOtpauthURI() {
                print("Apple link:    \(apple)")
            } else {
                var standardError = StandardError()
                print("note: no apple-otpauth: link, the issuer is not a domain name", to: &standardError)
            }
            if let qrSummary { print("QR code:       \(qrSummary)") }
        }
    }

    /// Creates or replaces `path` with mode 0600: the image holds the secret.
    func writeOwnerOnly(_ bytes: [UInt8], to path: String) throws {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failUsage("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw failUsage("cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }
}

struct OTPCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code",
        abstract: "Print the current code (or the code at --at) and how many seconds it stays valid."
    )

    @OptionGroup var key: OTPKeyOptions

    @Option(help: "The time: ISO 8601 (2026-01-01T12:00:00Z) or Unix seconds. Default: now.")
    var at: String?

    func run() async throws {
        try runReportingErrors {
            let date = try parseTime(at)
            switch try key.generator() {
            case .totp(let totp):
                let step = try totp.step(at: date)
                print(totp.code(step: step))
                let remaining = try totp.secondsRemaining(at: date)
                print("valid for \(remaining) more second\(remaining == 1 ? "" : "s") (step \(step))")
            case .hotp(let hotp, let counter):
                print(hotp.code(counter: counter))
                print("counter \(counter)")
            }
        }
    }
}

struct OTPVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a code. Exit 0 and print the step when accepted, 1 when refused, 2 on bad input.",
        discussion: """
            Store the printed step and pass it as --last-step next time: codes for that step or earlier are then \
            refused (RFC 6238 §5.2). For HOTP the step is the counter; the next expected counter is one more.
            """
    )

    @OptionGroup var key: OTPKeyOptions

    @Argument(help: "The code to check.")
    var code: String

    @Option(help: "The time: ISO 8601 or Unix seconds. Default: now.")
    var at: String?

    @Option(help: "Steps accepted either side of now (TOTP) or after the counter (HOTP), 0 to 10.")
    var window: Int = 1

    @Option(help: "The last step accepted before; its code and earlier ones are refused.")
    var lastStep: UInt64?

    func run() async throws {
        var outcome: OTPVerification = .refused(.noMatch)
        try runReportingErrors {
            let verifier = try OTPVerifier(window: window)
            switch try key.generator() {
            case .totp(let totp):
                let clock = FixedOneTimeCodeClock(try parseTime(at))
                outcome = try verifier.verify(code, totp: totp, lastAcceptedStep: lastStep, clock: clock)
            case .hotp(let hotp, let counter):
                outcome = verifier.verify(code, hotp: hotp, expectedCounter: counter, lastAcceptedCounter: lastStep)
            }
        }
        switch outcome {
        case .accepted(let step):
            print("accepted step \(step)")
        case .refused(let reason):
            let text =
                switch reason {
                case .malformed: "the code is not the expected number of digits"
                case .noMatch: "no step in the window has this code"
                case .replayed: "the code is for a step at or before --last-step"
                }
            print("refused: \(text)")
            throw ExitCode(1)
        }
    }
}

struct OTPSMSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sms",
        abstract: "Print an SMS message whose code is bound to a domain (WICG origin-bound one-time codes).",
        discussion: "Browsers and phones then offer to fill the code only on that site."
    )

    @Option(help: "The site the code is for (example.com).")
    var domain: String

    @Option(help: "The code.")
    var code: String

    @Option(help: "The embedded site, when the code is entered in a cross-site iframe.")
    var embedded: String?

    @Argument(help: "Text for people, shown before the binding line.")
    var text: String = ""

    func run() async throws {
        try runReportingErrors {
            let message = try OriginBoundMessage(topLevelHost: domain, code: code, embeddedHost: embedded)
            print(message.message(text: text))
        }
    }
}
