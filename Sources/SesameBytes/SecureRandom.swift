/// Random bytes from the system's CSPRNG (`SystemRandomNumberGenerator`: `getrandom(2)` on Linux), for the package's
/// challenges, user handles, tokens, salts and secrets.
package enum SecureRandom {
    /// `count` bytes, eight from each word the generator gives. Asking it for one `UInt8` at a time (what
    /// `UInt8.random(in:using:)` per byte does) is one `getrandom` system call per byte: some sixty in one passkey
    /// sign-in, 4 % of its CPU in a profile (docs/server.md, "Benchmark").
    package static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "a negative number of random bytes")
        var generator = SystemRandomNumberGenerator()
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var offset = 0
            while offset < count {
                let word = generator.next()
                let take = min(8, count - offset)
                for index in 0..<take {
                    buffer[offset + index] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index)))
                }
                offset += take
            }
            initialized = count
        }
    }
}
