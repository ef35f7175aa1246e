extension PublicKeyCredentialRequestOptionsJSON {
    /// The options as JSON text, written without `JSONEncoder`: exactly the bytes `JSONEncoder` writes with
    /// `outputFormatting = [.sortedKeys, .withoutEscapingSlashes]` (members in sorted order, absent ones left out, no
    /// whitespace). Nil when the options carry extension inputs or any string that JSON would escape (a quote, a
    /// backslash, a control character): those are encoded with `JSONEncoder`. A sign-in's options are neither, and
    /// the generic encoder cost a large part of the options step (docs/server.md, "Benchmark"). `FastJSONTests`
    /// compares both writers.
    public func fastPathJSON() -> [UInt8]? {
        guard extensions == nil else { return nil }
        var out = JSONTextWriter()
        out.raw("{")
        var first = true
        if let allowCredentials {
            out.key("allowCredentials", first: &first)
            out.raw("[")
            for (index, descriptor) in allowCredentials.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw("{\"id\":")
                out.string(Base64URL.encode(descriptor.id.bytes))
                if let transports = descriptor.transports {
                    out.raw(",\"transports\":")
                    out.strings(transports.map(\.rawValue))
                }
                out.raw(",\"type\":")
                out.string(descriptor.type)
                out.raw("}")
            }
            out.raw("]")
        }
        out.key("challenge", first: &first)
        out.string(Base64URL.encode(challenge.bytes))
        if let hints {
            out.key("hints", first: &first)
            out.strings(hints.map(\.rawValue))
        }
        if let rpId {
            out.key("rpId", first: &first)
            out.string(rpId)
        }
        if let timeout {
            out.key("timeout", first: &first)
            out.raw(String(timeout))
        }
        if let userVerification {
            out.key("userVerification", first: &first)
            out.string(userVerification.rawValue)
        }
        out.raw("}")
        return out.failed ? nil : out.bytes
    }
}

/// JSON text for the fast paths (these options, and the server's sign-in answer): strings go out as they are, and
/// any string that would need an escape marks the writer failed (the caller then uses `JSONEncoder`, which knows
/// every escape). Members are written in the order the caller gives, which must be `JSONEncoder`'s sorted order.
public struct JSONTextWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// A string needed an escape: ``bytes`` are not to be used.
    public private(set) var failed = false

    public init() { bytes.reserveCapacity(512) }

    /// Text written as it is (punctuation, numbers, literals).
    public mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// A JSON string without escapes (non-ASCII characters go out as UTF-8, as `JSONEncoder` writes them).
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { failed = true }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func strings(_ texts: [String]) {
        raw("[")
        for (index, text) in texts.enumerated() {
            if index > 0 { raw(",") }
            string(text)
        }
        raw("]")
    }

    /// `"key":`, after a comma unless it is the object's first member.
    public mutating func key(_ name: String, first: inout Bool) {
        if !first { raw(",") }
        first = false
        string(name)
        raw(":")
    }
}
