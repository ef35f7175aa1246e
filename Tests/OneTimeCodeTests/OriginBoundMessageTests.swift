import Testing

@testable import OneTimeCode

/// Examples from the specification: WICG "Origin-bound one-time codes delivered via SMS",
/// https://wicg.github.io/sms-one-time-codes/ (source: github.com/WICG/sms-one-time-codes, index.bs at commit
/// 2bb70db, sections "Authoring" and "Parsing"), where the embedded host takes the "@" sigil.
struct OriginBoundMessageSpecExampleTests {
    @Test(
        arguments: [
            ("747723 is your ExampleCo authentication code.\n\n@example.com #747723", "example.com", "747723", nil),
            (
                "747723 is your ExampleCo authentication code.\n\n@example.com #747723 @ecommerce.example",
                "example.com", "747723", "ecommerce.example"
            ),
            // Trailing text on the last line is ignored.
            ("@example.com #747723 @ecommerce.example $future", "example.com", "747723", "ecommerce.example"),
        ] as [(String, String, String, String?)])
    func validExamples(message: String, host: String, code: String, embedded: String?) throws {
        let parsed = try OriginBoundMessage(parsing: message)
        #expect(parsed.topLevelHost == host)
        #expect(parsed.code == code)
        #expect(parsed.embeddedHost == embedded)
    }

    @Test(arguments: [
        "something @example.com #747723",  // does not start with the top-level host
        "#747723 @ecommerce.example @example.com",  // fields in the wrong order
        "@example.com code #747723",  // more than one space between the values
    ])
    func invalidExamples(message: String) {
        #expect(throws: OneTimeCodeError(.invalidSMSMessage)) { try OriginBoundMessage(parsing: message) }
    }
}

/// Further cases derived from the parsing algorithm's steps.
struct OriginBoundMessageTests {
    @Test(
        arguments: [
            ("Your code is 123456.\r\n\r\n@example.com #123456", "example.com", "123456", nil),  // CR LF
            ("Your code is 123456.\r\r@example.com #123456", "example.com", "123456", nil),  // lone CR
            ("@example.com #123456", "example.com", "123456", nil),  // no explanatory text
            ("@example.com #123456 trailing words", "example.com", "123456", nil),  // trailing text, no embedded
            ("@example.com #123456 @", "example.com", "123456", nil),  // empty embedded token: null, not failure
            ("@example.com #123456\tmore", "example.com", "123456", nil),  // a tab ends the code token
            ("@example.com #A1-b2 @shop.example", "example.com", "A1-b2", "shop.example"),
        ] as [(String, String, String, String?)])
    func valid(message: String, host: String, code: String, embedded: String?) throws {
        let parsed = try OriginBoundMessage(parsing: message)
        #expect(parsed.topLevelHost == host)
        #expect(parsed.code == code)
        #expect(parsed.embeddedHost == embedded)
    }

    @Test(arguments: [
        ("", OneTimeCodeError.Code.invalidSMSMessage),
        ("@example.com #123456\n", .invalidSMSMessage),  // the last line is empty
        ("@example.com #123456\nThanks!", .invalidSMSMessage),  // binding not on the last line
        ("@example.com  #123456", .invalidSMSMessage),  // two spaces
        ("@example.com\t#123456", .invalidSMSMessage),  // a tab is not the separator
        ("@example.com", .invalidSMSMessage),
        ("@example.com ", .invalidSMSMessage),
        ("@example.com #", .invalidSMSMessage),
        ("@ #123456", .invalidSMSMessage),
        (" @example.com #123456", .invalidSMSMessage),  // leading space
        ("@exa_mple.com #123456", .invalidHost),
        ("@-example.com #123456", .invalidHost),
        ("@example..com #123456", .invalidHost),
        ("@example.com. #123456", .invalidHost),
        ("@https://example.com #123456", .invalidHost),
        ("@example.com:443 #123456", .invalidHost),
        ("@exämple.com #123456", .invalidHost),  // must be given as Punycode
        ("@example.com #123456 @bad_host", .invalidHost),
    ])
    func invalid(message: String, code: OneTimeCodeError.Code) {
        #expect(throws: OneTimeCodeError(code)) { try OriginBoundMessage(parsing: message) }
    }

    @Test func formatsAndParsesBack() throws {
        let plain = try OriginBoundMessage(topLevelHost: "example.com", code: "123456")
        let text = plain.message(text: "Your code is 123456.")
        #expect(text == "Your code is 123456.\n\n@example.com #123456")
        #expect(try OriginBoundMessage(parsing: text) == plain)

        let embedded = try OriginBoundMessage(topLevelHost: "example.com", code: "123456", embeddedHost: "pay.example")
        let embeddedText = embedded.message(text: "Your code is 123456.\n\n")
        #expect(embeddedText == "Your code is 123456.\n\n@example.com #123456 @pay.example")
        #expect(try OriginBoundMessage(parsing: embeddedText) == embedded)
        #expect(plain.message(text: "") == "@example.com #123456")
    }

    @Test(arguments: ["", "12 34", "12\n34", "12\u{7F}", "\u{00E9}", String(repeating: "1", count: 65)])
    func unsafeCodesAreRefusedWhenFormatting(code: String) {
        #expect(throws: OneTimeCodeError(.invalidSMSMessage)) {
            try OriginBoundMessage(topLevelHost: "example.com", code: code)
        }
    }

    @Test func hostLengthLimits() throws {
        let label63 = String(repeating: "a", count: 63)
        #expect(throws: Never.self) { try OriginBoundMessage(topLevelHost: "\(label63).com", code: "1") }
        #expect(throws: OneTimeCodeError(.invalidHost)) {
            try OriginBoundMessage(topLevelHost: "\(label63)a.com", code: "1")
        }
        let long = Array(repeating: label63, count: 4).joined(separator: ".")  // 255 characters
        #expect(throws: OneTimeCodeError(.invalidHost)) { try OriginBoundMessage(topLevelHost: long, code: "1") }
    }
}
