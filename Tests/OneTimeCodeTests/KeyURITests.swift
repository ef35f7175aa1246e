import Testing

@testable import OneTimeCode

struct KeyURITests {
    static let secretText = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

    /// The example in Google's Key URI format description, with defaults filled in.
    @Test func parsesTheKeyURIFormatExample() throws {
        let uri = try OTPKeyURI(
            parsing: "otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Example")
        #expect(uri.issuer == "Example")
        #expect(uri.account == "alice@google.com")
        guard case .totp(let totp) = uri.generator else {
            Issue.record("expected totp")
            return
        }
        #expect(totp.algorithm == .sha1 && totp.digits == 6 && totp.period == 30)
        #expect(totp.secret.base32 == Self.secretText)
    }

    @Test(arguments: [
        // Label separators: ":", "%3A", and spaces after it.
        ("otpauth://totp/ACME%20Co:john.doe@email.com?secret=\(secretText)", "ACME Co", "john.doe@email.com"),
        ("otpauth://totp/ACME%20Co%3Ajohn@x.org?secret=\(secretText)", "ACME Co", "john@x.org"),
        ("otpauth://totp/ACME%20Co:%20%20john?secret=\(secretText)&issuer=ACME%20Co", "ACME Co", "john"),
        // Issuer only in the parameter, or only in the label.
        ("otpauth://totp/john?secret=\(secretText)&issuer=Big%20Corp", "Big Corp", "john"),
        ("otpauth://totp/Big%20Corp:john?secret=\(secretText)", "Big Corp", "john"),
        // Case-insensitive scheme, type, parameter names; unknown parameters ignored.
        ("OTPAUTH://TOTP/x:y?SECRET=\(secretText)&image=https%3A%2F%2Fexample.com%2Fa.png", "x", "y"),
    ])
    func labels(text: String, issuer: String?, account: String) throws {
        let uri = try OTPKeyURI(parsing: text)
        #expect(uri.issuer == issuer)
        #expect(uri.account == account)
    }

    @Test func hotpNeedsACounter() throws {
        let uri = try OTPKeyURI(parsing: "otpauth://hotp/x:y?secret=\(Self.secretText)&counter=42&digits=8")
        guard case .hotp(let hotp, let counter) = uri.generator else {
            Issue.record("expected hotp")
            return
        }
        #expect(counter == 42 && hotp.digits == 8)
        #expect(throws: OneTimeCodeError(.missingCounter)) {
            try OTPKeyURI(parsing: "otpauth://hotp/x:y?secret=\(Self.secretText)")
        }
    }

    @Test(arguments: [
        ("https://totp/x:y?secret=\(secretText)", OneTimeCodeError.Code.invalidKeyURI),
        ("otpauth:totp/x:y?secret=\(secretText)", .invalidKeyURI),
        ("otpauth://motp/x:y?secret=\(secretText)", .invalidKeyURI),
        ("otpauth://totp?secret=\(secretText)", .invalidKeyURI),
        ("otpauth://totp/?secret=\(secretText)", .invalidKeyURI),  // empty account
        ("otpauth://totp/x:?secret=\(secretText)", .invalidKeyURI),  // empty account after issuer
        ("otpauth://totp/:y?secret=\(secretText)", .invalidKeyURI),  // empty issuer
        ("otpauth://totp/a:b:c?secret=\(secretText)", .invalidKeyURI),  // two colons
        ("otpauth://totp/x:y?issuer=x", .missingSecret),
        ("otpauth://totp/x:y?secret=", .missingSecret),
        ("otpauth://totp/x:y?secret=\(secretText)&secret=\(secretText)", .invalidKeyURI),  // duplicate
        ("otpauth://totp/x:y?secret=JBSWY3DP1", .invalidBase32),
        ("otpauth://totp/x:y?secret=JBSWY3DPEHPK3PXP", .secretTooShort),  // 80 bits
        ("otpauth://totp/x:y?secret=\(secretText)&issuer=z", .issuerMismatch),
        ("otpauth://totp/x:y?secret=\(secretText)&algorithm=MD5", .unsupportedAlgorithm),
        ("otpauth://totp/x:y?secret=\(secretText)&digits=10", .unsupportedDigits),
        ("otpauth://totp/x:y?secret=\(secretText)&digits=six", .invalidKeyURI),
        ("otpauth://totp/x:y?secret=\(secretText)&digits=-6", .invalidKeyURI),
        ("otpauth://totp/x:y?secret=\(secretText)&period=0", .invalidPeriod),
        ("otpauth://totp/x:y?secret=\(secretText)&period=99999999999999999999999", .invalidKeyURI),
        ("otpauth://totp/x:y?secret=\(secretText)&counter=1", .invalidKeyURI),  // counter on totp
        ("otpauth://hotp/x:y?secret=\(secretText)&counter=1&period=30", .invalidKeyURI),
        ("otpauth://hotp/x:y?secret=\(secretText)&counter=18446744073709551616", .invalidKeyURI),  // 2^64
        ("otpauth://totp/x:y?secret=\(secretText)#fragment", .invalidKeyURI),
        ("otpauth://totp/x%ZZ:y?secret=\(secretText)", .invalidKeyURI),  // bad escape
        ("otpauth://totp/x%4:y?secret=\(secretText)", .invalidKeyURI),  // truncated escape
        ("otpauth://totp/x%FF:y?secret=\(secretText)", .invalidKeyURI),  // not UTF-8
        ("otpauth://totp/x%0A:y?secret=\(secretText)", .invalidKeyURI),  // control character
        ("otpauth://totp/x y:z?secret=\(secretText)", .invalidKeyURI),  // raw space
        ("apple-otpauth://totp/y?secret=\(secretText)", .invalidHost),  // no issuer domain
        ("apple-otpauth://totp/Example%20Co:y?secret=\(secretText)", .invalidHost),  // issuer not a domain
    ])
    func parseErrors(text: String, code: OneTimeCodeError.Code) {
        #expect(throws: OneTimeCodeError(code)) { try OTPKeyURI(parsing: text) }
    }

    @Test func overlongURIsAreRefused() {
        let text = "otpauth://totp/x:y?secret=\(Self.secretText)&pad=" + String(repeating: "a", count: 5000)
        #expect(throws: OneTimeCodeError(.invalidKeyURI)) { try OTPKeyURI(parsing: text) }
    }

    @Test func buildsTheDocumentedForm() throws {
        let totp = try TOTP(secret: OTPSecret(base32: Self.secretText), algorithm: .sha256, digits: 8, period: 60)
        let uri = try OTPKeyURI(generator: .totp(totp), issuer: "example.com", account: "alice@example.com")
        #expect(
            uri.otpauthURI
                == "otpauth://totp/example.com:alice@example.com?secret=\(Self.secretText)&issuer=example.com"
                + "&algorithm=SHA256&digits=8&period=60")
        #expect(try uri.appleOtpauthURI() == "apple-" + uri.otpauthURI)
        let noDomain = try OTPKeyURI(generator: .totp(totp), issuer: "Example Co", account: "alice")
        #expect(noDomain.otpauthURI.hasPrefix("otpauth://totp/Example%20Co:alice?"))
        #expect(throws: OneTimeCodeError(.invalidHost)) { try noDomain.appleOtpauthURI() }
    }

    @Test(arguments: [
        "a:b", "", " leading", "tab\there", "nul\u{0}", "moc.elpmaxe\u{202E}", "zero\u{200B}width", "line\u{2028}sep",
    ])
    func invalidAccountsAreRefusedWhenBuilding(account: String) throws {
        let totp = try TOTP(secret: OTPSecret(base32: Self.secretText))
        #expect(throws: OneTimeCodeError(.invalidKeyURI)) {
            try OTPKeyURI(generator: .totp(totp), issuer: "x", account: account)
        }
    }

    // MARK: Round trips

    /// Characters that need percent-encoding and some that do not, in issuers and accounts.
    static let labelAlphabet: [Character] = Array("abcXYZ019 @.-_~+&=?/#%é漢🔑!$'()*,;[]\"<>\\^`{|}")

    static func randomLabelPart<G: RandomNumberGenerator>(_ generator: inout G, allowLeadingSpace: Bool) -> String {
        let length = Int.random(in: 1...24, using: &generator)
        var text = String((0..<length).map { _ in labelAlphabet.randomElement(using: &generator)! })
        if !allowLeadingSpace { while text.first == " " { text.removeFirst() } }
        return text.isEmpty ? "a" : text
    }

    /// Property: any valid key (both types, every algorithm and length, random periods, counters, issuers and
    /// accounts, with or without issuer) survives build → parse in both URI forms.
    @Test func roundTripProperty() throws {
        var generator = SystemRandomNumberGenerator()
        for iteration in 0..<500 {
            let secret = try OTPSecret.random(byteCount: Int.random(in: 16...64, using: &generator))
            let algorithm = OTPAlgorithm.allCases.randomElement(using: &generator)!
            let digits = Int.random(in: 6...8, using: &generator)
            let generatorValue: OTPKeyURI.Generator
            if iteration % 2 == 0 {
                let period = Int.random(in: 1...TOTP.maximumPeriod, using: &generator)
                generatorValue = .totp(try TOTP(secret: secret, algorithm: algorithm, digits: digits, period: period))
            } else {
                generatorValue = .hotp(
                    try HOTP(secret: secret, algorithm: algorithm, digits: digits),
                    counter: UInt64.random(in: 0...UInt64.max, using: &generator))
            }
            let issuer: String? =
                iteration % 5 == 0 ? nil : Self.randomLabelPart(&generator, allowLeadingSpace: true)
            let account = Self.randomLabelPart(&generator, allowLeadingSpace: false)
            let uri = try OTPKeyURI(generator: generatorValue, issuer: issuer, account: account)
            let text = uri.otpauthURI
            #expect(text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "URI must be printable ASCII: \(text)")
            #expect(try OTPKeyURI(parsing: text) == uri, "\(text)")
        }
    }

    @Test func appleRoundTripWithDomains() throws {
        var generator = SystemRandomNumberGenerator()
        for domain in ["example.com", "login.example.co.uk", "xn--bcher-kva.example", "a-b.c"] {
            let totp = try TOTP(secret: OTPSecret.random(), digits: Int.random(in: 6...8, using: &generator))
            let uri = try OTPKeyURI(generator: .totp(totp), issuer: domain, account: "alice@example.com")
            #expect(try OTPKeyURI(parsing: uri.appleOtpauthURI()) == uri)
        }
    }
}
