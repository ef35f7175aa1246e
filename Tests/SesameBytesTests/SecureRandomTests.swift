import Testing

@testable import SesameBytes

@Suite struct SecureRandomTests {
    /// Every length, whole words of eight bytes and the rest, comes back with that many bytes.
    @Test(arguments: [0, 1, 7, 8, 9, 15, 16, 17, 32, 33, 64])
    func givesTheBytesAskedFor(count: Int) {
        #expect(SecureRandom.bytes(count).count == count)
    }

    /// Every position, the last partial word's included, takes many values over many draws: a byte left at zero,
    /// or one word copied to every position, would not (400 draws of a uniform byte give about 200 distinct values;
    /// fewer than 150 has a probability far below 1e-9).
    @Test func everyPositionVaries() {
        let count = 17
        var seen = Array(repeating: Set<UInt8>(), count: count)
        for _ in 0..<400 {
            for (index, byte) in SecureRandom.bytes(count).enumerated() { seen[index].insert(byte) }
        }
        for (index, values) in seen.enumerated() {
            #expect(values.count > 150, "position \(index) took \(values.count) values")
        }
        // Positions within one draw are not copies of each other.
        let draw = SecureRandom.bytes(64)
        #expect(Set(draw).count > 20)
    }
}
