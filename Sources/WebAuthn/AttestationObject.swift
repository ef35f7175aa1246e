import CBOR

/// The attestation object a registration returns (W3C WebAuthn Level 3 §6.5.4).
///
/// ```
/// attObj = { authData: bytes, fmt: text, attStmt: { * tstr => any } }   ; all three required
///                                          ; attStmt: [2* { fmt, attStmt }] when fmt is "compound" (§8.9)
/// ```
/// Its own CBOR need not be in canonical key order (browsers and authenticators differ), but duplicate keys,
/// indefinite lengths, non-shortest integers and trailing bytes are refused.
public struct AttestationObject: Sendable {
    public let format: String
    /// The attestation statement (a map; an array for `compound`), interpreted by the format's verifier.
    public let statement: CBOR
    public let authenticatorData: AuthenticatorData

    public init(bytes: some Collection<UInt8>, options: COSEKeyOptions = .init()) throws(WebAuthnError) {
        let item: CBOR
        do {
            item = try CBORDecoder(options: .lenientMapOrder).decode(bytes)
        } catch {
            throw WebAuthnError(.invalidCBOR, detail: "attestation object: \(error.code)")
        }
        guard case .map(let entries) = item else {
            throw WebAuthnError(.invalidCBOR, detail: "attestation object is not a map")
        }
        guard let fmt = item[text: "fmt"]?.string else {
            throw WebAuthnError(.invalidCBOR, detail: "attestation object has no text fmt")
        }
        // attStmt is a map, except for `compound` (§8.9), whose attStmt is an array of statements.
        guard let statement = item[text: "attStmt"],
            statement.mapEntries != nil || (fmt == "compound" && statement.array != nil)
        else {
            throw WebAuthnError(.invalidCBOR, detail: "attestation object has no attStmt map")
        }
        guard let authData = item[text: "authData"]?.bytes else {
            throw WebAuthnError(.invalidCBOR, detail: "attestation object has no authData bytes")
        }
        let known: Set<CBOR> = ["fmt", "attStmt", "authData"]
        if entries.contains(where: { !known.contains($0.key) }) {
            throw WebAuthnError(.invalidCBOR, detail: "attestation object has an unknown member")
        }
        self.format = fmt
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(bytes: authData, options: options)
    }
}
