import Foundation
import WebAuthn

/// Strict JSON reading for the sync messages: every object's members are checked against the members its type
/// defines (an unknown member is `malformedMessage`: a server cannot slip in a "kdf" or "legacy" switch that an
/// older or sloppier client might honour), `format` must be 1 (`unsupportedFormat` otherwise), binary values are
/// unpadded base64url, and sizes are bounded before anything is decoded.
enum WireJSON {
    static let maximumMessageSize = 512 * 1024 * 1024
    static let format = 1

    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        init(_ s: String) { stringValue = s }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ json: [UInt8]) throws(KeychainError) -> T {
        guard json.count <= maximumMessageSize else {
            throw KeychainError(.malformedMessage, reason: "message longer than \(maximumMessageSize) bytes")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(json))
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.malformedMessage, reason: "\(T.self) is not the documented JSON shape")
        }
    }

    static func encode(_ object: [String: Any]) -> [UInt8] {
        // JSONSerialization with sorted keys: stable bytes for tests and logs.
        (try? Array(JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])))
            ?? []
    }
}

extension KeyedDecodingContainer where K == WireJSON.Key {
    /// Refuses members outside `allowed`.
    func only(_ allowed: Set<String>, in what: String) throws {
        for key in allKeys where !allowed.contains(key.stringValue) {
            throw KeychainError(.malformedMessage, reason: "\(what) has an unknown member")
        }
    }

    func format(in what: String) throws {
        let value = try decode(Int.self, forKey: .init("format"))
        guard value == WireJSON.format else {
            throw KeychainError(.unsupportedFormat, reason: "\(what) format \(value) is not \(WireJSON.format)")
        }
    }

    func bytes(_ key: String, count: ClosedRange<Int> = 0...Int.max) throws -> [UInt8] {
        let text = try decode(String.self, forKey: .init(key))
        guard text.utf8.count <= (count.upperBound == Int.max ? Int.max : (count.upperBound + 2) / 3 * 4) else {
            throw KeychainError(.malformedMessage, reason: "'\(key)' is too long")
        }
        guard let bytes = try? Base64URL.decode(text), count.contains(bytes.count) else {
            throw KeychainError(.malformedMessage, reason: "'\(key)' is not base64url of the right length")
        }
        return bytes
    }

    func optionalBytes(_ key: String, count: ClosedRange<Int> = 0...Int.max) throws -> [UInt8]? {
        guard contains(.init(key)), try !decodeNil(forKey: .init(key)) else { return nil }
        return try bytes(key, count: count)
    }

    func uint64(_ key: String) throws -> UInt64 { try decode(UInt64.self, forKey: .init(key)) }

    func uint32(_ key: String) throws -> UInt32 { try decode(UInt32.self, forKey: .init(key)) }

    func array<T: Decodable>(_ key: String, of: T.Type, maximum: Int) throws -> [T] {
        let values = try decode([T].self, forKey: .init(key))
        guard values.count <= maximum else {
            throw KeychainError(.malformedMessage, reason: "'\(key)' has more than \(maximum) entries")
        }
        return values
    }
}

func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
