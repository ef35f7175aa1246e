/// The module grid while a symbol is built: dark modules plus which ones belong to function patterns (and so
/// receive no data and no mask).
struct QRMatrix: Sendable {
    let version: Int
    let size: Int
    var dark: [Bool]
    var function: [Bool]

    init(version: Int) {
        self.version = version
        self.size = 17 + 4 * version
        self.dark = Array(repeating: false, count: size * size)
        self.function = Array(repeating: false, count: size * size)
    }

    private mutating func set(_ row: Int, _ column: Int, _ isDark: Bool) {
        dark[row * size + column] = isDark
        function[row * size + column] = true
    }

    mutating func drawFunctionPatterns() {
        // Timing patterns: row 6 and column 6, alternating, dark on even positions.
        for index in 0..<size {
            set(6, index, index % 2 == 0)
            set(index, 6, index % 2 == 0)
        }
        // Finder patterns with their light separators, at three corners.
        drawFinder(centreRow: 3, centreColumn: 3)
        drawFinder(centreRow: 3, centreColumn: size - 4)
        drawFinder(centreRow: size - 4, centreColumn: 3)
        // Alignment patterns everywhere on the grid of positions except over the three finders.
        let positions = QRTables.alignmentPositions(version: version)
        for (i, row) in positions.enumerated() {
            for (j, column) in positions.enumerated() {
                let last = positions.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dr in -2...2 {
                    for dc in -2...2 {
                        set(row + dr, column + dc, max(abs(dr), abs(dc)) != 1)
                    }
                }
            }
        }
        // Reserve format areas now (filled per mask later), and draw version information.
        drawFormatBits(level: .medium, mask: 0)
        drawVersionBits()
    }

    private mutating func drawFinder(centreRow: Int, centreColumn: Int) {
        for dr in -4...4 {
            for dc in -4...4 {
                let row = centreRow + dr
                let column = centreColumn + dc
                guard (0..<size).contains(row), (0..<size).contains(column) else { continue }
                let ring = max(abs(dr), abs(dc))
                set(row, column, ring != 2 && ring != 4)
            }
        }
    }

    /// 15 bits: level and mask (5 bits), BCH(15,5) remainder with generator 0x537, XOR 0x5412.
    /// Bit 14 is the most significant.
    static func formatBits(level: QRCode.ErrorCorrection, mask: Int) -> Int {
        let data = level.formatBits << 3 | mask
        var remainder = data << 10
        for bit in stride(from: 14, through: 10, by: -1) where remainder & (1 << bit) != 0 {
            remainder ^= 0x537 << (bit - 10)
        }
        return ((data << 10) | remainder) ^ 0x5412
    }

    /// 18 bits for versions 7 and up: the version (6 bits), BCH(18,6) remainder with generator 0x1F25.
    static func versionBits(_ version: Int) -> Int {
        var remainder = version << 12
        for bit in stride(from: 17, through: 12, by: -1) where remainder & (1 << bit) != 0 {
            remainder ^= 0x1F25 << (bit - 12)
        }
        return version << 12 | remainder
    }

    mutating func drawFormatBits(level: QRCode.ErrorCorrection, mask: Int) {
        let bits = Self.formatBits(level: level, mask: mask)
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        // Copy beside the top-left finder: bits 0–7 down column 8 (skipping the timing row), 8–14 along row 8
        // from column 7 leftwards (skipping the timing column).
        for index in 0...5 { set(index, 8, bit(index)) }
        set(7, 8, bit(6))
        set(8, 8, bit(7))
        set(8, 7, bit(8))
        for index in 9...14 { set(8, 14 - index, bit(index)) }
        // Second copy: bits 0–7 along row 8 from the right edge, 8–14 up column 8 from the bottom.
        for index in 0...7 { set(8, size - 1 - index, bit(index)) }
        for index in 8...14 { set(size - 15 + index, 8, bit(index)) }
        set(size - 8, 8, true)  // the dark module
    }

    private mutating func drawVersionBits() {
        guard version >= 7 else { return }
        let bits = Self.versionBits(version)
        for index in 0..<18 {
            let isDark = (bits >> index) & 1 == 1
            let near = index / 3
            let far = size - 11 + index % 3
            set(near, far, isDark)  // block left of the top-right finder
            set(far, near, isDark)  // block above the bottom-left finder
        }
    }

    /// Places codewords, most significant bit first, in two-module-wide columns from the right edge, zigzagging
    /// up then down, skipping function modules and the vertical timing column. Leftover modules stay light.
    mutating func placeCodewords(_ codewords: [UInt8]) {
        let totalBits = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        var upward = true
        while right >= 1 {
            if right == 6 { right = 5 }
            for step in 0..<size {
                let row = upward ? size - 1 - step : step
                for column in [right, right - 1] where !function[row * size + column] {
                    if bitIndex < totalBits {
                        let byte = codewords[bitIndex >> 3]
                        dark[row * size + column] = (byte >> (7 - UInt8(bitIndex & 7))) & 1 == 1
                        bitIndex += 1
                    }
                }
            }
            upward.toggle()
            right -= 2
        }
    }

    static func maskCondition(_ mask: Int, row: Int, column: Int) -> Bool {
        switch mask {
        case 0: (row + column) % 2 == 0
        case 1: row % 2 == 0
        case 2: column % 3 == 0
        case 3: (row + column) % 3 == 0
        case 4: (row / 2 + column / 3) % 2 == 0
        case 5: (row * column) % 2 + (row * column) % 3 == 0
        case 6: ((row * column) % 2 + (row * column) % 3) % 2 == 0
        default: ((row + column) % 2 + (row * column) % 3) % 2 == 0
        }
    }

    mutating func applyMask(_ mask: Int) {
        for row in 0..<size {
            for column in 0..<size where !function[row * size + column] {
                if Self.maskCondition(mask, row: row, column: column) {
                    dark[row * size + column].toggle()
                }
            }
        }
    }

    /// The standard's penalty score: N1 runs of five or more, N2 2×2 blocks, N3 finder-like 1:1:3:1:1 patterns
    /// with four light modules on a side, N4 imbalance of dark and light.
    func penalty() -> Int {
        var score = 0
        for line in 0..<size {
            score += linePenalty { dark[line * size + $0] }
            score += linePenalty { dark[$0 * size + line] }
        }
        for row in 0..<(size - 1) {
            for column in 0..<(size - 1) {
                let value = dark[row * size + column]
                if dark[row * size + column + 1] == value, dark[(row + 1) * size + column] == value,
                    dark[(row + 1) * size + column + 1] == value
                {
                    score += 3
                }
            }
        }
        let darkCount = dark.reduce(0) { $0 + ($1 ? 1 : 0) }
        let total = size * size
        // Each full 5 % step away from 50 % dark costs 10.
        let deviation = abs(darkCount * 20 - total * 10)
        score += (deviation / total) * 10
        return score
    }

    /// Rules 1 and 3 along one row or column; modules outside the symbol count as light.
    private func linePenalty(_ module: (Int) -> Bool) -> Int {
        var score = 0
        var runColour = module(0)
        var runLength = 0
        func at(_ index: Int) -> Bool { (0..<size).contains(index) ? module(index) : false }
        for index in 0..<size {
            let value = module(index)
            if value == runColour {
                runLength += 1
            } else {
                if runLength >= 5 { score += runLength - 2 }
                runColour = value
                runLength = 1
            }
            // A finder-like pattern dark-light-dark-dark-dark-light-dark starting here…
            if value, index + 6 < size, !at(index + 1), at(index + 2), at(index + 3), at(index + 4),
                !at(index + 5), at(index + 6)
            {
                // …with four light modules before it or after it.
                let lightBefore = (1...4).allSatisfy { !at(index - $0) }
                let lightAfter = (7...10).allSatisfy { !at(index + $0) }
                if lightBefore { score += 40 }
                if lightAfter { score += 40 }
            }
        }
        if runLength >= 5 { score += runLength - 2 }
        return score
    }
}
