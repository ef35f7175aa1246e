import Foundation

/// The envelope `PublicKeyCredential.toJSON()` returns (W3C WebAuthn Level 3 §5.1.8), shared by
/// ``RegistrationResponseJSON`` (after `navigator.credentials.create()`) and ``AuthenticationResponseJSON``
/// (after `navigator.credentials.get()`); only the `response` member differs.
/// ```webidl
/// dictionary RegistrationResponseJSON {            // AuthenticationResponseJSON: the same members, with
///     required DOMString id;                       //   required AuthenticatorAssertionResponseJSON response;
///     required Base64URLString rawId;
///     required AuthenticatorAttestationResponseJSON response;
///     DOMString authenticatorAttachment;
///     required AuthenticationExtensionsClientOutputsJSON clientExtensionResults;
///     required DOMString type;
/// };
/// ```
/// ``decode(_:)`` checks the envelope: `type` is `public-key`, and `id` is the unpadded base64url form of
/// `rawId`. That `rawId` equals the credential ID inside the authenticator data is checked by the ceremony.
public struct PublicKeyCredentialJSON<Response: Sendable & Hashable & Codable>: Sendable, Hashable, Codable {
    public var id: String
    public var rawId: Base64URLBytes
    public var response: Response
    public var authenticatorAttachment: AuthenticatorAttachment?
    public var clientExtensionResults: AuthenticationExtensionsClientOutputsJSON
    public var type: String

    public init(
        id: String, rawId: [UInt8], response: Response,
        authenticatorAttachment: AuthenticatorAttachment? = nil,
        clientExtensionResults: AuthenticationExtensionsClientOutputsJSON = .init(),
        type: String = PublicKeyCredentialType.publicKey
    ) {
        self.id = id
        self.rawId = Base64URLBytes(rawId)
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
        self.clientExtensionResults = clientExtensionResults
        self.type = type
    }

    enum CodingKeys: String, CodingKey {
        case id, rawId, response, authenticatorAttachment, clientExtensionResults, type
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        rawId = try c.decode(Base64URLBytes.self, forKey: .rawId)
        response = try c.decode(Response.self, forKey: .response)
        authenticatorAttachment = try c.decodeIfPresent(AuthenticatorAttachment.self, forKey: .authenticatorAttachment)
        // Required by Level 3, but Level 2 era serialisations omit it; absent means no outputs.
        clientExtensionResults =
            try c.decodeIfPresent(AuthenticationExtensionsClientOutputsJSON.self, forKey: .clientExtensionResults)
            ?? .init()
        type = try c.decode(String.self, forKey: .type)
    }

    /// Decodes and checks the envelope (see the type's documentation).
    public static func decode(_ json: some Collection<UInt8>) throws(WebAuthnError) -> Self {
        let value = try ResponseDecoding.decode(Self.self, from: json)
        try ResponseDecoding.checkEnvelope(id: value.id, rawId: value.rawId.bytes, type: value.type)
        return value
    }
}

/// What `navigator.credentials.create()` returns, serialised.
public typealias RegistrationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAttestationResponseJSON>

/// What `navigator.credentials.get()` returns, serialised.
public typealias AuthenticationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAssertionResponseJSON>

/// `AuthenticatorAttestationResponseJSON` (§5.1.8).
/// ```webidl
/// dictionary AuthenticatorAttestationResponseJSON {
///     required Base64URLString clientDataJSON;
///     required Base64URLString authenticatorData;
///     required sequence<DOMString> transports;
///     Base64URLString publicKey;
///     required COSEAlgorithmIdentifier publicKeyAlgorithm;
///     required Base64URLString attestationObject;
/// };
/// ```
/// `authenticatorData`, `publicKey` and `publicKeyAlgorithm` are convenience copies of what the attestation object
/// holds; Level 2 era clients omit them, so they are optional here. When present, the ceremony checks that
/// `authenticatorData` and `publicKeyAlgorithm` agree with the attestation object; the attestation object is what
/// is verified and stored.
public struct AuthenticatorAttestationResponseJSON: Sendable, Hashable, Codable {
    public var clientDataJSON: Base64URLBytes
    public var attestationObject: Base64URLBytes
    public var authenticatorData: Base64URLBytes?
    public var transports: [AuthenticatorTransport]?
    public var publicKey: Base64URLBytes?
    public var publicKeyAlgorithm: COSEAlgorithm?

    public init(
        clientDataJSON: [UInt8], attestationObject: [UInt8], authenticatorData: [UInt8]? = nil,
        transports: [AuthenticatorTransport]? = nil, publicKey: [UInt8]? = nil,
        publicKeyAlgorithm: COSEAlgorithm? = nil
    ) {
        self.clientDataJSON = Base64URLBytes(clientDataJSON)
        self.attestationObject = Base64URLBytes(attestationObject)
        self.authenticatorData = authenticatorData.map(Base64URLBytes.init)
        self.transports = transports
        self.publicKey = publicKey.map(Base64URLBytes.init)
        self.publicKeyAlgorithm = publicKeyAlgorithm
    }
}

/// `AuthenticatorAssertionResponseJSON` (§5.1.8).
/// ```webidl
/// dictionary AuthenticatorAssertionResponseJSON {
///     required Base64URLString clientDataJSON;
///     required Base64URLString authenticatorData;
///     required Base64URLString signature;
///     Base64URLString userHandle;
/// };
/// ```
public struct AuthenticatorAssertionResponseJSON: Sendable, Hashable, Codable {
    public var clientDataJSON: Base64URLBytes
    public var authenticatorData: Base64URLBytes
    public var signature: Base64URLBytes
    public var userHandle: Base64URLBytes?

    public init(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]? = nil) {
        self.clientDataJSON = Base64URLBytes(clientDataJSON)
        self.authenticatorData = Base64URLBytes(authenticatorData)
        self.signature = Base64URLBytes(signature)
        self.userHandle = userHandle.map(Base64URLBytes.init)
    }
}

/// The client extension outputs Sesame reads (`AuthenticationExtensionsClientOutputsJSON`, §5.1.8 and §10.1).
/// Other members are ignored.
/// ```webidl
/// partial dictionary AuthenticationExtensionsClientOutputsJSON {
///     boolean appid;                                          // §10.1.1
///     CredentialPropertiesOutput credProps;                   // §10.1.3: { boolean rk; }
///     AuthenticationExtensionsPRFOutputsJSON prf;             // §10.1.4: { boolean enabled; results; }
///     AuthenticationExtensionsLargeBlobOutputsJSON largeBlob; // §10.1.5: { boolean supported; blob; boolean written; }
/// };
/// ```
/// These outputs come from the client, not the authenticator, and are not signed: use them for user experience,
/// never as proof.
public struct AuthenticationExtensionsClientOutputsJSON: Sendable, Hashable, Codable {
    public var appid: Bool?
    public var credProps: CredentialPropertiesOutput?
    public var prf: PRFOutputs?
    public var largeBlob: LargeBlobOutputs?

    public init(
        appid: Bool? = nil, credProps: CredentialPropertiesOutput? = nil, prf: PRFOutputs? = nil,
        largeBlob: LargeBlobOutputs? = nil
    ) {
        self.appid = appid
        self.credProps = credProps
        self.prf = prf
        self.largeBlob = largeBlob
    }

    public struct CredentialPropertiesOutput: Sendable, Hashable, Codable {
        /// Whether the credential is discoverable; nil when the client does not know.
        public var rk: Bool?
        public init(rk: Bool?) { self.rk = rk }
    }

    public struct PRFOutputs: Sendable, Hashable, Codable {
        public var enabled: Bool?
        public var results: AuthenticationExtensionsClientInputsJSON.PRFValues?
        public init(enabled: Bool? = nil, results: AuthenticationExtensionsClientInputsJSON.PRFValues? = nil) {
            self.enabled = enabled
            self.results = results
        }
    }

    public struct LargeBlobOutputs: Sendable, Hashable, Codable {
        public var supported: Bool?
        public var blob: Base64URLBytes?
        public var written: Bool?
        public init(supported: Bool? = nil, blob: [UInt8]? = nil, written: Bool? = nil) {
            self.supported = supported
            self.blob = blob.map(Base64URLBytes.init)
            self.written = written
        }
    }
}

enum ResponseDecoding {
    /// Largest response JSON accepted (attestation objects with certificate chains are a few kilobytes).
    static let maximumLength = 256 * 1024

    static func decode<T: Decodable>(_ type: T.Type, from json: some Collection<UInt8>) throws(WebAuthnError) -> T {
        guard json.count <= maximumLength else {
            throw WebAuthnError(.invalidJSON, detail: "response is longer than \(maximumLength) bytes")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(json))
        } catch let error as WebAuthnError {
            throw error
        } catch let DecodingError.keyNotFound(key, context) {
            throw WebAuthnError(.invalidJSON, detail: "missing member \(path(context.codingPath + [key]))")
        } catch let DecodingError.typeMismatch(_, context) {
            throw WebAuthnError(.invalidJSON, detail: "wrong type for \(path(context.codingPath))")
        } catch let DecodingError.valueNotFound(_, context) {
            throw WebAuthnError(.invalidJSON, detail: "null for \(path(context.codingPath))")
        } catch {
            throw WebAuthnError(.invalidJSON, detail: "not a JSON object of the expected shape")
        }
    }

    static func path(_ keys: [any CodingKey]) -> String { Base64URLBytes.fieldName(keys) }

    static func checkEnvelope(id: String, rawId: [UInt8], type: String) throws(WebAuthnError) {
        guard type == PublicKeyCredentialType.publicKey else {
            throw WebAuthnError(.invalidCredentialType, detail: "type must be public-key")
        }
        let idBytes = try Base64URL.decode(id, field: "id")
        guard idBytes == rawId else {
            throw WebAuthnError(.credentialIdMismatch, detail: "id is not the base64url form of rawId")
        }
    }
}
