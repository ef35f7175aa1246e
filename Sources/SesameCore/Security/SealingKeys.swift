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

/// Why the sealing key file cannot be used. Messages name the file and line, never key bytes.
public enum SealingKeyError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String)
    case tooLarge(path: String)
    case notText(path: String)
    case empty(path: String)
    case malformed(path: String, line: Int)
    case wrongLength(path: String, line: Int, bytes: Int)
    case duplicate(path: String, line: Int)

    public var description: String {
        switch self {
        case .unreadable(let path): return "sealing key file \(path): cannot be read"
        case .tooLarge(let path): return "sealing key file \(path): larger than \(SealingKeyFile.maximumSize) bytes"
        case .notText(let path): return "sealing key file \(path): not UTF-8 text (expected base64 keys, one per line)"
        case .empty(let path): return "sealing key file \(path): holds no key"
        case .malformed(let path, let line):
            return "sealing key file \(path), line \(line): not a base64 key or the word database"
        case .wrongLength(let path, let line, let bytes):
            return
                "sealing key file \(path), line \(line): a \(bytes)-byte key; sealing keys are \(SealingKey.length) bytes (256 bits)"
        case .duplicate(let path, let line): return "sealing key file \(path), line \(line): repeats an earlier entry"
        }
    }
}
