import Testing

@testable import SesameBytes

@Suite struct JSONStringTests {
    @Test func escapesQuotesAndBackslashes() {
        #expect(JSONString.quoted("") == "\"\"")
        #expect(JSONString.quoted("a\"b\\c") == "\"a\\\"b\\\\c\"")
        #expect(JSONString.quoted("/é😀") == "\"/é😀\"")
    }

    @Test func shortEscapesForTheCommonControls() {
        #expect(JSONString.quoted("\n\r\t") == "\"\\n\\r\\t\"")
        #expect(JSONString.quoted("\u{00}\u{1f}\u{7f}") == "\"\\u0000\\u001f\u{7f}\"")
    }

    /// W3C WebAuthn Level 3 §5.8.1.1 (CCDToString): every code point below U+0020 as `\u` and four hex digits.
    @Test func unicodeEscapesForClientData() {
        #expect(JSONString.quoted("\n\r\t", controls: .unicode) == "\"\\u000a\\u000d\\u0009\"")
        #expect(JSONString.quoted("a\"\u{01}", controls: .unicode) == "\"a\\\"\\u0001\"")
    }
}
