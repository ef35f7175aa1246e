import Crypto
import Foundation
import SesameBytes

/// Sign-in challenges that carry their own state, so that the options step writes nothing (issue 11: a sign-in
/// should cost little more than its signature check). Every node derives the same key from the server secret in
/// the database, so a ceremony begun on one node finishes on any other.
///
/// What the server needs back at verify time travels inside the WebAuthn challenge itself, authenticated (not
/// encrypted: none of it is secret from the client that asked), 58 bytes:
///
/// ```
/// offset  size  field
///      0     1  version, 0x53
///      1     1  flags: bit 0 = the options named a username (username-first)
///      2     8  expiry, milliseconds since 1970, big-endian
///     10    16  nonce from the system CSPRNG (the challenge's randomness, W3C WebAuthn L3 §13.4.3)
///     26    16  account tag: HMAC-SHA256(K, "sesame sign-in account 1" ‖ bytes 0..<26 ‖ account id), first 16 bytes
///     42    16  issue tag:   HMAC-SHA256(K, "sesame sign-in challenge 1" ‖ binding ‖ bytes 0..<42), first 16 bytes
/// ```
///
/// The issue tag covers every byte before it, so no byte of an issued challenge can be changed (a variant would be
/// a fresh challenge to spend: single use needs one valid encoding per issue).
///
/// K = HMAC-SHA256(server secret, "sesame sealed sign-in challenges"); the binding is the SHA-256 of the client's
/// ceremony token, so a challenge opens only for the client it was given to. The account id in the account tag is
/// the named account's (empty for discoverable sign-in and for a name without an account): the client does not
/// learn it, and at verify time the tag is checked against the owner of the credential the assertion used.
///
/// Single use is not in the challenge: the verify step spends it in `used_challenges` (`Store.spendChallenge`, or
/// in the sign-in statement itself), which every node shares, until it expires.
package struct SealedSignInChallenge: Sendable {
    package static let length = 58
    private static let version: UInt8 = 0x53
    private static let issueLabel = Array("sesame sign-in challenge 1".utf8)
    private static let accountLabel = Array("sesame sign-in account 1".utf8)

    private let key: SymmetricKey

    package init(serverSecret: [UInt8]) {
        key = SymmetricKey(data: Secrets.hmac(key: serverSecret, Array("sesame sealed sign-in challenges".utf8)))
    }

    /// A challenge bound to `binding`, naming `accountID` (nil: none) and whether the options named a username.
    package func make(binding: [UInt8], accountID: String?, usernameFirst: Bool, expires: Date) -> [UInt8] {
        var bytes: [UInt8] = [Self.version, usernameFirst ? 1 : 0]
        let milliseconds = UInt64(max(0, expires.milliseconds))
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: milliseconds >> shift))
        }
        bytes += Secrets.random(16)
        bytes += accountTag(bytes, accountID: accountID)
        bytes += issueTag(bytes, binding: binding)
        return bytes
    }

    /// What a challenge this server sealed for `binding` says; nil when it is not one (another shape, another
    /// binding, another server's key, or altered).
    package func open(_ challenge: [UInt8], binding: [UInt8]) -> Opened? {
        guard challenge.count == Self.length, challenge[0] == Self.version, challenge[1] & ~1 == 0,
            ConstantTime.equal(Array(challenge[42..<58]), issueTag(Array(challenge[0..<42]), binding: binding))
        else { return nil }
        let milliseconds = challenge[2..<10].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard let signed = Int64(exactly: milliseconds) else { return nil }
        return Opened(
            challenge: challenge, usernameFirst: challenge[1] & 1 == 1, expires: Date(milliseconds: signed))
    }

    /// Whether the challenge named the account `accountID` (nil: none) in its options, in constant time.
    package func names(_ opened: Opened, accountID: String?) -> Bool {
        ConstantTime.equal(
            Array(opened.challenge[26..<42]), accountTag(Array(opened.challenge[0..<26]), accountID: accountID))
    }

    package struct Opened: Sendable {
        package let challenge: [UInt8]
        package let usernameFirst: Bool
        package let expires: Date
    }

    private func issueTag(_ head: [UInt8], binding: [UInt8]) -> [UInt8] {
        Array(Secrets.hmac(key: key, Self.issueLabel + binding + head).prefix(16))
    }

    private func accountTag(_ head: [UInt8], accountID: String?) -> [UInt8] {
        Array(Secrets.hmac(key: key, Self.accountLabel + head + Array((accountID ?? "").utf8)).prefix(16))
    }
}
