import CBOR

/// The attestation object of a "none" attestation (W3C WebAuthn Level 3 §6.5.4, §8.7):
/// ```cddl
/// attObj = { "fmt": "none", "attStmt": {}, "authData": bytes }
/// ```
enum NoneAttestation {
    static func noneAttestation(authData: [UInt8]) -> [UInt8] {
        CBOREncoder.encode(
            .map([
                CBORMapEntry("fmt", .textString("none")),
                CBORMapEntry("attStmt", .map([])),
                CBORMapEntry("authData", .byteString(authData)),
            ]))
    }
}
