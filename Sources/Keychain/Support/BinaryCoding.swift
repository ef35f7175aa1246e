/// Big-endian reading with every length checked against the bytes left, for the vault file, session file and
/// sealed records. A read past the end throws the code the caller chose (usually `truncatedFile` or
/// `malformedRecord`); nothing is allocated from a length before it has been checked.
struct BinaryReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    let shortCode: KeychainError.Code
    let what: String

    init(_ bytes: [UInt8], shortCode: KeychainError.Code, what: String) {
        self.bytes = bytes
        self.offset = 0
        self.shortCode = shortCode
        self.what = what
    }

    var remaining: Int { bytes.count - offset }

    mutating func read(_ count: Int) throws(KeychainError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw KeychainError(shortCode, reason: "\(what) ends before its \(count)-byte field at offset \(offset)")
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func readUInt8() throws(KeychainError) -> UInt8 { try read(1)[0] }

    mutating func readUInt16() throws(KeychainError) -> UInt16 {
        let b = try read(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    mutating func readUInt32() throws(KeychainError) -> UInt32 {
        let b = try read(4)
        return b.reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func readUInt64() throws(KeychainError) -> UInt64 {
        let b = try read(8)
        return b.reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func readRest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

/// Big-endian writing, the counterpart of ``BinaryReader``.
struct BinaryWriter {
    private(set) var bytes: [UInt8] = []

    mutating func write(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }
    mutating func write(_ v: UInt8) { bytes.append(v) }
    mutating func write(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(v & 0xff)] }
    mutating func write(_ v: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift)))
        }
    }
    mutating func write(_ v: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
        }
    }
}
