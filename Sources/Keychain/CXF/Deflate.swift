/// DEFLATE (RFC 1951), as much as CXF's `fido2Extensions.largeBlob` needs: a strict inflater for what other
/// exporters wrote (stored, fixed and dynamic Huffman blocks) and a writer of stored blocks, which every inflater
/// reads. The data is a passkey's large blob, at most ``Passkey/largeBlobMaximum`` bytes once inflated, so the
/// inflater stops at the output limit it is given, checks every length and distance against what it holds, and
/// accounts for every input byte (nothing may follow the final block). Any fault is `invalidItem` (no part of the
/// data is echoed).
///
/// Decoding is canonical-Huffman by counts and symbols, as zlib's `contrib/puff` does it.
enum Deflate {
    /// Stored blocks (BTYPE 00): the bytes as they are, in blocks of at most 65,535.
    static func stored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        repeat {
            let end = min(start + 65_535, bytes.count)
            let length = UInt16(end - start)
            out.append(end == bytes.count ? 1 : 0)  // BFINAL on the last block, BTYPE 00
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            out += bytes[start..<end]
            start = end
        } while start < bytes.count
        return out
    }

    static func inflate(_ bytes: [UInt8], maximumOutput: Int) throws(KeychainError) -> [UInt8] {
        var state = State(input: bytes, limit: maximumOutput)
        var final = false
        while !final {
            final = try state.bits(1) == 1
            switch try state.bits(2) {
            case 0: try state.storedBlock()
            case 1: try state.codes(Self.fixed.lengths, Self.fixed.distances)
            case 2: try state.dynamicBlock()
            default: throw fault("a reserved block type")
            }
        }
        guard state.position == bytes.count else { throw fault("bytes after the final block") }
        return state.output
    }

    static func fault(_ what: String) -> KeychainError {
        KeychainError(.invalidItem, reason: "the large blob is not DEFLATE data this keychain reads (\(what))")
    }

    struct Huffman {
        var count = [Int](repeating: 0, count: 16)
        var symbol: [Int]

        /// A canonical code from code lengths (0: unused). Over-subscribed sets are refused; incomplete ones are
        /// kept, and a code that reaches an unused slot fails when decoded.
        init(lengths: [Int]) throws(KeychainError) {
            symbol = [Int](repeating: 0, count: lengths.count)
            for length in lengths { count[length] += 1 }
            var left = 1
            for length in 1...15 {
                left <<= 1
                left -= count[length]
                guard left >= 0 else { throw Deflate.fault("an over-subscribed code") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + count[length] }
            for (value, length) in lengths.enumerated() where length != 0 {
                symbol[offsets[length]] = value
                offsets[length] += 1
            }
        }
    }

    static let fixed: (lengths: Huffman, distances: Huffman) = {
        var lengths = [Int](repeating: 8, count: 288)
        for i in 144..<256 { lengths[i] = 9 }
        for i in 256..<280 { lengths[i] = 7 }
        // Both sets are complete canonical codes: building them cannot fail.
        return (
            try! Huffman(lengths: lengths), try! Huffman(lengths: [Int](repeating: 5, count: 30))
        )
    }()

    static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
    static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    struct State {
        let input: [UInt8]
        let limit: Int
        var position = 0
        var buffer = 0
        var available = 0
        var output: [UInt8] = []

        init(input: [UInt8], limit: Int) {
            self.input = input
            self.limit = limit
        }

        mutating func bits(_ count: Int) throws(KeychainError) -> Int {
            while available < count {
                guard position < input.count else { throw Deflate.fault("the data ends inside a block") }
                buffer |= Int(input[position]) << available
                position += 1
                available += 8
            }
            let value = buffer & ((1 << count) - 1)
            buffer >>= count
            available -= count
            return value
        }

        mutating func append(_ byte: UInt8) throws(KeychainError) {
            guard output.count < limit else { throw Deflate.fault("more data than its stated size") }
            output.append(byte)
        }

        mutating func storedBlock() throws(KeychainError) {
            buffer = 0
            available = 0  // to the byte boundary
            guard position + 4 <= input.count else { throw Deflate.fault("a stored block's header is cut short") }
            let length = Int(input[position]) | Int(input[position + 1]) << 8
            let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
            position += 4
            guard length == ~complement & 0xFFFF else { throw Deflate.fault("a stored block's length check") }
            guard position + length <= input.count else { throw Deflate.fault("a stored block is cut short") }
            for byte in input[position..<position + length] { try append(byte) }
            position += length
        }

        mutating func decode(_ code: Huffman) throws(KeychainError) -> Int {
            var value = 0
            var first = 0
            var index = 0
            for length in 1...15 {
                value |= try bits(1)
                let count = code.count[length]
                if value - count < first { return code.symbol[index + (value - first)] }
                index += count
                first += count
                first <<= 1
                value <<= 1
            }
            throw Deflate.fault("a code that is not in its table")
        }

        mutating func codes(_ lengths: Huffman, _ distances: Huffman) throws(KeychainError) {
            while true {
                let symbol = try decode(lengths)
                if symbol < 256 {
                    try append(UInt8(symbol))
                } else if symbol == 256 {
                    return
                } else {
                    let l = symbol - 257
                    guard l < Deflate.lengthBase.count else { throw Deflate.fault("a length code out of range") }
                    let length = Deflate.lengthBase[l] + (try bits(Deflate.lengthExtra[l]))
                    let d = try decode(distances)
                    guard d < Deflate.distanceBase.count else { throw Deflate.fault("a distance code out of range") }
                    let distance = Deflate.distanceBase[d] + (try bits(Deflate.distanceExtra[d]))
                    guard distance <= output.count else { throw Deflate.fault("a distance before the start") }
                    for _ in 0..<length { try append(output[output.count - distance]) }
                }
            }
        }

        mutating func dynamicBlock() throws(KeychainError) {
            let literalCount = try bits(5) + 257
            let distanceCount = try bits(5) + 1
            let codeLengthCount = try bits(4) + 4
            guard literalCount <= 286, distanceCount <= 30 else { throw Deflate.fault("too many codes") }
            var codeLengths = [Int](repeating: 0, count: 19)
            for i in 0..<codeLengthCount { codeLengths[Deflate.codeLengthOrder[i]] = try bits(3) }
            let codeLengthCode = try Huffman(lengths: codeLengths)
            var lengths: [Int] = []
            while lengths.count < literalCount + distanceCount {
                let symbol = try decode(codeLengthCode)
                switch symbol {
                case 0..<16: lengths.append(symbol)
                case 16:
                    guard let previous = lengths.last else { throw Deflate.fault("a repeat with nothing before it") }
                    lengths += [Int](repeating: previous, count: 3 + (try bits(2)))
                case 17: lengths += [Int](repeating: 0, count: 3 + (try bits(3)))
                default: lengths += [Int](repeating: 0, count: 11 + (try bits(7)))
                }
            }
            guard lengths.count == literalCount + distanceCount else { throw Deflate.fault("code lengths overrun") }
            guard lengths[256] != 0 else { throw Deflate.fault("no end-of-block code") }
            try codes(
                try Huffman(lengths: Array(lengths[0..<literalCount])),
                try Huffman(lengths: Array(lengths[literalCount...])))
        }
    }
}
