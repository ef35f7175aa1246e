/// Compares two byte sequences in time that depends only on their lengths, never on where they differ.
///
/// Used for every comparison of a secret-derived value (one-time codes, recovery code hashes). The length is not
/// secret in any of those uses: callers refuse wrong lengths before they get here.
@inline(never)
func constantTimeEquals<A: Collection<UInt8>, B: Collection<UInt8>>(_ lhs: A, _ rhs: B) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (l, r) in zip(lhs, rhs) {
        difference |= l ^ r
    }
    return difference == 0
}
