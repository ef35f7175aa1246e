/// Native messaging framing, as Chromium and Firefox speak it to a host on standard input and output:
///
///     frame = length: UInt32 in the host's native byte order || JSON text (UTF-8), `length` bytes
///
/// A host may send at most 1 MiB per message (the browsers' limit for a host's messages). The browser could send
/// more, but the extension's requests are a few kilobytes, so this host reads at most 1 MiB as well and refuses a
/// longer frame with `nativeMessageTooLarge` before reading its body.
public enum NativeMessageFrame {
    public static let maximumLength = 1 << 20
    public static let headerLength = 4

    /// The length a 4-byte header announces; `nativeMessageTooLarge` above ``maximumLength``.
    public static func length(header: [UInt8]) throws(KeychainError) -> Int {
        guard header.count == headerLength else {
            throw KeychainError(.malformedNativeMessage, reason: "a frame header is 4 bytes, got \(header.count)")
        }
        var value: UInt32 = 0
        withUnsafeMutableBytes(of: &value) { raw in
            for i in 0..<headerLength { raw[i] = header[i] }
        }
        guard value <= UInt32(maximumLength) else {
            throw KeychainError(
                .nativeMessageTooLarge, reason: "a message of \(value) bytes is over the \(maximumLength) byte limit")
        }
        return Int(value)
    }

    /// One frame around `json`; `nativeMessageTooLarge` when the body is over ``maximumLength``.
    public static func encode(_ json: [UInt8]) throws(KeychainError) -> [UInt8] {
        guard json.count <= maximumLength else {
            throw KeychainError(
                .nativeMessageTooLarge, reason: "a reply of \(json.count) bytes is over the \(maximumLength) byte limit"
            )
        }
        var length = UInt32(json.count)
        return withUnsafeBytes(of: &length) { Array($0) } + json
    }

    /// Every complete frame's body in `bytes`, in order; a frame cut short is `malformedNativeMessage`.
    public static func split(_ bytes: [UInt8]) throws(KeychainError) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= headerLength else {
                throw KeychainError(.malformedNativeMessage, reason: "the input ends inside a frame header")
            }
            let length = try self.length(header: Array(bytes[offset..<offset + headerLength]))
            offset += headerLength
            guard bytes.count - offset >= length else {
                throw KeychainError(.malformedNativeMessage, reason: "the input ends inside a \(length) byte message")
            }
            frames.append(Array(bytes[offset..<offset + length]))
            offset += length
        }
        return frames
    }
}
