import Crypto
import WebAuthn

/// The `prf` extension (W3C WebAuthn Level 3 §10.1.4) as the keychain answers it: the client's steps (checking the
/// inputs, picking `evalByCredential` or `eval`, hashing the salts) and the authenticator's hmac-secret evaluation
/// (CTAP2.1 §12.5) over the passkey's own secret, all in one place since the keychain is both.
///
/// The output for a salt input `x` is `HMAC-SHA-256(withUV, SHA-256("WebAuthn PRF" || 0x00 || x))`, where `withUV`
/// is the passkey's user-verified HMAC secret (§10.1.4 has `prf` use only that one). The secret is inside the
/// sealed passkey item, so every device the passkey syncs to gives the same outputs, and another passkey (another
/// secret) never does.
enum PRFExtension {
    typealias Values = AuthenticationExtensionsClientInputsJSON.PRFValues
    typealias Inputs = AuthenticationExtensionsClientInputsJSON.PRFInputs
    typealias Outputs = AuthenticationExtensionsClientOutputsJSON.PRFOutputs

    /// §10.1.4: the salt hmac-secret is given for a PRF input.
    static func salt(_ input: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array("WebAuthn PRF".utf8) + [0x00] + input))
    }

    /// The PRF's values for `values` under `secret` (the passkey's user-verified HMAC secret).
    static func evaluate(secret: [UInt8], _ values: Values) -> Values {
        let key = SymmetricKey(data: secret)
        func one(_ input: [UInt8]) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: salt(input), using: key))
        }
        return Values(first: one(values.first.bytes), second: values.second.map { one($0.bytes) })
    }

    /// Registration, client step 1: `evalByCredential` is refused (no credential exists yet to key it by).
    static func checkCreation(_ inputs: Inputs?) throws(KeychainError) {
        if inputs?.evalByCredential != nil {
            throw KeychainError(.extensionNotSupported, reason: "prf.evalByCredential is not allowed at registration")
        }
    }

    /// Authentication, client steps 1 and 2: `evalByCredential` needs `allowCredentials`, and each of its keys must
    /// be the base64url ID of a credential listed there.
    static func checkRequest(_ inputs: Inputs?, allowCredentials: [PublicKeyCredentialDescriptorJSON]?)
        throws(KeychainError)
    {
        guard let byCredential = inputs?.evalByCredential, !byCredential.isEmpty else { return }
        let allowed = (allowCredentials ?? []).map(\.id.bytes)
        guard !allowed.isEmpty else {
            throw KeychainError(
                .extensionNotSupported, reason: "prf.evalByCredential needs a non-empty allowCredentials")
        }
        for key in byCredential.keys {
            guard !key.isEmpty, let id = try? Base64URL.decode(key), allowed.contains(id) else {
                throw KeychainError(
                    .invalidExtensionInput, reason: "a prf.evalByCredential key is not a credential in allowCredentials"
                )
            }
        }
    }

    /// Authentication, client step 4: the inputs for the credential that answers, `evalByCredential`'s entry for
    /// its ID or else `eval`; nil when there are none.
    static func inputs(for credentialId: [UInt8], in inputs: Inputs?) -> Values? {
        guard let inputs else { return nil }
        if let byCredential = inputs.evalByCredential {
            for (key, values) in byCredential where (try? Base64URL.decode(key)) == credentialId { return values }
        }
        return inputs.eval
    }
}
