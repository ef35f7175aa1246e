/// A big-endian reader over TPM 2.0 wire structures (TPM 2.0 Library, Part 2 "Structures", §3: every integer is
/// big-endian, every `TPM2B_*` is a 2-byte size followed by that many bytes).
///
/// Each read checks the bytes left before taking any: a size field larger than the rest of the input is an error,
/// never an allocation. ``finish(_:)`` demands that every byte was consumed.
struct TPMReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    /// Names the structure in errors (`certInfo`, `pubArea`).
    let structure: String

    init(_ bytes: [UInt8], structure: String) {
        self.bytes = bytes
        self.offset = 0
        self.structure = structure
    }

    var remaining: Int { bytes.count - offset }

    mutating func uint8(_ field: String) throws(WebAuthnError) -> UInt8 {
        try need(1, field)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16(_ field: String) throws(WebAuthnError) -> UInt16 {
        try need(2, field)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func uint32(_ field: String) throws(WebAuthnError) -> UInt32 {
        try need(4, field)
        var value: UInt32 = 0
        for index in offset..<offset + 4 { value = value << 8 | UInt32(bytes[index]) }
        offset += 4
        return value
    }

    mutating func uint64(_ field: String) throws(WebAuthnError) -> UInt64 {
        try need(8, field)
        var value: UInt64 = 0
        for index in offset..<offset + 8 { value = value << 8 | UInt64(bytes[index]) }
        offset += 8
        return value
    }

    /// `count` raw bytes.
    mutating func bytes(_ count: Int, _ field: String) throws(WebAuthnError) -> [UInt8] {
        try need(count, field)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A `TPM2B_*` value: `UINT16 size ‖ BYTE buffer[size]`, at most `maximum` bytes of buffer.
    mutating func sized(_ field: String, maximum: Int) throws(WebAuthnError) -> [UInt8] {
        let size = Int(try uint16(field + ".size"))
        guard size <= maximum else {
            throw TPMReader.error(structure, "\(field) is \(size) bytes; at most \(maximum) are allowed")
        }
        return try bytes(size, field)
    }

    /// Throws unless every byte has been read.
    func finish() throws(WebAuthnError) {
        guard remaining == 0 else {
            throw TPMReader.error(structure, "\(remaining) byte(s) after the end of the structure")
        }
    }

    private func need(_ count: Int, _ field: String) throws(WebAuthnError) {
        guard count >= 0, remaining >= count else {
            throw TPMReader.error(structure, "truncated at \(field)")
        }
    }

    static func error(_ structure: String, _ detail: String) -> WebAuthnError {
        WebAuthnError(.tpmStructureInvalid, detail: "\(structure): \(detail)")
    }
}

/// TPM 2.0 algorithm identifiers used by WebAuthn `tpm` statements (TPM 2.0 Library Part 2 §6.3, `TPM_ALG_ID`).
public struct TPMAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let rsa = TPMAlgorithm(rawValue: 0x0001)
    public static let sha1 = TPMAlgorithm(rawValue: 0x0004)
    public static let sha256 = TPMAlgorithm(rawValue: 0x000B)
    public static let sha384 = TPMAlgorithm(rawValue: 0x000C)
    public static let sha512 = TPMAlgorithm(rawValue: 0x000D)
    public static let null = TPMAlgorithm(rawValue: 0x0010)
    public static let ecc = TPMAlgorithm(rawValue: 0x0023)

    /// The digest size of a hash algorithm, nil for anything else.
    var digestSize: Int? {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .rsa: "RSA"
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        case .null: "NULL"
        case .ecc: "ECC"
        default: "TPM_ALG(0x\(String(rawValue, radix: 16)))"
        }
    }
}
