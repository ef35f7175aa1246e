/// A QR code symbol (ISO/IEC 18004 Model 2), encoded in byte mode.
///
/// The encoder picks the smallest version (1–40) that holds the data at the requested error-correction level,
/// splits the codewords into the version's Reed–Solomon blocks, places them, then tries all eight data masks and
/// keeps the one with the lowest penalty score (the standard's four rules). Output is a module matrix that
/// ``png(scale:quietZone:)`` and ``svg(scale:quietZone:)`` render.
///
/// Only byte mode is used: key URIs mix cases and punctuation, where numeric and alphanumeric modes do not apply,
/// and scanners of authenticator apps all read byte mode.
public struct QRCode: Sendable, Hashable {
    /// Error-correction level: the share of codewords that can be restored (about 7, 15, 25 and 30 %).
    public enum ErrorCorrection: String, Sendable, Hashable, CaseIterable {
        case low = "L"
        case medium = "M"
        case quartile = "Q"
        case high = "H"

        var tableIndex: Int {
            switch self {
            case .low: 0
            case .medium: 1
            case .quartile: 2
            case .high: 3
            }
        }

        /// The two bits that name the level in the format information.
        var formatBits: Int {
            switch self {
            case .low: 1
            case .medium: 0
            case .quartile: 3
            case .high: 2
            }
        }
    }

    public let version: Int
    public let errorCorrection: ErrorCorrection
    /// The data mask applied (0–7).
    public let mask: Int
    /// Modules per side, without the quiet zone: 17 + 4 × version.
    public let size: Int
    /// Row-major; `true` is dark.
    let modules: [Bool]

    /// Whether the module at `row`, `column` is dark. Out-of-range positions are light (the quiet zone).
    public subscript(row row: Int, column column: Int) -> Bool {
        guard (0..<size).contains(row), (0..<size).contains(column) else { return false }
        return modules[row * size + column]
    }

    /// Encodes text as its UTF-8 bytes.
    public init(encoding text: String, errorCorrection: ErrorCorrection = .medium) throws(OneTimeCodeError) {
        try self.init(encoding: Array(text.utf8), errorCorrection: errorCorrection)
    }

    /// Encodes bytes.
    /// - Parameter mask: force a mask (0–7) instead of choosing by penalty; for tests.
    public init(
        encoding data: [UInt8],
        errorCorrection: ErrorCorrection = .medium,
        mask forcedMask: Int? = nil
    ) throws(OneTimeCodeError) {
        if let forcedMask, !(0...7).contains(forcedMask) {
            throw OneTimeCodeError(.invalidImageOptions, reason: "mask must be 0 to 7")
        }
        guard let version = QRTables.smallestVersion(byteCount: data.count, level: errorCorrection) else {
            throw OneTimeCodeError(
                .dataTooLong,
                reason: "\(data.count) bytes exceed a version 40 symbol at level \(errorCorrection.rawValue)"
            )
        }
        let codewords = Self.codewords(for: data, version: version, level: errorCorrection)
        var matrix = QRMatrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.placeCodewords(codewords)

        var chosenMask = 0
        var chosenMatrix = matrix
        var lowestScore = Int.max
        for mask in forcedMask.map({ [$0] }) ?? Array(0...7) {
            var candidate = matrix
            candidate.applyMask(mask)
            candidate.drawFormatBits(level: errorCorrection, mask: mask)
            let score = forcedMask == nil ? candidate.penalty() : 0
            if score < lowestScore {
                (chosenMask, chosenMatrix, lowestScore) = (mask, candidate, score)
            }
        }
        self.version = version
        self.errorCorrection = errorCorrection
        self.mask = chosenMask
        self.size = chosenMatrix.size
        self.modules = chosenMatrix.dark
    }

    /// Data codewords (mode, count, bytes, terminator, padding) followed by interleaved error correction.
    static func codewords(for data: [UInt8], version: Int, level: ErrorCorrection) -> [UInt8] {
        let capacity = QRTables.dataCodewords(version: version, level: level)
        var bits = BitWriter()
        bits.append(0b0100, count: 4)  // byte mode
        bits.append(UInt32(data.count), count: version <= 9 ? 8 : 16)
        for byte in data { bits.append(UInt32(byte), count: 8) }
        let capacityBits = capacity * 8
        bits.append(0, count: min(4, capacityBits - bits.count))  // terminator, shortened when full
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var bytes = bits.bytes
        var pad: UInt8 = 0xEC
        while bytes.count < capacity {
            bytes.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }

        // Blocks: the first ones are one data codeword shorter when the division is not even.
        let blockCount = QRTables.blockCount(version: version, level: level)
        let eccPerBlock = QRTables.eccCodewordsPerBlock(version: version, level: level)
        let shortData = capacity / blockCount
        let longBlocks = capacity % blockCount
        let generator = ReedSolomon.generator(degree: eccPerBlock)
        var dataBlocks: [ArraySlice<UInt8>] = []
        var eccBlocks: [[UInt8]] = []
        var start = 0
        for index in 0..<blockCount {
            let length = shortData + (index >= blockCount - longBlocks ? 1 : 0)
            let block = bytes[start..<(start + length)]
            start += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(of: block, generator: generator))
        }
        var result: [UInt8] = []
        result.reserveCapacity(QRTables.rawDataModules(version: version) / 8)
        for column in 0...shortData {
            for block in dataBlocks where column < block.count {
                result.append(block[block.startIndex + column])
            }
        }
        for column in 0..<eccPerBlock {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }
}

struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: UInt32, count bitCount: Int) {
        for shift in stride(from: bitCount - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> UInt32(shift)) & 1 == 1 {
                bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8)
            }
            count += 1
        }
    }
}

/// Capacities and block structure per version and level (ISO/IEC 18004:2015 Table 9).
enum QRTables {
    /// Error-correction codewords per block, by level (L, M, Q, H) then version (index 0 unused).
    static let eccPerBlock: [[Int]] = [
        [
            0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
            28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
            26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],
        [
            0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
            28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
            30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
    ]

    /// Reed–Solomon blocks, by level then version (index 0 unused).
    static let blocks: [[Int]] = [
        [
            0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
            8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25,
        ],
        [
            0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
            17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
        ],
        [
            0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
            23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
        ],
        [
            0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
            25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
        ],
    ]

    static func eccCodewordsPerBlock(version: Int, level: QRCode.ErrorCorrection) -> Int {
        eccPerBlock[level.tableIndex][version]
    }

    static func blockCount(version: Int, level: QRCode.ErrorCorrection) -> Int {
        blocks[level.tableIndex][version]
    }

    /// Modules left for codewords once every function pattern (finders, separators, timing, alignment, format
    /// and version information, the dark module) is drawn.
    static func rawDataModules(version: Int) -> Int {
        let size = 17 + 4 * version
        var modules = size * size
        modules -= 3 * 64  // finder patterns with their separators
        modules -= 2 * (size - 16)  // timing patterns between the separators
        modules -= 31  // two copies of format information (15 + 15) and the dark module
        if version >= 2 {
            let count = alignmentPositions(version: version).count
            let patterns = count * count - 3
            modules -= 25 * patterns
            // Alignment patterns on the timing lines do not take new modules there.
            modules += 2 * 5 * (count - 2)
        }
        if version >= 7 { modules -= 2 * 18 }  // version information
        return modules
    }

    static func dataCodewords(version: Int, level: QRCode.ErrorCorrection) -> Int {
        rawDataModules(version: version) / 8 - eccCodewordsPerBlock(version: version, level: level)
            * blockCount(version: version, level: level)
    }

    static func smallestVersion(byteCount: Int, level: QRCode.ErrorCorrection) -> Int? {
        for version in 1...40 {
            let header = 4 + (version <= 9 ? 8 : 16)
            let maximumCount = version <= 9 ? 255 : 65535
            if byteCount <= maximumCount, header + 8 * byteCount <= dataCodewords(version: version, level: level) * 8 {
                return version
            }
        }
        return nil
    }

    /// Centre coordinates of alignment patterns on each axis: 6, then evenly spaced (by an even step) up to
    /// size − 7. Version 32 is the one exception to the spacing rule the others follow.
    static func alignmentPositions(version: Int) -> [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        let last = 4 * version + 10
        let step: Int
        if version == 32 {
            step = 26
        } else {
            // Spread count−1 intervals over last−6, rounding the step up to an even number.
            let span = last - 6
            let intervals = count - 1
            step = ((span + 2 * intervals - 1) / (2 * intervals)) * 2
        }
        var positions = [6]
        for index in stride(from: count - 2, through: 0, by: -1) {
            positions.append(last - index * step)
        }
        return positions
    }
}
