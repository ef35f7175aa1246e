import Testing

@testable import SesameBytes

/// What the one constant-time compare answers (its timing is not asserted: a test that measures time would be
/// flaky on a shared machine and prove little).
@Suite struct ConstantTimeTests {
    @Test func equalBytesAreEqual() {
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(ConstantTime.equal(Array(repeating: 0xFF, count: 64), Array(repeating: 0xFF, count: 64)))
    }

    @Test func anyDifferingByteMakesThemUnequal() {
        let base: [UInt8] = Array(0..<32)
        for index in base.indices {
            for bit in 0..<8 {
                var other = base
                other[index] ^= 1 << UInt8(bit)
                #expect(!ConstantTime.equal(base, other), "byte \(index), bit \(bit)")
            }
        }
    }

    @Test func differentLengthsAreUnequal() {
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2]))
        #expect(!ConstantTime.equal([1, 2], [1, 2, 3]))
        #expect(!ConstantTime.equal([0], []))
        // A prefix is not equal to the whole, even when every byte it has matches.
        #expect(!ConstantTime.equal([UInt8](), [0]))
    }

    @Test func emptyInputsAreEqual() {
        #expect(ConstantTime.equal([UInt8](), [UInt8]()))
    }

    @Test func collectionsOfDifferentTypesCompareByTheirBytes() {
        let bytes: [UInt8] = [0x61, 0x62, 0x63]
        #expect(ConstantTime.equal(bytes, "abc".utf8))
        #expect(ConstantTime.equal(bytes[1...], [0x62, 0x63]))
        #expect(!ConstantTime.equal(bytes[1...], "abc".utf8))
    }

    /// Collections without contiguous storage take the copying path; one contiguous and one not, too.
    @Test func collectionsWithoutContiguousStorageCompareByTheirBytes() {
        let computed = (0..<3).lazy.map { UInt8(0x61 + $0) }
        #expect(ConstantTime.equal(computed, [0x61, 0x62, 0x63]))
        #expect(ConstantTime.equal([0x61, 0x62, 0x63], computed))
        #expect(ConstantTime.equal(computed, "abc".utf8))
        #expect(!ConstantTime.equal(computed, [0x61, 0x62, 0x64]))
        #expect(!ConstantTime.equal((0..<3).lazy.map { UInt8($0) }, computed))
    }
}
