/// Random bytes from the system CSPRNG (`getrandom(2)` on Linux, `arc4random_buf` on Apple platforms, through
/// the standard library's `SystemRandomNumberGenerator`, which never falls back to a weaker source).
enum SecureRandom {
    static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            var word = generator.next()
            withUnsafeBytes(of: &word) { out.append(contentsOf: $0) }
        }
        return Array(out.prefix(count))
    }
}
