/// Reed–Solomon error correction over GF(2^8) with the QR code field polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D)
/// and generator roots α^0 … α^(n−1), α = 2 (ISO/IEC 18004 §7.5.2).
enum ReedSolomon {
    /// exp[i] = α^i for i in 0..<510 (doubled so products need no modulo); log[x] for x ≠ 0.
    static let tables: (exp: [UInt8], log: [Int]) = {
        var exp = [UInt8](repeating: 0, count: 510)
        var log = [Int](repeating: 0, count: 256)
        var value = 1
        for power in 0..<255 {
            exp[power] = UInt8(value)
            exp[power + 255] = UInt8(value)
            log[value] = power
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return (exp, log)
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return tables.exp[tables.log[Int(a)] + tables.log[Int(b)]]
    }

    /// Coefficients of ∏ (x − α^i), i < degree, highest power first, leading 1 omitted.
    static func generator(degree: Int) -> [UInt8] {
        var polynomial: [UInt8] = [1]
        for power in 0..<degree {
            let root = tables.exp[power]
            var next = [UInt8](repeating: 0, count: polynomial.count + 1)
            for (index, coefficient) in polynomial.enumerated() {
                next[index] ^= coefficient
                next[index + 1] ^= multiply(coefficient, root)
            }
            polynomial = next
        }
        return Array(polynomial.dropFirst())
    }

    /// The remainder of data(x) · x^n divided by the generator: the block's error-correction codewords.
    static func remainder(of data: ArraySlice<UInt8>, generator: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            if factor != 0 {
                for index in 0..<generator.count {
                    remainder[index] ^= multiply(generator[index], factor)
                }
            }
        }
        return remainder
    }
}
