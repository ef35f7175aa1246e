import Testing

@testable import OneTimeCode

/// Random and mutated input into every parser: each call returns or throws `OneTimeCodeError`, never traps (a trap
/// fails the whole run). Whatever a parser accepts must survive being written back out and parsed again.
struct RobustnessTests {
    static let pieces = [
        "otpauth://", "apple-otpauth://", "totp/", "hotp/", ":", "%3A", "%", "%ZZ", "?", "&", "=", "#", "@", " ",
        "secret=", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "issuer=", "counter=", "period=", "digits=", "algorithm=",
        "SHA1", "99999999999999999999", "0", "-1", "\n", "\r", "\r\n", "\u{0}", "é", "🔑", "\u{202E}", "example.com",
        "#123456", "@example.com", "=", "====", "A", "-", "O", "I",
    ]

    static func randomInput<G: RandomNumberGenerator>(_ generator: inout G) -> String {
        let count = Int.random(in: 0...12, using: &generator)
        return (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    @Test func parsersNeverTrap() throws {
        var generator = SystemRandomNumberGenerator()
        let verifier = try OTPVerifier()
        let totp = try TOTP(secret: OTPSecret.random())
        let (_, recovery) = try RecoveryCodeSet.generate(count: 3)
        for _ in 0..<20_000 {
            let input = Self.randomInput(&generator)
            if let uri = try? OTPKeyURI(parsing: input) {
                #expect(try OTPKeyURI(parsing: uri.otpauthURI) == uri, "\(input)")
            }
            if let message = try? OriginBoundMessage(parsing: input) {
                #expect(try OriginBoundMessage(parsing: message.message(text: "x")) == message, "\(input)")
            }
            _ = try? Base32.decode(input)
            _ = recovery.match(input)
            _ = try verifier.verify(input, totp: totp, lastAcceptedStep: nil, at: .init(timeIntervalSince1970: 0))
            _ = try? OTPAlgorithm(parsing: input)
        }
    }

    /// Valid key URIs and SMS messages with one to three random edits (insert, delete or replace a piece).
    @Test func mutatedValidInput() throws {
        var generator = SystemRandomNumberGenerator()
        let seeds = [
            "otpauth://totp/Example:alice@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example"
                + "&algorithm=SHA256&digits=8&period=60",
            "otpauth://hotp/x:y?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=7",
            "Your code is 123456.\n\n@example.com #123456 @pay.example",
        ]
        var parsedURIs = 0
        for _ in 0..<5_000 {
            var characters = Array(seeds.randomElement(using: &generator)!)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0...characters.count, using: &generator)
                let piece = Array(Self.pieces.randomElement(using: &generator)!)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: characters.insert(contentsOf: piece, at: position)
                case 1: if position < characters.count { characters.remove(at: position) }
                default: characters.replaceSubrange(position..<min(position + 1, characters.count), with: piece)
                }
            }
            let input = String(characters)
            if let uri = try? OTPKeyURI(parsing: input) {
                parsedURIs += 1
                #expect(try OTPKeyURI(parsing: uri.otpauthURI) == uri, "\(input)")
            }
            if let message = try? OriginBoundMessage(parsing: input) {
                #expect(try OriginBoundMessage(parsing: message.bindingLine) == message, "\(input)")
            }
        }
        // Some edits keep a URI valid (in the account, the issuer, an unknown parameter): the accepting path ran.
        #expect(parsedURIs > 0)
    }

    @Test func randomBytesIntoQRAndKeyURI() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let uri = try? OTPKeyURI(parsing: text) { #expect(try OTPKeyURI(parsing: uri.otpauthURI) == uri) }
            _ = try? OriginBoundMessage(parsing: text)
            let level = QRCode.ErrorCorrection.allCases.randomElement(using: &generator)!
            let code = try QRCode(encoding: bytes, errorCorrection: level)
            #expect(code.size == 17 + 4 * code.version)
        }
    }
}
