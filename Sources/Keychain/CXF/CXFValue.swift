import Foundation

/// Lenient reading of a CXF document's JSON: CXF is extensible, so unknown members are ignored, but every value
/// the importer uses is type-checked and bounded, and a wrong type is a clear `invalidCXF` naming the member.
struct CXFObject {
    let members: [String: Any]
    let path: String

    init(_ value: Any?, path: String) throws(KeychainError) {
        guard let members = value as? [String: Any] else {
            throw KeychainError(.invalidCXF, reason: "\(path) is not a JSON object")
        }
        self.members = members
        self.path = path
    }

    func has(_ key: String) -> Bool { members[key] != nil && !(members[key] is NSNull) }

    /// A string member; `EditableField` objects (`{"fieldType": …, "value": "…"}`) and bare strings both read as
    /// their string value.
    func string(_ keys: String..., maximum: Int = 64 * 1024) throws(KeychainError) -> String? {
        for key in keys {
            guard let value = members[key], !(value is NSNull) else { continue }
            let text: String
            if let s = value as? String {
                text = s
            } else if let field = value as? [String: Any], let s = field["value"] as? String {
                text = s
            } else {
                throw KeychainError(.invalidCXF, reason: "\(path).\(key) is not a string or an EditableField of one")
            }
            guard text.utf8.count <= maximum else {
                throw KeychainError(.invalidCXF, reason: "\(path).\(key) is longer than \(maximum) bytes")
            }
            return text
        }
        return nil
    }

    func requiredString(_ keys: String..., maximum: Int = 64 * 1024) throws(KeychainError) -> String {
        for key in keys {
            if let s = try string(key, maximum: maximum) { return s }
        }
        throw KeychainError(.invalidCXF, reason: "\(path) lacks \(keys.joined(separator: "/"))")
    }

    func integer(_ key: String) throws(KeychainError) -> Int64? {
        guard let value = members[key], !(value is NSNull) else { return nil }
        if let field = value as? [String: Any], let inner = field["value"] {
            return try CXFObject.integer(inner, path: "\(path).\(key)")
        }
        return try CXFObject.integer(value, path: "\(path).\(key)")
    }

    static func integer(_ value: Any, path: String) throws(KeychainError) -> Int64 {
        if !(value is String), let d = value as? Double, d.rounded() == d, abs(d) < 9_007_199_254_740_992 {
            return Int64(d)
        }
        if let s = value as? String, let n = Int64(s) { return n }
        throw KeychainError(.invalidCXF, reason: "\(path) is not an integer")
    }

    func array(_ key: String, maximum: Int = 1_000_000) throws(KeychainError) -> [Any] {
        guard let value = members[key], !(value is NSNull) else { return [] }
        guard let array = value as? [Any], array.count <= maximum else {
            throw KeychainError(.invalidCXF, reason: "\(path).\(key) is not an array of at most \(maximum) entries")
        }
        return array
    }

    func object(_ key: String) throws(KeychainError) -> CXFObject? {
        guard has(key) else { return nil }
        return try CXFObject(members[key], path: "\(path).\(key)")
    }
}

/// Binary values in CXF are base64url; padding is tolerated (some exporters add it) but the standard alphabet is
/// not, so a credential ID always decodes to the same bytes.
enum CXFBase64 {
    static func decode(_ text: String, field: String) throws(KeychainError) -> [UInt8] {
        var s = text
        while s.hasSuffix("=") { s.removeLast() }
        guard !s.isEmpty,
            s.utf8.allSatisfy({ b in
                (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b) || (0x30...0x39).contains(b) || b == 0x2d
                    || b == 0x5f
            })
        else {
            throw KeychainError(.invalidCXF, reason: "\(field) is not base64url")
        }
        var standard = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard standard.utf8.count % 4 != 1 else {
            throw KeychainError(.invalidCXF, reason: "\(field) is not base64url")
        }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard) else {
            throw KeychainError(.invalidCXF, reason: "\(field) is not base64url")
        }
        return Array(data)
    }
}
