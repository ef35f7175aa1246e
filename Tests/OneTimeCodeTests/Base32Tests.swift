import Testing

@testable import OneTimeCode

struct Base32Tests {
    /// RFC 4648 §10 test vectors (padding removed: the encoder emits none).
    @Test(arguments: [
        ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
        ("foobar", "MZXW6YTBOI"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) throws {
        #expect(Base32.encode(Array(plain.utf8)) == encoded)
        #expect(try Base32.decode(encoded) == Array(plain.utf8))
    }

    /// The padded RFC 4648 forms, lower case, and spaced forms decode to the same bytes.
    @Test(arguments: ["MZXW6YTBOI======", "mzxw6ytboi", "MZXW 6YTB OI", "mZxW6yTbOi===="])
    func toleratedForms(text: String) throws {
        #expect(try Base32.decode(text) == Array("foobar".utf8))
    }

    @Test(arguments: [
        "MZXW6YTB1",  // '1' is not in the alphabet
        "MZXW6YTB0",  // nor '0'
        "MZXW6YTB8",  // nor '8'
        "MZ=XW6",  // padding in the middle
        "M",  // 1 symbol cannot come from bytes
        "MZX",  // 3 symbols neither
        "MZXW6Y",  // 6 symbols neither
        "MZ\u{00E9}",  // non-ASCII
        "MZ-XW6",  // punctuation
        "MZ\tXW6",  // only spaces are skipped
        "MR",  // "MY" is "f"; "MR" leaves non-zero unused bits
    ])
    func invalidText(text: String) {
        #expect(throws: OneTimeCodeError(.invalidBase32)) { try Base32.decode(text) }
    }

    @Test func roundTripsEveryLength() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<80 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base32.encode(bytes)
            #expect(encoded.count == (length * 8 + 4) / 5)
            #expect(try Base32.decode(encoded) == bytes)
            #expect(try Base32.decode(encoded.lowercased()) == bytes)
        }
    }
}
