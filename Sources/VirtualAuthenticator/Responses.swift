import Foundation
import WebAuthn

/// What `navigator.credentials.create()` resolves with, serialised by `PublicKeyCredential.toJSON()` as
/// W3C WebAuthn Level 3 §5.1 `RegistrationResponseJSON`:
///
/// ```webidl
/// dictionary RegistrationResponseJSON {
///     required DOMString id;                      // base64url of rawId
///     required Base64URLString rawId;
///     required AuthenticatorAttestationResponseJSON response;
///         // { clientDataJSON, authenticatorData, transports, publicKey?, publicKeyAlgorithm, attestationObject }
///     DOMString authenticatorAttachment;
///     required AuthenticationExtensionsClientOutputsJSON clientExtensionResults;
///     required DOMString type;                    // "public-key"
/// };
/// ```
public struct RegistrationResponse: Sendable, Hashable {
    /// The credential ID as written to the JSON `id`/`rawId` (normally the one in authenticator data).
    public var credentialId: [UInt8]
    public var clientDataJSON: [UInt8]
    public var attestationObject: [UInt8]
    public var authenticatorData: [UInt8]
    public var transports: [String]
    public var publicKeyAlgorithm: Int
    /// SubjectPublicKeyInfo DER of the credential key.
    public var publicKey: [UInt8]?
    public var authenticatorAttachment: String?
    /// `clientExtensionResults.credProps.rk`, present when the options asked for `credProps`.
    public var credPropsResidentKey: Bool?

    /// The response as `RegistrationResponseJSON` (UTF-8, keys sorted).
    public var json: [UInt8] {
        var response: [String: JSONValue] = [
            "clientDataJSON": .string(ClientEncoding.base64url(clientDataJSON)),
            "attestationObject": .string(ClientEncoding.base64url(attestationObject)),
            "authenticatorData": .string(ClientEncoding.base64url(authenticatorData)),
            "transports": .array(transports.map { .string($0) }),
            "publicKeyAlgorithm": .int(publicKeyAlgorithm),
        ]
        if let publicKey { response["publicKey"] = .string(ClientEncoding.base64url(publicKey)) }
        var extensions: [String: JSONValue] = [:]
        if let rk = credPropsResidentKey { extensions["credProps"] = .object(["rk": .bool(rk)]) }
        var top: [String: JSONValue] = [
            "id": .string(ClientEncoding.base64url(credentialId)),
            "rawId": .string(ClientEncoding.base64url(credentialId)),
            "type": .string("public-key"),
            "response": .object(response),
            "clientExtensionResults": .object(extensions),
        ]
        if let authenticatorAttachment { top["authenticatorAttachment"] = .string(authenticatorAttachment) }
        return JSONValue.object(top).encoded()
    }
}

/// What `navigator.credentials.get()` resolves with, as W3C WebAuthn Level 3 §5.1 `AuthenticationResponseJSON`:
///
/// ```webidl
/// dictionary AuthenticationResponseJSON {
///     required DOMString id;
///     required Base64URLString rawId;
///     required AuthenticatorAssertionResponseJSON response;
///         // { clientDataJSON, authenticatorData, signature, userHandle? }
///     DOMString authenticatorAttachment;
///     required AuthenticationExtensionsClientOutputsJSON clientExtensionResults;
///     required DOMString type;
/// };
/// ```
public struct AuthenticationResponse: Sendable, Hashable {
    public var credentialId: [UInt8]
    public var clientDataJSON: [UInt8]
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    public var userHandle: [UInt8]?
    public var authenticatorAttachment: String?

    /// The response as `AuthenticationResponseJSON` (UTF-8, keys sorted).
    public var json: [UInt8] {
        var response: [String: JSONValue] = [
            "clientDataJSON": .string(ClientEncoding.base64url(clientDataJSON)),
            "authenticatorData": .string(ClientEncoding.base64url(authenticatorData)),
            "signature": .string(ClientEncoding.base64url(signature)),
        ]
        if let userHandle { response["userHandle"] = .string(ClientEncoding.base64url(userHandle)) }
        var top: [String: JSONValue] = [
            "id": .string(ClientEncoding.base64url(credentialId)),
            "rawId": .string(ClientEncoding.base64url(credentialId)),
            "type": .string("public-key"),
            "response": .object(response),
            "clientExtensionResults": .object([:]),
        ]
        if let authenticatorAttachment { top["authenticatorAttachment"] = .string(authenticatorAttachment) }
        return JSONValue.object(top).encoded()
    }
}
