/// A small DEFLATE compressor (RFC 1951) for QR images: one block with the fixed Huffman codes (§3.2.6), and
/// LZ77 matches at only two distances: 1 (runs of equal bytes) and the scanline length (a row equal to the one
/// above). QR images are made of exactly those two redundancies: runs of light or dark modules, and each module
/// row repeated `scale` times. That makes a version 10 image at scale 8 about 20 times smaller than stored blocks,
/// without a general match finder.
enum Deflate {
    /// Compresses `data`; `stride` is the distance of the second match candidate (PNG: bytes per scanline + 1).
    static func compress(_ data: [UInt8], stride: Int) -> [UInt8] {
        var writer = BitStream()
        writer.write(1, bits: 1)  // BFINAL
        writer.write(1, bits: 2)  // BTYPE = 01, fixed Huffman codes
        let strideDistance = (1...32768).contains(stride) ? stride : 1
        var position = 0
        while position < data.count {
            var bestLength = 0
            var bestDistance = 0
            for distance in [strideDistance, 1] where distance <= position {
                var length = 0
                while length < 258, position + length < data.count,
                    data[position + length] == data[position + length - distance]
                {
                    length += 1
                }
                if length > bestLength {
                    (bestLength, bestDistance) = (length, distance)
                }
            }
            if bestLength >= 3 {
                writeLength(bestLength, into: &writer)
                writeDistance(bestDistance, into: &writer)
                position += bestLength
            } else {
                writeLiteral(Int(data[position]), into: &writer)
                position += 1
            }
        }
        writeLiteral(256, into: &writer)  // end of block
        return writer.finish()
    }

    /// Fixed literal/length code (RFC 1951 §3.2.6), written most significant bit first.
    private static func writeLiteral(_ symbol: Int, into writer: inout BitStream) {
        switch symbol {
        case 0...143: writer.writeHuffman(0x30 + symbol, bits: 8)
        case 144...255: writer.writeHuffman(0x190 + symbol - 144, bits: 9)
        case 256...279: writer.writeHuffman(symbol - 256, bits: 7)
        default: writer.writeHuffman(0xC0 + symbol - 280, bits: 8)
        }
    }

    static let lengthBases = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    static let lengthExtraBits = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    static let distanceBases = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtraBits = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]

    private static func writeLength(_ length: Int, into writer: inout BitStream) {
        // The last base not above `length` (258 has its own code, 285).
        let index = lengthBases.lastIndex { $0 <= length } ?? 0
        writeLiteral(257 + index, into: &writer)
        writer.write(UInt32(length - lengthBases[index]), bits: lengthExtraBits[index])
    }

    private static func writeDistance(_ distance: Int, into writer: inout BitStream) {
        let index = distanceBases.lastIndex { $0 <= distance } ?? 0
        writer.writeHuffman(index, bits: 5)
        writer.write(UInt32(distance - distanceBases[index]), bits: distanceExtraBits[index])
    }
}

/// Bits packed least significant first into bytes, as DEFLATE stores them.
struct BitStream {
    private var bytes: [UInt8] = []
    private var buffer: UInt64 = 0
    private var count = 0

    /// Writes the low `bits` bits of `value`, least significant first (header fields, extra bits).
    mutating func write(_ value: UInt32, bits: Int) {
        guard bits > 0 else { return }
        buffer |= UInt64(value & ((1 << UInt32(bits)) - 1)) << UInt64(count)
        count += bits
        while count >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            count -= 8
        }
    }

    /// Writes a Huffman code, most significant bit first (RFC 1951 §3.1.1).
    mutating func writeHuffman(_ code: Int, bits: Int) {
        var reversed: UInt32 = 0
        for index in 0..<bits where code & (1 << index) != 0 {
            reversed |= 1 << UInt32(bits - 1 - index)
        }
        write(reversed, bits: bits)
    }

    mutating func finish() -> [UInt8] {
        if count > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
        buffer = 0
        count = 0
        return bytes
    }
}
