import Foundation
import Spawn
import Testing

@testable import OneTimeCode

/// Decodes images with zbarimg (Debian zbar-tools), an independent QR reader, and compares with the input.
/// SVG goes through rsvg-convert (Debian librsvg2-bin), an independent SVG renderer, first: ImageMagick's own SVG
/// reading, which zbarimg would use, does not render paths reliably.
enum ZBar {
    static func executable(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static let path = executable("zbarimg")
    static let rsvgPath = executable("rsvg-convert")

    static let skipReason: Comment = "zbarimg (Debian zbar-tools) is not installed; scripts/test installs it"
    static let svgSkipReason: Comment =
        "zbarimg (zbar-tools) or rsvg-convert (librsvg2-bin) is not installed; scripts/test installs both"

    static func temporaryFile(_ fileExtension: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("sesame-qr-\(UUID().uuidString).\(fileExtension)")
    }

    /// Runs a program; its exit status and standard output (`Spawn`, not Foundation's `Process`).
    static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, Data) {
        let result = try Spawn.run(executable, arguments)
        return (result.status, result.output)
    }

    /// The decoded text of the symbol in a PNG, or nil when zbarimg finds none.
    static func decodePNG(_ image: [UInt8]) throws -> String? {
        guard let path else { return nil }
        let file = temporaryFile("png")
        try Data(image).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, data) = try run(path, ["--raw", "-q", file.path])
        guard status == 0 else { return nil }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// Rasterises an SVG with rsvg-convert, then decodes it like a PNG.
    static func decodeSVG(_ svg: String) throws -> String? {
        guard let rsvgPath else { return nil }
        let file = temporaryFile("svg")
        try Data(svg.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, png) = try run(rsvgPath, ["--format=png", file.path])
        guard status == 0 else { return nil }
        return try decodePNG(Array(png))
    }
}

/// Deterministic printable-ASCII text of a given length (a seeded LCG), so failures reproduce.
func sampleText(length: Int, seed: UInt64) -> String {
    var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:/?&=%.-_~@ ".utf8)
    var bytes: [UInt8] = []
    for _ in 0..<length {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        bytes.append(alphabet[Int((state >> 33) % UInt64(alphabet.count))])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Byte-mode capacity of a version at a level, from the tables: what fills that version exactly.
func byteCapacity(version: Int, level: QRCode.ErrorCorrection) -> Int {
    let bits = QRTables.dataCodewords(version: version, level: level) * 8 - 4 - (version <= 9 ? 8 : 16)
    return bits / 8
}

struct QRCodeTests {
    /// Capacities published in ISO/IEC 18004:2015 Table 7 (byte mode), a few per level, checked against what the
    /// encoder's tables compute.
    @Test(arguments: [
        (1, QRCode.ErrorCorrection.low, 17), (1, .medium, 14), (1, .quartile, 11), (1, .high, 7),
        (10, .low, 271), (10, .medium, 213), (10, .quartile, 151), (10, .high, 119),
        (40, .low, 2953), (40, .medium, 2331), (40, .quartile, 1663), (40, .high, 1273),
    ])
    func byteModeCapacity(version: Int, level: QRCode.ErrorCorrection, bytes: Int) {
        #expect(byteCapacity(version: version, level: level) == bytes)
    }

    /// ISO/IEC 18004 Annex E: alignment pattern centres for a sample of versions.
    @Test(arguments: [
        (2, [6, 18]), (7, [6, 22, 38]), (14, [6, 26, 46, 66]), (32, [6, 34, 60, 86, 112, 138]),
        (36, [6, 24, 50, 76, 102, 128, 154]), (40, [6, 30, 58, 86, 114, 142, 170]),
    ])
    func alignmentPositions(version: Int, expected: [Int]) {
        #expect(QRTables.alignmentPositions(version: version) == expected)
    }

    /// ISO/IEC 18004 Annex C and D examples: format information for M/mask 5 and version information for 7.
    @Test func formatAndVersionBits() {
        #expect(QRMatrix.formatBits(level: .medium, mask: 5) == 0b100_0000_1100_1110)
        #expect(QRMatrix.versionBits(7) == 0b00_0111_1100_1001_0100)
    }

    /// Reed–Solomon check: the ISO/IEC 18004 Annex I example, "01234567" at 1-M, whose data codewords are given
    /// there with their 10 error-correction codewords.
    @Test func reedSolomonExample() {
        let data: [UInt8] = [
            0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11,
        ]
        let ecc = ReedSolomon.remainder(of: data[...], generator: ReedSolomon.generator(degree: 10))
        #expect(ecc == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }

    @Test func picksSmallestVersionAndRejectsOverflow() throws {
        #expect(try QRCode(encoding: String(repeating: "a", count: 14), errorCorrection: .medium).version == 1)
        #expect(try QRCode(encoding: String(repeating: "a", count: 15), errorCorrection: .medium).version == 2)
        #expect(throws: OneTimeCodeError(.dataTooLong)) {
            try QRCode(encoding: String(repeating: "a", count: 1274), errorCorrection: .high)
        }
    }

    @Test func maskChoiceHasLowestPenalty() throws {
        let text = "otpauth://totp/example.com:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=example.com"
        let chosen = try QRCode(encoding: text)
        let scores = try (0...7).map { mask in
            let forced = try QRCode(encoding: Array(text.utf8), errorCorrection: .medium, mask: mask)
            var matrix = QRMatrix(version: forced.version)
            matrix.dark = forced.modules
            return matrix.penalty()
        }
        #expect(scores[chosen.mask] == scores.min())
    }

    @Test func imageOptionsAreChecked() throws {
        let code = try QRCode(encoding: "x")
        #expect(throws: OneTimeCodeError(.invalidImageOptions)) { try code.png(scale: 0) }
        #expect(throws: OneTimeCodeError(.invalidImageOptions)) { try code.svg(quietZone: -1) }
    }

    /// PNG structure: signature, IHDR fields, and the CRC-32 / Adler-32 helpers against known values
    /// (CRC-32 check value of "123456789" is 0xCBF43926; Adler-32 of "Wikipedia" is 0x11E60398).
    @Test func pngStructure() throws {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(PNG.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        let code = try QRCode(encoding: "hello")
        let png = try code.png(scale: 3, quietZone: 4)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let width = (code.size + 8) * 3
        #expect(Array(png[16..<24]) == PNG.bigEndian(UInt32(width)) + PNG.bigEndian(UInt32(width)))
        #expect(Array(png.suffix(12)) == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
    }

    // MARK: Decoding with zbarimg

    /// Every version at every level, filled to capacity (so there is no room for a terminator), as PNG.
    @Test(
        .enabled(if: ZBar.path != nil, ZBar.skipReason),
        arguments: QRCode.ErrorCorrection.allCases
    )
    func everyVersionDecodes(level: QRCode.ErrorCorrection) throws {
        for version in 1...40 {
            let text = sampleText(length: byteCapacity(version: version, level: level), seed: UInt64(version))
            let code = try QRCode(encoding: text, errorCorrection: level)
            #expect(code.version == version)
            let decoded = try ZBar.decodePNG(try code.png(scale: 2))
            #expect(decoded == text, "version \(version) level \(level.rawValue)")
        }
    }

    /// Lengths from one byte to 2 KB at every level that can hold them, as PNG (and SVG when rsvg-convert is
    /// installed; ``svgDecodes(level:)`` is the test that insists on it).
    @Test(
        .enabled(if: ZBar.path != nil, ZBar.skipReason),
        arguments: QRCode.ErrorCorrection.allCases, [1, 20, 100, 500, 1000, 1273, 1663, 2048]
    )
    func lengthsDecode(level: QRCode.ErrorCorrection, length: Int) throws {
        let text = sampleText(length: length, seed: UInt64(length))
        guard length <= byteCapacity(version: 40, level: level) else {
            #expect(throws: OneTimeCodeError(.dataTooLong)) { try QRCode(encoding: text, errorCorrection: level) }
            return
        }
        let code = try QRCode(encoding: text, errorCorrection: level)
        #expect(try ZBar.decodePNG(try code.png(scale: 3)) == text)
        if ZBar.rsvgPath != nil {
            #expect(try ZBar.decodeSVG(try code.svg(scale: 3)) == text)
        }
    }

    /// SVG output at every level, rasterised by an independent renderer, then decoded.
    @Test(
        .enabled(if: ZBar.path != nil && ZBar.rsvgPath != nil, ZBar.svgSkipReason),
        arguments: QRCode.ErrorCorrection.allCases
    )
    func svgDecodes(level: QRCode.ErrorCorrection) throws {
        let text =
            "otpauth://totp/example.com:alice%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=example.com"
        let code = try QRCode(encoding: text, errorCorrection: level)
        #expect(try ZBar.decodeSVG(try code.svg(scale: 4)) == text)
    }

    /// Each forced mask yields a readable symbol (the format information names the mask the reader must undo).
    @Test(.enabled(if: ZBar.path != nil, ZBar.skipReason), arguments: 0...7)
    func everyMaskDecodes(mask: Int) throws {
        let text = sampleText(length: 60, seed: 99)
        let code = try QRCode(encoding: Array(text.utf8), errorCorrection: .quartile, mask: mask)
        #expect(code.mask == mask)
        #expect(try ZBar.decodePNG(try code.png(scale: 4)) == text)
    }
}

/// The DEFLATE writer, checked by an independent inflater (Python's zlib, i.e. the zlib C library).
struct DeflateTests {
    static let python = ZBar.executable("python3")

    static func inflate(_ stream: [UInt8]) throws -> [UInt8]? {
        guard let python else { return nil }
        let file = ZBar.temporaryFile("z")
        try Data(stream).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], 'rb').read()))"
        let (status, data) = try ZBar.run(python, ["-c", script, file.path])
        return status == 0 ? Array(data) : nil
    }

    static func samples() -> [([UInt8], Int)] {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let rows = (0..<40).flatMap { row in [UInt8](repeating: UInt8(row % 3 == 0 ? 0xFF : 0x0F), count: 37) }
        return [
            ([], 1), ([7], 1), ([1, 2, 3], 3), (random, 101), (rows, 37), ([UInt8](repeating: 0, count: 70_000), 1),
            (Array(repeating: [1, 2, 3, 4, 5, 6, 7, 8, 9], count: 50).flatMap { $0 }, 9),
        ]
    }

    @Test(.enabled(if: python != nil, "python3 is not installed"), arguments: samples())
    func zlibInflatesToTheInput(data: [UInt8], stride: Int) throws {
        let stream = PNG.zlib(Deflate.compress(data, stride: stride), checksumOf: data)
        #expect(try Self.inflate(stream) == data)
    }

    @Test func qrImagesCompress() throws {
        let code = try QRCode(encoding: sampleText(length: 200, seed: 1))
        let png = try code.png(scale: 8)
        let pixels = (code.size + 8) * 8
        // Uncompressed scanlines would be pixels × (pixels / 8 + 1) bytes.
        #expect(png.count * 10 < pixels * (pixels / 8 + 1))
    }
}
