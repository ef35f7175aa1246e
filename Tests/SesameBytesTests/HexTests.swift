import Testing

@testable import SesameBytes

@Suite struct HexTests {
    @Test func encodesLowercaseTwoDigitsPerByte() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x01, 0x0A, 0x7F, 0x80, 0xFF]) == "00010a7f80ff")
        #expect(
            Hex.encode(0...255 as ClosedRange<UInt8>)
                == (0...255).map { byte in
                    let digits = String(byte, radix: 16)
                    return digits.count == 1 ? "0" + digits : digits
                }.joined())
    }

    @Test func decodesEitherCase() {
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("00010a7f80ff") == [0x00, 0x01, 0x0A, 0x7F, 0x80, 0xFF])
        #expect(Hex.decode("DEADbeef") == [0xDE, 0xAD, 0xBE, 0xEF])
        let all = [UInt8](0...255)
        #expect(Hex.decode(Hex.encode(all)) == all)
    }

    @Test func refusesAnythingButPairsOfDigits() {
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("0x00") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("00 11") == nil)
        #expect(Hex.decode("é0") == nil)
    }
}
