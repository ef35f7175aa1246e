import Testing

@testable import CBOR

private func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.filter { !$0.isWhitespace }.makeIterator()
    while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
    return out
}

struct CBORDecodingTests {
    /// Encoded examples from RFC 8949 Appendix A that are in canonical form, with their decoded value.
    static let appendixA: [(String, CBOR)] = [
        ("00", 0), ("01", 1), ("0a", 10), ("17", 23), ("1818", 24), ("1819", 25), ("1864", 100),
        ("1903e8", 1000), ("1a000f4240", 1_000_000), ("1b000000e8d4a51000", 1_000_000_000_000),
        ("1bffffffffffffffff", .unsigned(UInt64.max)), ("3bffffffffffffffff", .negative(UInt64.max)),
        ("20", -1), ("29", -10), ("3863", -100), ("3903e7", -1000),
        ("f90000", .float(0)), ("f98000", .float(-0.0)), ("f93c00", .float(1)), ("fb3ff199999999999a", .float(1.1)),
        ("f93e00", .float(1.5)), ("f97bff", .float(65504)), ("fa47c35000", .float(100000)),
        ("fa7f7fffff", .float(Double(Float.greatestFiniteMagnitude))), ("fb7e37e43c8800759c", .float(1.0e300)),
        ("f90001", .float(5.960464477539063e-8)), ("f90400", .float(0.00006103515625)), ("f9c400", .float(-4)),
        ("fbc010666666666666", .float(-4.1)), ("f97c00", .float(.infinity)), ("f97e00", .float(.nan)),
        ("f9fc00", .float(-.infinity)),
        ("f4", false), ("f5", true), ("f6", .null), ("f7", .undefined), ("f0", .simple(16)), ("f8ff", .simple(255)),
        ("c074323031332d30332d32315432303a30343a30305a", .tagged(0, "2013-03-21T20:04:00Z")),
        ("c11a514b67b0", .tagged(1, 1_363_896_240)), ("d74401020304", .tagged(23, .byteString([1, 2, 3, 4]))),
        ("40", .byteString([])), ("4401020304", .byteString([1, 2, 3, 4])),
        ("60", ""), ("6161", "a"), ("6449455446", "IETF"), ("62225c", "\"\\"), ("62c3bc", "\u{00fc}"),
        ("63e6b0b4", "\u{6c34}"), ("64f0908591", "\u{10151}"),
        ("80", []), ("83010203", [1, 2, 3]), ("8301820203820405", [1, [2, 3], [4, 5]]),
        ("a0", .map([])), ("a201020304", .map([CBORMapEntry(1, 2), CBORMapEntry(3, 4)])),
        ("a26161016162820203", .map([CBORMapEntry("a", 1), CBORMapEntry("b", [2, 3])])),
        ("826161a161626163", ["a", .map([CBORMapEntry("b", "c")])]),
    ]

    @Test(arguments: appendixA.indices)
    func decodesAppendixA(_ index: Int) throws {
        let (encoded, expected) = Self.appendixA[index]
        let decoded = try CBORDecoder().decode(hex(encoded))
        if case .float(let e) = expected, case .float(let d) = decoded {
            #expect(d.bitPattern == e.bitPattern || (d.isNaN && e.isNaN))
        } else {
            #expect(decoded == expected)
        }
        #expect(CBOREncoder.encode(decoded) == hex(encoded), "re-encoding \(encoded)")
    }

    /// Malformed or non-canonical inputs, each with the error it must give.
    static let refused: [(String, CBORError.Code)] = [
        ("", .truncated), ("18", .truncated), ("1900", .truncated), ("44010203", .truncated),
        ("1817", .nonCanonicalInteger), ("190017", .nonCanonicalInteger), ("1a0000ffff", .nonCanonicalInteger),
        ("1b00000000ffffffff", .nonCanonicalInteger), ("3817", .nonCanonicalInteger), ("5800", .nonCanonicalInteger),
        ("5f42010243030405ff", .indefiniteLength), ("9fff", .indefiniteLength), ("bfff", .indefiniteLength),
        ("7f6161ff", .indefiniteLength), ("1c", .reservedAdditionalInfo), ("5d", .reservedAdditionalInfo),
        ("62c328", .invalidUTF8), ("61ff", .invalidUTF8),
        ("a203040102", .unsortedMapKeys), ("a2616201616102", .unsortedMapKeys),
        ("a220010102", .unsortedMapKeys),  // -1 (0x20) sorts after 1 (0x01)
        ("a201020103", .duplicateMapKey), ("0000", .trailingBytes), ("f813", .unsupportedSimpleValue),
        ("fa3f800000", .nonCanonicalFloat),
        ("f9ff01", .nonCanonicalFloat),  // NaN with a payload; found by FuzzCBOR
        ("fa7fc00000", .nonCanonicalFloat), ("fb7ff8000000000000", .nonCanonicalFloat),
        ("fb3ff0000000000000", .nonCanonicalFloat),
        ("5bffffffffffffffff", .integerOverflow), ("5a7fffffff", .truncated), ("9a7fffffff", .truncated),
        ("ba7fffffff", .truncated),
    ]

    @Test(arguments: refused.indices)
    func refusesMalformed(_ index: Int) {
        let (encoded, code) = Self.refused[index]
        #expect(throws: CBORError(code, offset: 0), "input \(encoded)") { try CBORDecoder().decode(hex(encoded)) }
    }

    @Test func lenientMapOrderStillRefusesDuplicates() throws {
        let lenient = CBORDecoder(options: .lenientMapOrder)
        #expect(try lenient.decode(hex("a203040102")) == .map([CBORMapEntry(3, 4), CBORMapEntry(1, 2)]))
        #expect(throws: CBORError(.duplicateMapKey, offset: 0)) { try lenient.decode(hex("a201020103")) }
    }

    @Test func depthLimit() throws {
        let options = CBORDecodingOptions(maximumDepth: 4)
        #expect(try CBORDecoder(options: options).decode(hex("8181818100")) == [[[[0]]]])
        #expect(throws: CBORError(.depthLimitExceeded, offset: 0)) {
            try CBORDecoder(options: options).decode(hex("818181818100"))
        }
        // A deeply nested input far beyond the default limit fails cleanly instead of exhausting the stack.
        let deep = [UInt8](repeating: 0x81, count: 100_000) + [0]
        #expect(throws: CBORError(.depthLimitExceeded, offset: 0)) { try CBORDecoder().decode(deep) }
    }

    @Test func collectionCountLimit() {
        let options = CBORDecodingOptions(maximumCollectionCount: 2)
        #expect(throws: CBORError(.sizeLimitExceeded, offset: 0)) {
            try CBORDecoder(options: options).decode(hex("83010203"))
        }
    }

    @Test func decodePrefixReportsConsumedLength() throws {
        let (item, used) = try CBORDecoder().decodePrefix(hex("a1616101ffff"))
        #expect(item == .map([CBORMapEntry("a", 1)]))
        #expect(used == 4)
    }

    @Test func errorOffsetPointsAtTheProblem() {
        do {
            _ = try CBORDecoder().decode(hex("8301021817"))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .nonCanonicalInteger)
            #expect(error.offset == 3)
        }
    }
}

struct CBOREncodingTests {
    @Test func sortsMapKeysCanonically() {
        let map: CBOR = .map([
            CBORMapEntry(-2, 0), CBORMapEntry("b", 0), CBORMapEntry(1, 0), CBORMapEntry(-1, 0), CBORMapEntry(3, 0),
            CBORMapEntry("a", 0), CBORMapEntry(256, 0),
        ])
        // 1, 3, -1, -2 (one byte each), "a", "b" (two bytes), 256 (three bytes)
        #expect(CBOREncoder.encode(map) == hex("a7 0100 0300 2000 2100 616100 616200 19010000"))
    }

    @Test(arguments: [
        Int64.min, -65_537, -65_536, -257, -256, -25, -24, -1, 0, 23, 24, 255, 256, 65_535, 65_536, Int64.max,
    ])
    func integersRoundTrip(_ value: Int64) throws {
        let encoded = CBOREncoder.encode(CBOR(value))
        let decoded = try CBORDecoder().decode(encoded)
        #expect(decoded.int64 == value)
    }

    @Test func nestedRoundTrip() throws {
        let value: CBOR = .map([
            CBORMapEntry("fmt", "packed"),
            CBORMapEntry("attStmt", .map([CBORMapEntry("alg", -7), CBORMapEntry("sig", .byteString([1, 2, 3]))])),
            CBORMapEntry("authData", .byteString([UInt8](repeating: 7, count: 300))),
        ])
        let decoded = try CBORDecoder().decode(CBOREncoder.encode(value))
        #expect(decoded[text: "fmt"] == "packed")
        #expect(decoded[text: "attStmt"]?[text: "alg"]?.int == -7)
        #expect(decoded[text: "authData"]?.bytes?.count == 300)
    }
}
