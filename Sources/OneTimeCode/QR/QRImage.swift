/// Rendering a ``QRCode`` as PNG and SVG.
///
/// PNG is the form to show on setup pages: browsers' and phones' image analysis detects QR codes in raster images
/// (and offers to add the code to the password manager), which it does not do for vector drawings. SVG suits
/// print and scalable layouts.
extension QRCode {
    /// Largest scale accepted (pixels per module); keeps a version 40 PNG under about 12 MB of pixels.
    public static let maximumScale = 20
    /// The quiet zone the standard requires is 4 modules; more is allowed, up to this.
    public static let maximumQuietZone = 16

    static func checkImageOptions(scale: Int, quietZone: Int) throws(OneTimeCodeError) {
        guard (1...maximumScale).contains(scale) else {
            throw OneTimeCodeError(.invalidImageOptions, reason: "scale must be 1 to \(maximumScale) pixels per module")
        }
        guard (0...maximumQuietZone).contains(quietZone) else {
            throw OneTimeCodeError(.invalidImageOptions, reason: "quiet zone must be 0 to \(maximumQuietZone) modules")
        }
    }

    /// A 1-bit grayscale PNG: `scale` pixels per module, `quietZone` light modules around the symbol.
    public func png(scale: Int = 8, quietZone: Int = 4) throws(OneTimeCodeError) -> [UInt8] {
        try Self.checkImageOptions(scale: scale, quietZone: quietZone)
        let modulesAcross = size + 2 * quietZone
        let pixels = modulesAcross * scale
        let rowBytes = (pixels + 7) / 8
        var raw: [UInt8] = []
        raw.reserveCapacity((rowBytes + 1) * pixels)
        for moduleRow in 0..<modulesAcross {
            // One scanline per module row, repeated `scale` times. In 1-bit grayscale, 0 is black.
            var line = [UInt8](repeating: 0xFF, count: rowBytes)
            for moduleColumn in 0..<modulesAcross
            where self[row: moduleRow - quietZone, column: moduleColumn - quietZone] {
                for x in (moduleColumn * scale)..<((moduleColumn + 1) * scale) {
                    line[x >> 3] &= ~(0x80 >> UInt8(x & 7))
                }
            }
            for _ in 0..<scale {
                raw.append(0)  // filter type None
                raw.append(contentsOf: line)
            }
        }
        return PNG.encode(width: pixels, height: pixels, bitDepth: 1, scanlines: raw, stride: rowBytes + 1)
    }

    /// An SVG drawing: a white background and one path of dark modules, one unit per module, `scale` user units
    /// to a pixel in the width and height attributes.
    public func svg(scale: Int = 8, quietZone: Int = 4) throws(OneTimeCodeError) -> String {
        try Self.checkImageOptions(scale: scale, quietZone: quietZone)
        let across = size + 2 * quietZone
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard self[row: row, column: column] else {
                    column += 1
                    continue
                }
                let start = column
                while column < size, self[row: row, column: column] { column += 1 }
                path += "M\(start + quietZone) \(row + quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(across * scale)" \
            height="\(across * scale)" viewBox="0 0 \(across) \(across)" shape-rendering="crispEdges">
            <rect width="\(across)" height="\(across)" fill="#ffffff"/>
            <path d="\(path)" fill="#000000"/>
            </svg>

            """
    }
}

/// A minimal PNG writer (ISO/IEC 15948): IHDR, one IDAT holding a zlib stream (RFC 1950) of one fixed-Huffman
/// DEFLATE block (see ``Deflate``), IEND.
enum PNG {
    static func encode(width: Int, height: Int, bitDepth: UInt8, scanlines: [UInt8], stride: Int) -> [UInt8] {
        var output: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        header += bigEndian(UInt32(width))
        header += bigEndian(UInt32(height))
        header += [bitDepth, 0, 0, 0, 0]  // grayscale, deflate, adaptive filtering, no interlace
        chunk("IHDR", header, into: &output)
        chunk("IDAT", zlib(Deflate.compress(scanlines, stride: stride), checksumOf: scanlines), into: &output)
        chunk("IEND", [], into: &output)
        return output
    }

    static func chunk(_ type: String, _ data: [UInt8], into output: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        output += bigEndian(UInt32(data.count))
        output += typeBytes
        output += data
        output += bigEndian(CRC32.checksum(typeBytes + data))
    }

    /// Wraps a DEFLATE stream: the zlib header, then the Adler-32 of the uncompressed data.
    static func zlib(_ deflated: [UInt8], checksumOf data: [UInt8]) -> [UInt8] {
        // CMF 0x78: deflate, 32 KiB window. FLG 0x01: fastest-compression level hint, no dictionary; 0x7801 % 31 == 0.
        [0x78, 0x01] + deflated + bigEndian(adler32(data))
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// CRC-32 as PNG and zlib's gzip use it (reflected polynomial 0xEDB88320).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    static func checksum(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }
}
