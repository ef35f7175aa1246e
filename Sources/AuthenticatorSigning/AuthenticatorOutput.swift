import CBOR
import Crypto
import SesameBytes

/// The bytes an authenticator and its client write for a ceremony (W3C WebAuthn Level 3), apart from the
/// signature (``CredentialKey``): authenticator data, attested credential data, the attestation object and the
/// client data JSON. Shared by the keychain's authenticator and the virtual one, which differ in their options
/// parsing and policies, not in these bytes.
package enum AuthenticatorOutput {
    /// The flags byte (§6.1): UP 0x01, UV 0x04, BE 0x08, BS 0x10, AT 0x40 (ED, 0x80, is never set: no extension
    /// outputs in authenticator data).
    package static func flags(
        userPresent: Bool, userVerified: Bool, backupEligible: Bool, backedUp: Bool, attestedCredentialData: Bool
    ) -> UInt8 {
        (userPresent ? 0x01 : 0) | (userVerified ? 0x04 : 0) | (backupEligible ? 0x08 : 0) | (backedUp ? 0x10 : 0)
            | (attestedCredentialData ? 0x40 : 0)
    }

    /// `rpIdHash (32) || flags (1) || signCount (4, big-endian)` (§6.1), the start of every authenticator data.
    package static func authenticatorDataPrefix(rpId: String, flags: UInt8, signCount: UInt32) -> [UInt8] {
        var out = Array(SHA256.hash(data: Array(rpId.utf8)))
        out.append(flags)
        out += [
            UInt8(signCount >> 24), UInt8((signCount >> 16) & 0xff), UInt8((signCount >> 8) & 0xff),
            UInt8(signCount & 0xff),
        ]
        return out
    }

    /// Attested credential data (§6.5.1), which follows the prefix when the AT flag is set:
    /// ```
    /// aaguid (16) ‖ credentialIdLength (2, big-endian) ‖ credentialId ‖ credentialPublicKey (COSE_Key)
    /// ```
    package static func attestedCredentialData(aaguid: [UInt8], credentialId: [UInt8], publicKey: CredentialKey)
        -> [UInt8]
    {
        aaguid + [UInt8(credentialId.count >> 8), UInt8(credentialId.count & 0xff)] + credentialId + publicKey.coseKey
    }

    /// The attestation object (§6.5.4), in CTAP2 canonical CBOR:
    /// ```cddl
    /// attObj = { "fmt": text, "attStmt": { * tstr => any }, "authData": bytes }
    /// ```
    /// "none" attestation (§8.7) is `format: "none"` with an empty map as the statement.
    package static func attestationObject(format: String, statement: CBOR = .map([]), authenticatorData: [UInt8])
        -> [UInt8]
    {
        CBOREncoder.encode(
            .map([
                CBORMapEntry("fmt", .textString(format)),
                CBORMapEntry("attStmt", statement),
                CBORMapEntry("authData", .byteString(authenticatorData)),
            ]))
    }

    /// Client data JSON in the member order §5.8.1.1 prescribes: type, challenge (already base64url), origin,
    /// crossOrigin, then topOrigin when cross-origin; strings written as CCDToString writes them.
    package static func clientDataJSON(
        type: String, challenge: String, origin: String, crossOrigin: Bool = false, topOrigin: String? = nil
    ) -> [UInt8] {
        var s = "{\"type\":" + ccdString(type)
        s += ",\"challenge\":" + ccdString(challenge)
        s += ",\"origin\":" + ccdString(origin)
        s += ",\"crossOrigin\":" + (crossOrigin ? "true" : "false")
        if crossOrigin, let topOrigin {
            s += ",\"topOrigin\":" + ccdString(topOrigin)
        }
        return Array((s + "}").utf8)
    }

    /// A JSON string literal as §5.8.1.1 (CCDToString) writes it: `"` and `\` escaped, code points below U+0020 as
    /// `\u00xx`, everything else as UTF-8.
    package static func ccdString(_ s: String) -> String {
        JSONString.quoted(s, controls: .unicode)
    }
}
