import Foundation

/// Reads the text of a QR code in an image with `zbarimg` (Debian package zbar-tools), for
/// `sesame keychain add-code --qr` and the toolbar window's `addCodeQR`: one code path, the same errors.
///
/// `qrDecoderUnavailable` when zbarimg is not on `PATH` or cannot start; `qrUnreadable` when the image holds no QR
/// code or more than one, or (for bytes) is not a PNG or JPEG image or is over ``maximumImageBytes``.
public enum QRReader {
    /// The largest image the window may send: its base64 text must fit in one native message (1 MiB), with room
    /// for the other members. A QR code photographed or screenshotted is far smaller.
    public static let maximumImageBytes = 512 * 1024

    /// The text of the one QR code in the image file at `path` (any format zbarimg reads).
    public static func read(path: String) throws(KeychainError) -> String {
        let zbarimg = try decoder()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: zbarimg)
        process.arguments = ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw KeychainError(.qrDecoderUnavailable, reason: "zbarimg could not be started")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        guard process.terminationStatus == 0, lines.count == 1 else {
            throw KeychainError(
                .qrUnreadable,
                reason: lines.count > 1 ? "the image holds more than one QR code" : "no QR code found in the image")
        }
        return lines[0]
    }

    /// The text of the one QR code in a PNG or JPEG image of at most ``maximumImageBytes``. Other formats are
    /// refused before any decoder sees them. The image (it holds a secret) is written to a file only this user can
    /// read, for zbarimg, and removed at once.
    public static func read(image: [UInt8]) throws(KeychainError) -> String {
        guard image.count <= maximumImageBytes else {
            throw KeychainError(.qrUnreadable, reason: "the image is over \(maximumImageBytes / 1024) KiB")
        }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF]
        guard image.starts(with: png) || image.starts(with: jpeg) else {
            throw KeychainError(.qrUnreadable, reason: "the image is not a PNG or JPEG image")
        }
        _ = try decoder()
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("sesame-qr-\(UUID().uuidString).\(image.starts(with: png) ? "png" : "jpg")").path
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(image), attributes: [.posixPermissions: 0o600])
        else {
            throw KeychainError(.qrUnreadable, reason: "the image could not be handed to zbarimg")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try read(path: path)
    }

    /// zbarimg's path on `PATH`.
    static func decoder() throws(KeychainError) -> String {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map {
            String($0) + "/zbarimg"
        }
        guard let zbarimg = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw KeychainError(
                .qrDecoderUnavailable, reason: "reading QR images needs zbarimg (Debian package zbar-tools)")
        }
        return zbarimg
    }
}
