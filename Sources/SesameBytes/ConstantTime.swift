/// Byte comparison whose running time depends only on the lengths of its inputs, never on where they differ.
///
/// The one implementation for the package: challenges, user handles and attestation nonces (`WebAuthn`), one-time
/// codes and recovery code hashes (`OneTimeCode`), key fingerprints and recovery key checksums (`Keychain`), and
/// the server's tokens. Lengths are not secret in any of those uses (callers know the expected length, and a value
/// of the wrong length is refused at once), so unequal lengths return early.
package enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Every byte pair is read and folded into one difference, with no
    /// early exit; `@inline(never)` keeps the optimiser from specialising it into a loop that stops at the first
    /// difference at a call site that knows the data.
    @inline(never)
    package static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
