import Crypto
import Foundation
import SesameBytes

/// A 256-bit key from the sealing key file. Its id is the first 8 bytes of HMAC-SHA256(key, "sesame sealing key
/// id"): stored in front of every value sealed under the key, printed by `sesame seal-keys status` and logged at
/// start. The id is a one-way function of the key, so it names the key without revealing it.
public struct SealingKey: Sendable {
    public static let length = 32
    package static let idLength = 8

    public let id: [UInt8]
    package let material: SymmetricKey

    package init(material: [UInt8]) {
        self.material = SymmetricKey(data: material)
        let mac = HMAC<SHA256>.authenticationCode(for: Array("sesame sealing key id".utf8), using: self.material)
        id = Array(Array(mac).prefix(Self.idLength))
    }

    public var hexID: String { Hex.encode(id) }

    /// A new random key as one line of a key file (standard base64, as `openssl rand -base64 32` prints).
    public static func generateLine() -> String {
        Data(Secrets.random(length)).base64EncodedString()
    }
}

/// The sealing key file (`sealingKeyFile`): one entry per line, blank lines and `#` comments ignored. An entry is
/// a 256-bit key in base64 (standard or URL alphabet, padding optional) or the word `database` (the key derived
/// from the server secret). The **first** entry seals new values; every entry opens values sealed under it. So a
/// rotation is: add the new key as a later line on every node, then move it first, then `sesame seal-keys rotate`,
/// then drop the old line (docs/server.md, "Encryption at rest").
public struct SealingKeyFile: Sendable {
    public enum Entry: Sendable {
        case database
        case key(SealingKey)
    }

    public let entries: [Entry]
    /// Larger files are refused before reading (a key file is a few lines).
    package static let maximumSize = 64 * 1024

    public static func load(path: String) throws(SealingKeyError) -> SealingKeyFile {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            data = try handle.read(upToCount: maximumSize + 1) ?? Data()
        } catch {
            throw .unreadable(path: path)
        }
        guard data.count <= maximumSize else { throw .tooLarge(path: path) }
        return try parse(data, path: path)
    }

    public static func parse(_ data: Data, path: String) throws(SealingKeyError) -> SealingKeyFile {
        guard let text = String(data: data, encoding: .utf8) else { throw .notText(path: path) }
        var entries: [Entry] = []
        var seenDatabase = false
        var seenIDs = Set<[UInt8]>()
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line == "database" {
                guard !seenDatabase else { throw .duplicate(path: path, line: index + 1) }
                seenDatabase = true
                entries.append(.database)
                continue
            }
            guard let bytes = decodeBase64(line) else { throw .malformed(path: path, line: index + 1) }
            guard bytes.count == SealingKey.length else {
                throw .wrongLength(path: path, line: index + 1, bytes: bytes.count)
            }
            let key = SealingKey(material: bytes)
            guard seenIDs.insert(key.id).inserted else { throw .duplicate(path: path, line: index + 1) }
            entries.append(.key(key))
        }
        guard !entries.isEmpty else { throw .empty(path: path) }
        return SealingKeyFile(entries: entries)
    }

    /// Standard or URL-alphabet base64, padded or not; nil for anything else.
    package static func decodeBase64(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard standard.count <= 4 * 1024 else { return nil }
        if standard.count % 4 != 0 {
            guard !standard.contains("=") else { return nil }
            standard += String(repeating: "=", count: 4 - standard.count % 4)
        }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }

    /// The key ids, in file order (`database` for the database entry), for logs and `seal-keys status`.
    public var descriptions: [String] {
        entries.map {
            switch $0 {
            case .database: return "database"
            case .key(let key): return key.hexID
            }
        }
    }
}

/// Why the sealing key file cannot be used. The server's error shape (`ServerError`); messages name the file and
/// line, never key bytes.
public typealias SealingKeyError = ServerError<SealingKeyErrorCode>

/// The codes of `SealingKeyError`.
public struct SealingKeyErrorCode: ServerErrorCode {
    public let name: String
    private init(_ name: String) { self.name = name }
    public var description: String { name }

    public static let unreadable = SealingKeyErrorCode("unreadable")
    public static let tooLarge = SealingKeyErrorCode("tooLarge")
    public static let notText = SealingKeyErrorCode("notText")
    public static let empty = SealingKeyErrorCode("empty")
    public static let malformed = SealingKeyErrorCode("malformed")
    public static let wrongLength = SealingKeyErrorCode("wrongLength")
    public static let duplicate = SealingKeyErrorCode("duplicate")
}

extension ServerError where Code == SealingKeyErrorCode {
    private static func file(_ path: String, _ code: SealingKeyErrorCode, _ what: String, file: String, line: Int)
        -> SealingKeyError
    {
        SealingKeyError(code: code, message: "sealing key file \(path)\(what)", file: file, line: line)
    }

    public static func unreadable(path: String, file: String = #fileID, line: Int = #line) -> SealingKeyError {
        Self.file(path, .unreadable, ": cannot be read", file: file, line: line)
    }
    public static func tooLarge(path: String, file: String = #fileID, line: Int = #line) -> SealingKeyError {
        Self.file(path, .tooLarge, ": larger than \(SealingKeyFile.maximumSize) bytes", file: file, line: line)
    }
    public static func notText(path: String, file: String = #fileID, line: Int = #line) -> SealingKeyError {
        Self.file(
            path, .notText, ": not UTF-8 text (expected base64 keys, one per line)", file: file, line: line)
    }
    public static func empty(path: String, file: String = #fileID, line: Int = #line) -> SealingKeyError {
        Self.file(path, .empty, ": holds no key", file: file, line: line)
    }
    public static func malformed(path: String, line number: Int, file: String = #fileID, line: Int = #line)
        -> SealingKeyError
    {
        Self.file(
            path, .malformed, ", line \(number): not a base64 key or the word database", file: file, line: line)
    }
    public static func wrongLength(
        path: String, line number: Int, bytes: Int, file: String = #fileID, line: Int = #line
    ) -> SealingKeyError {
        Self.file(
            path, .wrongLength,
            ", line \(number): a \(bytes)-byte key; sealing keys are \(SealingKey.length) bytes (256 bits)",
            file: file, line: line)
    }
    public static func duplicate(path: String, line number: Int, file: String = #fileID, line: Int = #line)
        -> SealingKeyError
    {
        Self.file(path, .duplicate, ", line \(number): repeats an earlier entry", file: file, line: line)
    }
}
