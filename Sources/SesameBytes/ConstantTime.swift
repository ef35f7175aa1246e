/// Byte comparison whose running time depends only on the lengths of its inputs, never on where they differ.
///
/// The one implementation for the package: challenges, user handles and attestation nonces (`WebAuthn`), one-time
/// codes and recovery code hashes (`OneTimeCode`), key fingerprints and recovery key checksums (`Keychain`), and
/// the server's tokens. Lengths are not secret in any of those uses (callers know the expected length, and a value
/// of the wrong length is refused at once), so unequal lengths return early.
package enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Every byte pair is read and folded into one difference, with no
    /// early exit.
    ///
    /// Inlinable so that each caller's collection types are known where it is compiled: called across modules as an
    /// unspecialised generic, iterating two `some Collection` values boxed each iterator step on the heap (277 heap
    /// allocations in one passkey sign-in, docs/performance.md). The comparison itself is `bytesEqual`, which is not
    /// inlined, so the optimiser never sees the data and cannot turn it into a loop that stops at a difference.
    @inlinable
    package static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        let contiguous = a.withContiguousStorageIfAvailable { a in
            b.withContiguousStorageIfAvailable { b in bytesEqual(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) }
        }
        if let contiguous, let result = contiguous { return result }
        return Array(a).withUnsafeBytes { a in Array(b).withUnsafeBytes { b in bytesEqual(a, b) } }
    }

    /// The comparison of two buffers of equal length: every byte pair folded into one difference.
    @inline(never)
    @usableFromInline
    package static func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
