import WebAuthn

/// The `largeBlob` extension (W3C WebAuthn Level 3 §10.1.5) as the keychain answers it: the client's checks of the
/// inputs and the storage, which is the passkey item itself (``Passkey/largeBlob``), so a blob syncs, shares and
/// merges with its passkey.
enum LargeBlobExtension {
    typealias Inputs = AuthenticationExtensionsClientInputsJSON.LargeBlobInputs
    typealias Outputs = AuthenticationExtensionsClientOutputsJSON.LargeBlobOutputs

    /// Registration, client step 1: `read` and `write` are for authentication only.
    static func checkCreation(_ inputs: Inputs?) throws(KeychainError) {
        guard let inputs else { return }
        if inputs.read != nil || inputs.write != nil {
            throw KeychainError(.extensionNotSupported, reason: "largeBlob read or write at registration")
        }
    }

    /// Authentication, client steps 1, 2 and 4: no `support`; not both `read` and `write`; a `write` names exactly
    /// one credential in `allowCredentials`.
    static func checkRequest(_ inputs: Inputs?, allowCredentials: [PublicKeyCredentialDescriptorJSON]?)
        throws(KeychainError)
    {
        guard let inputs else { return }
        if inputs.support != nil {
            throw KeychainError(.extensionNotSupported, reason: "largeBlob support at authentication")
        }
        if inputs.read != nil && inputs.write != nil {
            throw KeychainError(.extensionNotSupported, reason: "largeBlob read and write together")
        }
        if inputs.write != nil && (allowCredentials ?? []).count != 1 {
            throw KeychainError(
                .extensionNotSupported, reason: "largeBlob write needs exactly one credential in allowCredentials")
        }
    }

    /// The registration output: every keychain passkey can hold a blob.
    static func creationOutput(_ inputs: Inputs?) -> Outputs? {
        inputs == nil ? nil : Outputs(supported: true)
    }

    /// The authentication output, and the passkey with the blob written when `write` was given (nil when nothing
    /// changes). A blob over ``Passkey/largeBlobMaximum`` is not written (`written: false`).
    static func authenticate(_ inputs: Inputs?, passkey: Passkey) -> (Outputs?, Passkey?) {
        guard let inputs else { return (nil, nil) }
        if let write = inputs.write {
            guard write.bytes.count <= Passkey.largeBlobMaximum else { return (Outputs(written: false), nil) }
            var changed = passkey
            changed.largeBlob = write.bytes
            return (Outputs(written: true), changed)
        }
        if inputs.read == true { return (Outputs(blob: passkey.largeBlob), nil) }
        return (Outputs(), nil)
    }
}
